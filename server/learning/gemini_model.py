"""Gemini CLI as the model that distils (#67): `gemini -p` with the user's own login.

Flags checked against the pinned CLI's `--help` (0.61.0) and its bundled source, and proven with
it in tests/integration/test_agent_model_distill.py:

- `--output-format json`: one object, the answer in `response`, tokens per model in
  `stats.models.*.tokens` (no cost is reported), or an `error` object.
- Tools: a settings file of ours, given as GEMINI_CLI_SYSTEM_SETTINGS_PATH (the layer meant to
  override the user's), allows only a tool that does not exist (`tools.core`), excludes every
  built-in one (`tools.exclude`), turns hooks off (`hooksConfig.enabled`) and lists no MCP
  servers; `--allowed-mcp-server-names` names none and `-e none` loads no extension. KNOWN GAP:
  with 0.61 the request still offers the read-only tools (list/read/grep/glob in the child's
  own folder, web search, topic and plan updates, invoke_agent): the same `tools.core` in the
  user's settings.json removes them all, in the system layer it does not, and the user's own
  settings are not ours to change. No shell, write or MCP tool is offered.
- Our system prompt replaces Gemini CLI's own through GEMINI_SYSTEM_MD (a file written for the
  call); the transcript on stdin (`-p ""` appends nothing to it).
- The model: `flash-lite`, Gemini CLI's alias for its smallest model.

Gemini CLI 0.61 keeps a chat file of every session and has no flag to stop it; the child's
folder is where claude-memory works, and the importer skips every session whose folder it is.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from server.learning.agent_models import CliAnswer, CliModel, Provider, json_object, whole_number
from server.learning.llm import LlmUnavailable

GEMINI = Provider(
    name="gemini",
    label="Gemini CLI",
    company="Google",
    executable="gemini",
    default_model="flash-lite",
    sources=("gemini",),
)

SETTINGS_FILE = "gemini-settings.json"
# A call's system prompt file is left for the CLI to read; later calls remove it after this.
STALE_SECONDS = 3_600
# Gemini CLI's `tools.core` is an allowlist: a name no tool has leaves none; `tools.exclude`
# names its built-in tools (0.61) besides, so a tool the allowlist lets through is still out.
NO_TOOL = "claude-memory-allows-no-tool"
BUILT_IN_TOOLS = (
    "update_topic",
    "list_directory",
    "read_file",
    "read_many_files",
    "grep_search",
    "glob",
    "google_web_search",
    "web_fetch",
    "run_shell_command",
    "write_file",
    "replace",
    "save_memory",
    "write_todos",
    "activate_skill",
    "ask_user",
    "enter_plan_mode",
    "exit_plan_mode",
    "invoke_agent",
)
SETTINGS = {
    "tools": {"core": [NO_TOOL], "exclude": list(BUILT_IN_TOOLS)},
    "hooksConfig": {"enabled": False},
    "mcpServers": {},
}


class GeminiModel(CliModel):
    provider = GEMINI

    def argv(self, system: str, model: str, prompt: str) -> list[str]:
        return [
            self.executable,
            "--output-format",
            "json",
            *(["--model", model] if model else []),
            "--skip-trust",
            "--extensions",
            "none",
            "--allowed-mcp-server-names",
            "none",
            "--prompt",
            "",
        ]

    def prepare(self, folder: Path) -> None:
        """Our settings file; system prompt files of calls long finished are removed."""
        (folder / SETTINGS_FILE).write_text(json.dumps(SETTINGS), encoding="utf-8")
        stale = time.time() - STALE_SECONDS
        for old in folder.glob("system-*.md"):
            if old.stat().st_mtime < stale:
                old.unlink(missing_ok=True)

    def call_environment(self, system: str, folder: Path) -> dict[str, str]:
        descriptor, path = tempfile.mkstemp(prefix="system-", suffix=".md", dir=folder)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(system)
        return {
            "GEMINI_SYSTEM_MD": path,
            "GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(folder / SETTINGS_FILE),
        }

    def parse(self, stdout: str) -> CliAnswer:
        data = json_object(stdout, self.provider.label)
        error = data.get("error")
        if isinstance(error, dict):
            raise LlmUnavailable(
                f"{self.provider.label} answered an error ({error.get('code')}):"
                f" {error.get('message')}"
            )
        response = data.get("response")
        tokens_in = tokens_out = 0
        reported = False
        stats = data.get("stats")
        models = stats.get("models") if isinstance(stats, dict) else None
        for model in (models or {}).values():
            tokens = model.get("tokens") if isinstance(model, dict) else None
            if isinstance(tokens, dict):
                reported = True
                tokens_in += whole_number(tokens.get("prompt")) or 0
                tokens_out += whole_number(tokens.get("candidates")) or 0
        return CliAnswer(
            text=response if isinstance(response, str) else "",
            tokens_in=tokens_in if reported else None,
            tokens_out=tokens_out if reported else None,
        )


MODEL = GeminiModel
