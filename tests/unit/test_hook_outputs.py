"""What the hook client prints for each agent, from the server's answers (server/hooks.py).

Codex rejects any field its output schemas do not list, so every Codex answer is validated
against the schemas Codex 0.169.0 itself carries (tests/fixtures/codex/hook_schemas/, checked
with `jsonschema`), plus the rules its parser adds (codex-rs/hooks/src/engine/output_parser.rs).
The processes, the server and the installed command lines: tests/integration/test_agent_hooks.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from server.agent_facts.every import ABOUT
from server.hooks import MAX_CONTEXT_CHARS, agent_output, events_of

SCHEMAS = Path(__file__).resolve().parents[1] / "fixtures" / "codex" / "hook_schemas"
CONTEXT = "# Memory recall for this prompt\n\n- 2026-04-20 [distilled #7, acme-api] Use pnpm."
LESSON = "Force-pushing rewrote main twice; open a PR instead."
NOTHING: dict[str, Any] = {"additionalContext": "", "memory_ids": []}
STRICT = {
    "additionalContext": f"Lessons from earlier sessions that apply to this call:\n- {LESSON}",
    "permissionDecision": "ask",
    "permissionDecisionReason": LESSON,
    "lesson_ids": [3],
}
WARNING = {**STRICT, "permissionDecision": None, "permissionDecisionReason": None}
CODEX_SCHEMA_FILES = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt-submit",
    "PreToolUse": "pre-tool-use",
}


def codex_valid(event: str, output: dict[str, Any]) -> None:
    schema = json.loads(
        (SCHEMAS / f"{CODEX_SCHEMA_FILES[event]}.command.output.schema.json").read_text()
    )
    jsonschema.Draft7Validator(schema).validate(output)


@pytest.mark.parametrize(("event", "hook_name"), [
    ("session-start", "SessionStart"),
    ("user-prompt-submit", "UserPromptSubmit"),
])  # fmt: skip
def test_codex_context_is_the_nested_shape_its_schema_allows(event: str, hook_name: str) -> None:
    output = agent_output("codex", hook_name, {"additionalContext": CONTEXT, "project": "x"})

    assert output == {
        "hookSpecificOutput": {"hookEventName": hook_name, "additionalContext": CONTEXT}
    }
    codex_valid(hook_name, output)
    assert events_of(ABOUT["codex"])[event][1] == hook_name


def test_codex_gets_nothing_at_all_when_there_is_nothing_to_add() -> None:
    # A bare {"continue": true} is what some clients print; Codex is said to refuse it on
    # SessionStart, and nothing at all is always accepted (output_parser.rs: empty = no output).
    assert agent_output("codex", "SessionStart", NOTHING) is None
    assert agent_output("codex", "UserPromptSubmit", NOTHING) is None
    assert agent_output("codex", "PreToolUse", {**NOTHING, "permissionDecision": None}) is None


def test_codex_warning_lesson_is_context_without_a_decision() -> None:
    output = agent_output("codex", "PreToolUse", WARNING)

    assert output is not None
    codex_valid("PreToolUse", output)
    assert output["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse",
        "additionalContext": WARNING["additionalContext"],
    }


def test_codex_strict_lesson_denies_with_a_reason_because_codex_cannot_ask() -> None:
    output = agent_output("codex", "PreToolUse", STRICT)

    assert output is not None
    codex_valid("PreToolUse", output)
    specific = output["hookSpecificOutput"]
    # output_parser.rs: "ask" is unsupported; "deny" needs a non-empty reason.
    assert specific["permissionDecision"] == "deny"
    assert specific["permissionDecisionReason"].startswith(LESSON)
    assert "tell the user" in specific["permissionDecisionReason"]
    assert "updatedInput" not in specific


def test_codex_context_is_cut_to_the_budget() -> None:
    output = agent_output("codex", "UserPromptSubmit", {"additionalContext": "x" * 50_000})

    assert output is not None
    codex_valid("UserPromptSubmit", output)
    assert len(output["hookSpecificOutput"]["additionalContext"]) == MAX_CONTEXT_CHARS


@pytest.mark.parametrize("hook_name", ["SessionStart", "BeforeAgent"])
def test_gemini_context_is_hook_specific_additional_context(hook_name: str) -> None:
    output = agent_output("gemini", hook_name, {"additionalContext": CONTEXT})

    assert output == {
        "hookSpecificOutput": {"hookEventName": hook_name, "additionalContext": CONTEXT}
    }


def test_gemini_strict_lesson_denies_the_call_with_the_lesson_as_reason() -> None:
    # Gemini's own "ask" hangs a non-interactive run (0.61.0), so the call is stopped instead.
    output = agent_output("gemini", "BeforeTool", STRICT)

    assert output is not None and set(output) == {"decision", "reason"}
    assert output["decision"] == "deny"
    assert output["reason"].startswith(LESSON) and "tell the user" in output["reason"]


def test_gemini_warning_lesson_is_silent_before_the_call_and_told_after_it() -> None:
    # BeforeTool has no context for the model; AfterTool appends it to the call's result.
    assert agent_output("gemini", "BeforeTool", WARNING) is None
    assert agent_output("gemini", "AfterTool", WARNING) == {
        "hookSpecificOutput": {
            "hookEventName": "AfterTool",
            "additionalContext": WARNING["additionalContext"],
        }
    }


def test_gemini_prints_nothing_without_lessons() -> None:
    silent = {"additionalContext": "", "permissionDecision": None, "lesson_ids": []}

    assert agent_output("gemini", "BeforeTool", silent) is None
    assert agent_output("gemini", "AfterTool", silent) is None


def test_claude_code_keeps_its_ask_decision() -> None:
    output = agent_output("claude-code", "PreToolUse", STRICT)

    assert output is not None
    assert output["hookSpecificOutput"]["permissionDecision"] == "ask"
    assert output["hookSpecificOutput"]["permissionDecisionReason"] == LESSON


def test_every_agent_event_asks_one_of_the_hook_routes() -> None:
    routes = {request[0] for agent in ABOUT.values() for request, _ in events_of(agent).values()}

    assert routes == {
        "/api/hooks/session-start",
        "/api/hooks/prompt",
        "/api/hooks/pre-tool",
        "/api/hooks/tool",
        "/api/hooks/session-end",
    }


@pytest.mark.parametrize(("event", "schema"), [
    ("SessionStart", "session-start"),
    ("UserPromptSubmit", "user-prompt-submit"),
    ("PreToolUse", "pre-tool-use"),
    ("PostToolUse", "post-tool-use"),
    ("Stop", "stop"),
    ("SessionEnd", "session-end"),
])  # fmt: skip
def test_codex_payload_fixtures_are_what_codex_sends(event: str, schema: str) -> None:
    payload = json.loads((SCHEMAS.parent / "hooks" / f"{event}.json").read_text())
    input_schema = json.loads((SCHEMAS / f"{schema}.command.input.schema.json").read_text())

    jsonschema.Draft7Validator(input_schema).validate(payload)


# What the hook client keeps out of its process (server/hooks.py imports `typing` only for the
# type checker): each costs milliseconds on every hook of every prompt.
SLOW_IMPORTS = ("typing", "pathlib")


@pytest.mark.parametrize("agent", sorted(ABOUT))
def test_the_hook_client_loads_no_slow_module_for_any_agent(agent: str) -> None:
    """The hook client as the agents run it (`python -I -S`), reading one agent's facts."""
    import subprocess
    import sys

    repository = Path(__file__).resolve().parents[2]
    probe = (
        f"import sys; sys.path.append({str(repository)!r}); import server.hooks as h;"
        f" assert h.about({agent!r}) is not None;"
        f" print([m for m in {SLOW_IMPORTS!r} if m in sys.modules])"
    )
    ran = subprocess.run(
        [sys.executable, "-I", "-S", "-c", probe], capture_output=True, text=True, check=True
    )

    assert ran.stdout.strip() == "[]"
