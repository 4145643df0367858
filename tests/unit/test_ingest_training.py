"""Reading transcripts into exchanges and building training records (server/ingest/training.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from server.domain.training import validate_record
from server.ingest.training import Exchange, exchange_record, read_exchanges
from tests.fixture_sessions import S1_FILE, S2_FILE, S3_FILE, S4_FILE, WEB
from tests.transcripts import SessionWriter

LIMITS = {"max_message_chars": 8_000, "max_record_chars": 32_000}


def exchange_at(path: Path, line: int) -> Exchange:
    return next(e for e in read_exchanges(path).exchanges if e.line_number == line)


def build(exchange: Exchange, max_message_chars: int = 8_000) -> dict[str, Any]:
    return exchange_record(
        exchange, cwd="/home/dev/acme-api", max_message_chars=max_message_chars
    ).record


def test_each_human_prompt_starts_an_exchange_and_harness_lines_do_not() -> None:
    found = {path.name[:8]: read_exchanges(path) for path in (S1_FILE, S2_FILE, S3_FILE, S4_FILE)}

    assert {name: [e.line_number for e in s.exchanges] for name, s in found.items()} == {
        "3f6c2a1e": [3, 15, 41, 45],
        "9b2d7e40": [4, 16, 34],  # the compaction summary (21) is no prompt
        "c71e5d08": [8, 13, 19, 23, 37, 42],  # /clear, hook context, bash mode are not
        "5e0a9d3c": [14, 23],  # /model and /init echoes, the isMeta expansion are not
    }
    assert found["c71e5d08"].cwd == "/home/dev/acme-api"
    assert found["5e0a9d3c"].cwd == "/home/dev/work/acme.web_ui"


def test_the_work_a_slash_command_started_belongs_to_no_exchange() -> None:
    calls = [c.name for e in read_exchanges(S4_FILE).exchanges for s in e.steps for c in s.calls]

    assert "Task" not in calls  # the /init run's sub-agent call (line 9)
    assert calls == ["TodoWrite", "Bash", "Write", "Bash"]


def test_interrupted_exchanges_are_marked() -> None:
    interrupted = {
        path.name[:8]: [e.line_number for e in read_exchanges(path).exchanges if e.interrupted]
        for path in (S1_FILE, S2_FILE, S3_FILE, S4_FILE)
    }

    # S1: the rejected `npm install`; S2: the user stopped the staging load test.
    assert interrupted == {"3f6c2a1e": [3], "9b2d7e40": [4], "c71e5d08": [], "5e0a9d3c": []}


def test_an_answer_whose_calls_the_crash_cut_off_has_lost_calls() -> None:
    lost = [e.line_number for e in read_exchanges(S3_FILE).exchanges if e.lost_calls]

    assert lost == [42]


def test_parallel_calls_of_one_message_become_one_assistant_message_with_both() -> None:
    record = build(exchange_at(S1_FILE, 3))
    first = record["messages"][2]

    assert first["content"].startswith("I'll look at the current orders route")
    assert [c["function"]["name"] for c in first["tool_calls"]] == ["Read", "Read"]
    assert [m["role"] for m in record["messages"][3:5]] == ["tool", "tool"]
    answered = {m["tool_call_id"] for m in record["messages"][3:5]}
    assert answered == {c["id"] for c in first["tool_calls"]}


def test_a_full_exchange_becomes_a_valid_record_without_thinking() -> None:
    record = build(exchange_at(S1_FILE, 15))
    line = json.dumps(record, ensure_ascii=False)

    assert validate_record(record, **LIMITS) == []
    assert [m["role"] for m in record["messages"][:2]] == ["system", "user"]
    assert record["messages"][1]["content"].startswith("no, don't use npm")
    assert record["messages"][-1]["content"].startswith("All 3 tests pass.")
    assert "the second query filtered everything out" not in line  # thinking, line 31
    arguments = [
        json.loads(call["function"]["arguments"])
        for message in record["messages"]
        for call in message.get("tool_calls", [])
    ]
    assert arguments[0] == {"command": "pnpm add zod@^3.24", "description": "Add zod with pnpm"}
    assert {t["function"]["name"] for t in record["tools"]} == {"Bash", "Write", "Edit"}


def test_an_exchange_across_a_compaction_keeps_its_steps_before_and_after() -> None:
    record = build(exchange_at(S2_FILE, 16))
    calls = [c["function"]["name"] for m in record["messages"] for c in m.get("tool_calls", [])]

    assert calls == ["Bash", "Write", "Write", "Bash"]
    assert not any(
        "being continued from a previous" in str(m["content"]) for m in record["messages"]
    )
    assert validate_record(record, **LIMITS) == []


def test_a_long_tool_result_is_cut_to_the_message_limit_with_a_marker() -> None:
    built = exchange_record(exchange_at(S2_FILE, 4), cwd=None, max_message_chars=2_000)
    results = [m["content"] for m in built.record["messages"] if m["role"] == "tool"]
    longest = max(results, key=len)

    assert built.results_cut == 1  # the 23 KB `docker compose logs` dump (line 13)
    assert 1_900 < len(longest) <= 2_000
    assert longest.endswith("[... 21,408 more characters cut]")
    assert sorted(len(r) for r in results)[:2] == [354, 700]  # the others stay whole


def test_the_agent_report_is_the_result_and_its_usage_block_is_dropped() -> None:
    record = build(exchange_at(S2_FILE, 4))
    agent_call = record["messages"][2]["tool_calls"][0]
    report = next(
        m["content"] for m in record["messages"] if m.get("tool_call_id") == agent_call["id"]
    )

    assert agent_call["function"]["name"] == "Agent"
    assert "withTransaction" in report
    assert "<usage>" not in report


def test_sub_agent_lines_are_not_exchanges() -> None:
    assert read_exchanges(WEB / "agent-1f2e3d4c.jsonl").exchanges == []


def test_every_text_is_redacted_and_the_replacements_counted(tmp_path: Path) -> None:
    token = "ghp_" + "a1B2c3D4" * 5
    path = (
        SessionWriter("11111111-aaaa-4bbb-8ccc-000000000001")
        .prompt(f"push with my token {token} please")
        .call(
            "toolu_1",
            "Bash",
            {"command": 'export DB_PASSWORD="hunter2-Secret" && git push'},
            message_id="m1",
        )
        .result("toolu_1", "Authorization: Bearer abcdefghijklmnopqrstuvwx12345")
        .say(f"Pushed. (Never paste {token} again.)")
        .write(tmp_path)
    )
    (exchange,) = read_exchanges(path).exchanges

    built = exchange_record(exchange, cwd="/home/dev/demo", max_message_chars=8_000)
    line = json.dumps(built.record)

    assert built.redactions == 4
    for secret in (token, "hunter2-Secret", "abcdefghijklmnopqrstuvwx12345"):
        assert secret not in line
    arguments = json.loads(built.record["messages"][2]["tool_calls"][0]["function"]["arguments"])
    assert arguments == {"command": 'export DB_PASSWORD="[REDACTED:password]" && git push'}
    assert validate_record(built.record, **LIMITS) == []


def test_a_call_whose_result_never_came_makes_an_invalid_record(tmp_path: Path) -> None:
    path = (
        SessionWriter("22222222-aaaa-4bbb-8ccc-000000000002")
        .prompt("run the tests")
        .call("toolu_9", "Bash", {"command": "pnpm test"}, message_id="m1")
        .write(tmp_path)
    )
    (exchange,) = read_exchanges(path).exchanges

    problems = validate_record(build(exchange), **LIMITS)

    assert [p.message for p in problems] == [
        "the record does not end with an assistant answer",
        "call toolu_9 (Bash) has no result",
    ]
