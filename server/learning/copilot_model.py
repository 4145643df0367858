"""GitHub Copilot CLI as the model that distils (#67): `copilot -p` with the user's own login.

Copilot CLI is closed source and cannot be pointed at a local model, so its flags come from the
pinned CLI's `copilot --help` (1.0.102), and tests/integration/test_agent_model_distill.py checks
them twice: the real CLI, offline, accepts exactly these arguments (it stops at login, not at a
usage error), and a stand-in `copilot` on PATH answers in its JSON-lines shape.

- The prompt is an argument (`-p`): Copilot reads no prompt from stdin in this mode, so a window
  is kept well under the 128 KiB a single argument may hold (Provider.context_tokens), and our
  system prompt leads it.
- No tools: `--available-tools=` (an empty list: no tool is visible to the model), no built-in
  MCP servers, no AGENTS.md or custom instructions, no ask_user, no remote, no update, no
  client telemetry. Copilot has no switch for the user's own MCP servers (mcp-config.json); with
  no tool available, none of theirs can be called.
- The model: the CLI's default; CLAUDE_MEMORY_LLM_MODEL names another (Copilot's plans differ
  in which models cost premium requests).
- Output: JSON lines of Copilot's session events; the answer is the last `assistant.message`
  with content. No token counts or cost are printed, so the receipt's tokens are estimated.
- Copilot keeps its session under ~/.copilot/session-state with the child's folder as its cwd:
  the importer skips it.
"""

from __future__ import annotations

import json

from server.learning.agent_models import CliAnswer, CliModel, Provider
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


class CopilotModel(CliModel):
    provider = COPILOT
    prompt_on_stdin = False

    def argv(self, system: str, model: str, prompt: str) -> list[str]:
        return [
            self.executable,
            "-p",
            f"{system}\n\n{prompt}",
            "--output-format",
            "json",
            *(["--model", model] if model else []),
            "--available-tools=",
            "--disable-builtin-mcps",
            "--no-custom-instructions",
            "--no-ask-user",
            "--no-remote",
            "--no-auto-update",
            "--disable-client-telemetry",
        ]

    def parse(self, stdout: str) -> CliAnswer:
        text = ""
        errors = []
        for line in stdout.splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(event, dict) or not isinstance(event.get("data"), dict):
                continue
            data = event["data"]
            if event.get("type") == "assistant.message" and isinstance(data.get("content"), str):
                text = data["content"] or text
            elif event.get("type") == "session.error":
                errors.append(str(data.get("message") or data))
        if errors and not text:
            raise LlmUnavailable(f"{self.provider.label} answered an error: {errors[-1]}")
        if not text and stdout.strip():
            raise LlmUnavailable(f"{self.provider.label}: {stdout.strip()[-300:]}")
        return CliAnswer(text=text)


MODEL = CopilotModel
