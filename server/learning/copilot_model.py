"""GitHub Copilot CLI as the model that distils (#67): `copilot -p` with the user's own login.

Flags from the pinned CLI's `copilot --help` (1.0.102), proven with it in
tests/integration/test_agent_model_distill.py: Copilot CLI takes a model of the user's own
(`COPILOT_PROVIDER_BASE_URL`, "BYOK"), so the real CLI, with exactly these arguments, talks to
a local stand-in of the Messages API there, and the test reads what it was sent.

- The prompt is an argument (`-p`): Copilot reads no prompt from stdin in this mode, so a window
  is kept well under the 128 KiB a single argument may hold (Provider.context_tokens), and our
  system prompt leads it.
- No tools: `--available-tools` names one tool that does not exist, so none is available to the
  model, MCP tools included (given empty, as `--available-tools=`, the list is no restriction
  at all: every tool, `bash` and `edit` among them, was offered). No ask_user, no remote, no
  update, no client telemetry, no AGENTS.md or custom instructions.
- No MCP servers: none of the built-in ones (`--disable-builtin-mcps`), and each server of the
  user's mcp-config.json turned off by name for the run (`--disable-mcp-server`).
- Hooks off: the child's folder carries `.github/copilot/settings.json` with `disableAllHooks`
  (user and repository hooks alike), read because the folder is trusted for this one run
  (`--trust-folder`); our hook client does nothing in the child besides.
- The model: the CLI's default; CLAUDE_MEMORY_LLM_MODEL names another (Copilot's plans differ
  in which models cost premium requests).
- Output: JSON lines of Copilot's session events; the answer is the last `assistant.message`
  with content. No token counts or cost are printed, so the receipt's tokens are estimated.
- Copilot keeps its session under ~/.copilot/session-state with the child's folder as its cwd:
  the importer skips it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from server.agent_facts.copilot import copilot_home
from server.learning.agent_models import (
    CliAnswer,
    CliModel,
    Provider,
    answer_or_error,
    json_events,
)
from server.learning.llm import LlmUnavailable

COPILOT = Provider(
    name="copilot",
    label="Copilot CLI",
    company="GitHub (Microsoft)",
    executable="copilot",
    default_model=None,
    sources=("copilot",),
    # The prompt is one command-line argument: at most 128 KiB on Linux.
    context_tokens=40_000,
)


# `--available-tools` is an allowlist: a name no tool has leaves none.
NO_TOOL = "claude-memory-allows-no-tool"
REPOSITORY_SETTINGS = Path(".github") / "copilot" / "settings.json"


class CopilotModel(CliModel):
    provider = COPILOT
    prompt_on_stdin = False
    login_variables = ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")

    @classmethod
    def signed_in(cls, environ: Mapping[str, str], home: Path) -> bool:
        """A token in the environment, or a user named in config.json after `/login` (the
        token itself is in the system keychain)."""
        if super().signed_in(environ, home):
            return True
        try:
            config = json.loads((copilot_home(environ, home) / "config.json").read_text("utf-8"))
        except (OSError, ValueError):
            return False
        users = ("logged_in_users", "last_logged_in_user")
        return isinstance(config, dict) and any(config.get(key) for key in users)

    def argv(self, system: str, model: str, prompt: str) -> list[str]:
        return [
            self.executable,
            "-p",
            f"{system}\n\n{prompt}",
            "--output-format",
            "json",
            *(["--model", model] if model else []),
            f"--available-tools={NO_TOOL}",
            "--disable-builtin-mcps",
            *[f"--disable-mcp-server={name}" for name in self.users_mcp_servers()],
            "--trust-folder",
            "--no-custom-instructions",
            "--no-ask-user",
            "--no-remote",
            "--no-auto-update",
            "--disable-client-telemetry",
        ]

    def users_mcp_servers(self) -> list[str]:
        """The names of the MCP servers in the user's mcp-config.json, to turn off by name."""
        path = copilot_home(self.environ, Path(self.environ.get("HOME") or Path.home()))
        try:
            servers = json.loads((path / "mcp-config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        found = servers.get("mcpServers") if isinstance(servers, dict) else None
        return sorted(found) if isinstance(found, dict) else []

    def prepare(self, folder: Path) -> None:
        """The child's folder as a repository whose settings turn every hook off."""
        settings = folder / REPOSITORY_SETTINGS
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"disableAllHooks": True}), encoding="utf-8")

    def parse(self, stdout: str) -> CliAnswer:
        text = ""
        errors = []
        for event in json_events(stdout):
            if not isinstance(event.get("data"), dict):
                continue
            data = event["data"]
            if event.get("type") == "assistant.message" and isinstance(data.get("content"), str):
                text = data["content"] or text
            elif event.get("type") == "session.error":
                errors.append(str(data.get("message") or data))
        answer = answer_or_error(CliAnswer(text=text), errors, self.provider.label)
        if not text and stdout.strip():
            raise LlmUnavailable(f"{self.provider.label}: {stdout.strip()[-300:]}")
        return answer


MODEL = CopilotModel
