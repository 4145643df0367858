"""What the transcript reader gives the tool-call journal: prompts, their calls and outcomes.

Fixture transcripts (shared/fixtures/claude-code, see its README) cover 2.1 files with
`promptId`, a 2.0 file without, sub-agent files, a rejection, failed runs, a 53 KB output and a
spilled one; small synthetic files cover what the fixtures lack.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from server.core.models.journal import ERROR_CHARS, OUTPUT_PREVIEW_CHARS, PROMPT_CHARS
from server.ingest.claude_code import read_transcript
from tests.fixture_sessions import (
    S1_FILE,
    S2_AGENT,
    S2_FILE,
    S3_FILE,
    S4_AGENT,
    S4_FILE,
)

NPM_INSTALL = "toolu_01UPPmEQJCxAscq7E4UDwbGN"  # S1 line 11, rejected on line 12


def test_prompts_are_keyed_by_their_prompt_id() -> None:
    prompts = read_transcript(S1_FILE).prompts
    assert [(p.key, p.uuid) for p in prompts] == [
        (line(S1_FILE, n)["promptId"], line(S1_FILE, n)["uuid"]) for n in (3, 15, 41, 45)
    ]
    assert prompts[1].text.startswith("no, don't use npm, this repo uses pnpm")
    assert {p.session_id for p in prompts} == {S1_FILE.stem}
    assert all(p.timestamp is not None and p.agent_id is None for p in prompts)


def test_prompts_are_keyed_by_uuid_in_transcripts_without_prompt_ids() -> None:
    keys = [p.key for p in read_transcript(S4_FILE).prompts]
    assert keys == [line(S4_FILE, 14)["uuid"], line(S4_FILE, 23)["uuid"]]


def test_only_human_prompts_become_prompts() -> None:
    # S3: /clear residue, hook context, bash mode; S2: queued copy and compaction summary.
    assert [p.uuid for p in read_transcript(S3_FILE).prompts] == [
        line(S3_FILE, n)["uuid"] for n in (8, 13, 19, 23, 37, 42)
    ]
    assert [p.uuid for p in read_transcript(S2_FILE).prompts] == [
        line(S2_FILE, n)["uuid"] for n in (4, 16, 34)
    ]


def test_sub_agent_files_yield_no_prompts_and_calls_without_one() -> None:
    for path in (S2_AGENT, S4_AGENT):
        chunk = read_transcript(path)
        assert chunk.prompts == []
        assert chunk.events
        assert {e.prompt_key for e in chunk.events} == {None}


def test_tool_calls_are_linked_to_the_prompt_they_followed() -> None:
    events = read_transcript(S1_FILE).events
    keys = [e.prompt_key for e in events]
    first, npm, commit, after_rule = (line(S1_FILE, n)["promptId"] for n in (3, 15, 41, 45))
    assert keys == [first] * 3 + [npm] * 9 + [commit] + [after_rule] * 2
    s4 = [(e.tool, e.prompt_key) for e in read_transcript(S4_FILE).events]
    # The /init command's calls come before any prompt; later calls follow line 14.
    assert s4[:3] == [("Task", None), ("Write", None), ("TodoWrite", line(S4_FILE, 14)["uuid"])]


def test_a_rejected_call_fails_with_the_denial_as_its_error() -> None:
    (rejected,) = [e for e in read_transcript(S1_FILE).events if e.tool_use_id == NPM_INSTALL]
    assert rejected.success is False
    assert rejected.error is not None
    assert rejected.error.startswith("The user doesn't want to proceed with this tool use.")


def test_a_failed_run_carries_its_output_as_a_bounded_error() -> None:
    failed = [e for e in read_transcript(S1_FILE).events if e.success is False]
    assert [e.target for e in failed][1] == "pnpm test -- orders"
    for event in failed:
        assert event.error is not None and len(event.error) <= ERROR_CHARS
        assert event.output_preview is None  # its output is the error
    assert failed[1].error is not None and failed[1].error.startswith("Exit code 1\n")
    assert len(failed[1].error) == ERROR_CHARS and failed[1].error.endswith("…")


def test_successful_calls_have_a_bounded_preview_and_no_error() -> None:
    succeeded = [e for e in read_transcript(S1_FILE).events if e.success]
    assert {e.error for e in succeeded} == {None}
    assert all(e.output_preview for e in succeeded)
    assert max(len(e.output_preview or "") for e in succeeded) <= OUTPUT_PREVIEW_CHARS


def test_output_previews_are_cut_and_cleaned() -> None:
    events = read_transcript(S2_FILE).events
    logs = next(e for e in events if e.target and "docker compose logs" in e.target)
    assert logs.output_preview is not None
    assert len(logs.output_preview) == OUTPUT_PREVIEW_CHARS
    assert logs.output_preview.endswith("…")
    spilled = next(e for e in events if e.target and e.target.startswith("pnpm db:up"))
    assert spilled.output_preview is not None
    assert spilled.output_preview.startswith("> acme-api@0.4.0 db:up")  # the spill's preview
    # Read results lose their line numbers, in 2.1 (`1\t`) and 2.0 (`     1→`) form.
    s1_read = read_transcript(S1_FILE).events[0].output_preview
    assert s1_read is not None and s1_read.startswith(
        'import type { FastifyInstance } from "fastify";'
    )
    old_read = read_transcript(S4_AGENT).events[1].output_preview
    assert old_read is not None and old_read.startswith('{\n"name": "acme-web-ui",')


def test_results_read_in_a_later_chunk_carry_the_prompt_key_of_their_line() -> None:
    late = read_transcript(S1_FILE, offset_of_line(S1_FILE, 12)).late_results[NPM_INSTALL]
    assert late.success is False
    assert late.prompt_key == line(S1_FILE, 12)["promptId"]
    assert late.error is not None and late.error.startswith("The user doesn't want to")
    # Calls read without their prompt (line 3) are linked by their result lines.
    reads = read_transcript(S1_FILE, offset_of_line(S1_FILE, 6)).events[:2]
    assert [e.prompt_key for e in reads] == [line(S1_FILE, 3)["promptId"]] * 2


def test_reading_in_two_chunks_yields_the_same_prompts_as_one_read(tmp_path: Path) -> None:
    cut = offset_of_line(S1_FILE, 30)
    partial = tmp_path / S1_FILE.name
    partial.write_bytes(S1_FILE.read_bytes()[:cut])
    first, rest = read_transcript(partial), read_transcript(S1_FILE, cut)
    assert first.prompts + rest.prompts == read_transcript(S1_FILE).prompts


def test_tool_use_error_wrapper_is_stripped_from_the_error(tmp_path: Path) -> None:
    message = "File has not been read yet. Read it first before writing to it."
    path = write(
        tmp_path,
        prompt("u1", "edit the readme please, it has a typo in the title", prompt_id="p1"),
        call("a1", "t1", "Edit", {"file_path": "/r/README.md"}),
        result(
            "r1",
            "t1",
            f"<tool_use_error>{message}</tool_use_error>",
            is_error=True,
            prompt_id="p1",
            structured=f"Error: {message}",
        ),
    )
    (event,) = read_transcript(path).events
    assert (event.success, event.error, event.output_preview) == (False, message, None)
    assert event.prompt_key == "p1"


def test_an_interrupted_bash_run_is_a_failure_with_its_partial_output(tmp_path: Path) -> None:
    partial = "step 1 ok\n\n\nstep 2 …"
    path = write(
        tmp_path,
        prompt("u1", "run the slow migration script against the local database"),
        call("a1", "t1", "Bash", {"command": "./migrate.sh"}),
        result(
            "r1",
            "t1",
            partial,
            structured={"stdout": partial, "stderr": "", "interrupted": True, "isImage": False},
        ),
    )
    (event,) = read_transcript(path).events
    assert (event.success, event.error) == (False, "interrupted")
    assert event.output_preview == "step 1 ok\nstep 2 …"
    assert event.prompt_key == "u1"  # no promptId: the prompt's uuid


def test_an_error_string_as_structured_result_is_a_failure(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        call("a1", "t1", "WebFetch", {"url": "https://example.invalid"}),
        result("r1", "t1", "", structured="Error: getaddrinfo ENOTFOUND example.invalid"),
    )
    (event,) = read_transcript(path).events
    assert event.success is False
    assert event.error == "Error: getaddrinfo ENOTFOUND example.invalid"
    assert event.output_preview is None


def test_the_result_lines_prompt_id_overrides_the_current_prompt(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        prompt("u1", "first prompt, typed before the call was made", prompt_id="p1"),
        call("a1", "t1", "Bash", {"command": "ls"}),
        result("r1", "t1", "README.md", prompt_id="p2"),
    )
    (event,) = read_transcript(path).events
    assert (event.prompt_key, event.success, event.output_preview) == ("p2", True, "README.md")


def test_structured_result_is_ignored_on_a_line_with_several_results(tmp_path: Path) -> None:
    both = result("r1", "t1", "ok", structured="User rejected tool use")
    both["message"]["content"].append({"type": "tool_result", "tool_use_id": "t2", "content": "ok"})
    path = write(
        tmp_path,
        call("a1", "t1", "Read", {"file_path": "/a"}),
        call("a2", "t2", "Read", {"file_path": "/b"}),
        both,
    )
    assert [e.success for e in read_transcript(path).events] == [True, True]


def test_agent_usage_trailer_is_left_out_of_the_preview(tmp_path: Path) -> None:
    report = [
        {"type": "text", "text": "Found two call sites."},
        {"type": "text", "text": "agentId: a1b2 (for resuming)\n<usage>total_tokens: 9</usage>"},
    ]
    path = write(
        tmp_path,
        call("a1", "t1", "Agent", {"prompt": "find call sites"}),
        result("r1", "t1", report),
    )
    (event,) = read_transcript(path).events
    assert event.output_preview == "Found two call sites."


def test_prompts_are_cut_and_kept_once_per_key(tmp_path: Path) -> None:
    long = "please " + "x" * (PROMPT_CHARS * 2)
    path = write(
        tmp_path,
        prompt("u1", long, prompt_id="p1"),
        prompt("u2", "the same prompt written again by a resumed session", prompt_id="p1"),
    )
    (kept,) = read_transcript(path).prompts
    assert kept.uuid == "u1"
    assert len(kept.text) == PROMPT_CHARS
    assert kept.text.startswith("please xxx")


# --- helpers ---------------------------------------------------------------------------------


def line(path: Path, number: int) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(path.read_bytes().split(b"\n")[number - 1])
    return record


def offset_of_line(path: Path, number: int) -> int:
    return sum(len(text) + 1 for text in path.read_bytes().split(b"\n")[: number - 1])


def envelope(kind: str, uuid: str, content: object, **extra: object) -> dict[str, Any]:
    return {
        "type": kind,
        "uuid": uuid,
        "sessionId": "s-1",
        "cwd": "/tmp/p",
        "timestamp": "2026-04-01T09:00:00.000Z",
        "message": {"id": f"m-{uuid}", "role": kind, "content": content},
        **extra,
    }


def prompt(uuid: str, text: str, prompt_id: str | None = None) -> dict[str, Any]:
    return envelope("user", uuid, text, **({"promptId": prompt_id} if prompt_id else {}))


def call(uuid: str, tool_use_id: str, tool: str, tool_input: dict[str, str]) -> dict[str, Any]:
    block = {"type": "tool_use", "id": tool_use_id, "name": tool, "input": tool_input}
    return envelope("assistant", uuid, [block])


def result(
    uuid: str,
    tool_use_id: str,
    content: object,
    *,
    is_error: bool | None = None,
    prompt_id: str | None = None,
    structured: object = None,
) -> dict[str, Any]:
    block: dict[str, object] = {"type": "tool_result", "tool_use_id": tool_use_id}
    block["content"] = content
    if is_error is not None:
        block["is_error"] = is_error
    extra: dict[str, object] = {}
    if prompt_id:
        extra["promptId"] = prompt_id
    if structured is not None:
        extra["toolUseResult"] = structured
    return envelope("user", uuid, [block], **extra)


def write(tmp_path: Path, *records: dict[str, Any]) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return path
