"""The catalogue Codex's distilling child gets (server/learning/codex_model.py): every model's
tool choices cleared, and no child run when the catalogue cannot be read.

Small scripts stand in for `codex` here; the real pinned CLI offering no tool with this
catalogue: tests/integration/test_agent_model_distill.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from server.learning.child import child_folder
from server.learning.codex_model import (
    CATALOGUE_FILE,
    CATALOGUE_TOOLS_OFF,
    CodexModel,
    without_tools,
)
from server.learning.llm import LlmUnavailable

ENTRY = {
    "slug": "gpt-6.1-sol",
    "base_instructions": "You are Codex.",
    "tool_mode": "code_mode_only",
    "multi_agent_version": "v2",
    "experimental_supported_tools": ["clock"],
    "apply_patch_tool_type": "freeform",
    "shell_type": "unified_exec",
}
MESSAGES = [{"role": "system", "content": "Distil."}, {"role": "user", "content": "hello"}]


def codex_script(folder: Path, debug_models: str) -> dict[str, str]:
    """A PATH whose `codex` records each command line in `ran`, answers `debug models` with
    `debug_models` (a shell snippet) and `exec` with one agent message, `{}`."""
    folder.mkdir()
    script = folder / "codex"
    answer = json.dumps({"type": "item.completed", "item": {"type": "agent_message", "text": "{}"}})
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> "{folder / "ran"}"\n'
        f'if [ "$1" = debug ] && [ "$2" = models ]; then {debug_models}; fi\n'
        f"echo '{answer}'\n"
    )
    script.chmod(0o755)
    return {"PATH": f"{folder}:/usr/bin:/bin"}


def test_every_entry_loses_its_tool_choices_and_keeps_the_rest() -> None:
    catalogue = {"models": [ENTRY, {**ENTRY, "slug": "gpt-5.5", "tool_mode": None}]}

    cleared = without_tools(catalogue)

    assert [m["slug"] for m in cleared["models"]] == ["gpt-6.1-sol", "gpt-5.5"]
    for entry in cleared["models"]:
        assert {key: entry[key] for key in CATALOGUE_TOOLS_OFF} == CATALOGUE_TOOLS_OFF
        assert entry["base_instructions"] == "You are Codex."
        assert entry["shell_type"] == "unified_exec"
    assert catalogue["models"][0]["tool_mode"] == "code_mode_only"  # the input is left alone


@pytest.mark.parametrize("catalogue", [[], {"models": "none"}, {"models": [1]}, {}])
def test_anything_but_a_catalogue_is_refused(catalogue: object) -> None:
    with pytest.raises(ValueError):
        without_tools(catalogue)


async def test_the_catalogue_is_written_once_and_named_on_the_command_line(
    tmp_path: Path,
) -> None:
    printed = json.dumps({"models": [ENTRY]})
    env = codex_script(tmp_path / "bin", f"echo '{printed}'; exit 0")
    cli = CodexModel(tmp_path / "data", timeout=30, environ=env)

    answers = [await cli.complete_json(MESSAGES, model="") for _ in range(2)]
    written = json.loads((child_folder(tmp_path / "data") / CATALOGUE_FILE).read_text())

    assert written == without_tools({"models": [ENTRY]})
    ran = (tmp_path / "bin" / "ran").read_text().splitlines()
    assert answers == ["{}", "{}"]
    assert [line.split()[0] for line in ran] == ["debug", "exec", "exec"]  # read once a run
    assert (
        f"model_catalog_json={json.dumps(str(child_folder(tmp_path / 'data') / CATALOGUE_FILE))}"
        in ran[1]
    )


async def test_a_codex_without_a_readable_catalogue_is_never_run(tmp_path: Path) -> None:
    """As an older Codex answers an unknown subcommand: a usage error, no JSON."""
    env = codex_script(
        tmp_path / "bin", "echo \"error: unrecognized subcommand 'debug'\" >&2; exit 2"
    )
    cli = CodexModel(tmp_path / "data", timeout=30, environ=env)

    with pytest.raises(LlmUnavailable, match=r"could not be read.*unrecognized subcommand"):
        await cli.complete_json(MESSAGES, model="")

    assert (tmp_path / "bin" / "ran").read_text() == "debug models\n"  # and no `exec`
    assert cli.usage.calls == 0
