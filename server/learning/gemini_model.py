"""Gemini CLI as the model that distils (#67): `gemini -p` with the user's own login.

Flags checked against the pinned CLI's `--help` (0.61.0) and its bundled source, and proven with
it in tests/integration/test_agent_model_distill.py:

- `--output-format json`: one object, the answer in `response`, tokens per model in
  `stats.models.*.tokens` (no cost is reported), or an `error` object.
- No tools: an admin-tier policy of ours (`--admin-policy`, a TOML file in the child's folder)
  denies every tool, built-in or MCP, and a denied tool is not declared to the model; the
  child's folder is also a trusted workspace (GEMINI_CLI_TRUST_WORKSPACE) whose
  `.gemini/settings.json` allows only a built-in tool that does not exist (`tools.core`).
  Proven: the request the model receives declares no tool at all.
- No MCP servers, no extensions: `--allowed-mcp-server-names none`, `-e none`, and no server
  in the workspace settings. Proven: a claude-memory MCP entry in the user's settings is never
  connected to.
- Our hooks off: the workspace settings turn Gemini CLI's hooks off (`hooksConfig.enabled`),
  and our hook client does nothing in the child besides. Proven: hooks installed in the user's
  settings by `connect gemini` never reach the server, though they do in a plain `gemini -p`.
- Why not a settings file given as GEMINI_CLI_SYSTEM_SETTINGS_PATH (the override layer):
  Gemini CLI 0.61 skips it unless it and every folder above it are owned by root and writable
  by nobody else, which a user's data dir never is.
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
from collections.abc import Mapping
from pathlib import Path

from server.agent_facts.gemini import gemini_dir
from server.learning.agent_models import (
    CliAnswer,
    CliModel,
    Provider,
    error_answer,
    json_object,
    whole_number,
)
from server.learning.child import child_folder

GEMINI = Provider(
    name="gemini",
    label="Gemini CLI",
    company="Google",
    executable="gemini",
    default_model="flash-lite",
    sources=("gemini",),
)

# The child's own folder is its workspace: Gemini CLI reads `.gemini/settings.json` there, after
# the user's, when the workspace is trusted (GEMINI_CLI_TRUST_WORKSPACE in its environment;
# `--skip-trust` comes too late for the settings).
WORKSPACE_SETTINGS = Path(".gemini") / "settings.json"
POLICY_FILE = "gemini-no-tools.toml"
# A call's system prompt file is left for the CLI to read; later calls remove it after this.
STALE_SECONDS = 3_600
# `tools.core` is an allowlist of built-in tools: a name no tool has leaves none.
NO_TOOL = "claude-memory-allows-no-tool"
SETTINGS = {
    "tools": {"core": [NO_TOOL]},
    "hooksConfig": {"enabled": False},
    "mcpServers": {},
}
# Denies every tool, built-in or MCP, from the admin tier: the user's own policies (a lower
# tier) cannot allow one back, and a denied tool is not declared to the model at all.
NO_TOOLS_POLICY = """\
[[rule]]
toolName = "*"
decision = "deny"
priority = 999
"""


class GeminiModel(CliModel):
    provider = GEMINI
    login_variables = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI")

    @classmethod
    def login_files(cls, environ: Mapping[str, str], home: Path) -> list[Path]:
        """`oauth_creds.json`, which signing in with Google writes."""
        return [gemini_dir(environ, home) / "oauth_creds.json"]

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
            "--admin-policy",
            str(child_folder(self.home) / POLICY_FILE),
            "--prompt",
            "",
        ]

    def prepare(self, folder: Path) -> None:
        """Our settings and policy files; system prompt files of calls long finished are removed."""
        settings = folder / WORKSPACE_SETTINGS
        settings.parent.mkdir(exist_ok=True)
        settings.write_text(json.dumps(SETTINGS), encoding="utf-8")
        (folder / POLICY_FILE).write_text(NO_TOOLS_POLICY, encoding="utf-8")
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
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        }

    def parse(self, stdout: str) -> CliAnswer:
        data = json_object(stdout, self.provider.label)
        error = data.get("error")
        if isinstance(error, dict):
            raise error_answer(self.provider.label, error.get("code"), error.get("message"))
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
