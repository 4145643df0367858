"""Codex as the model that distils (#67): `codex exec --json` with the user's own login.

Flags checked against the pinned CLI's `codex exec --help` (0.169.0) and proven with it in
tests/integration/test_agent_model_distill.py:

- `--ephemeral`: no session file is written; `--ignore-user-config`, `--ignore-rules`: none of
  the user's config.toml (so none of their MCP servers, hooks or profiles) or exec rules;
  `-c mcp_servers={}` besides; `-s read-only`.
- Tools off: the shell and exec tools, image viewing, web search, sleep, sub-agents and goals
  are turned off with `-c features.*`/`web_search`, and no MCP server is configured. KNOWN GAP,
  seen in the request the model receives (tests/integration/test_agent_model_distill.py): with
  a model Codex 0.169's catalogue knows (its default among them) it still offers, in an
  `additional_tools` input item, code mode's `exec`/`wait` (JavaScript in an isolate with
  "no Node, no file system, no network" and, the shell being off, no nested tool to call),
  `request_user_input`/`request_user_input_async` (nobody to ask in `exec`) and the
  `collaboration` tools that start sub-agents with those same tools; no `features.*` setting
  removes them. With a model it does not know, only `request_user_input` is left.
- Our system prompt goes as `developer_instructions` (after Codex's own base instructions,
  which `exec` always sends); the transcript on stdin (`-`).
- The model: the CLI's own default unless CLAUDE_MEMORY_LLM_MODEL names one, with low reasoning
  effort; Codex names its models by codename, and none is documented as its cheapest.

Its `--json` output is JSON lines: the answer is the last `item.completed` of type
`agent_message`, the tokens are `turn.completed`'s `usage` (no cost is reported); a failed turn
is `turn.failed` or an `error` event.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from server.agent_facts.codex import codex_home
from server.learning.agent_models import (
    CliAnswer,
    CliModel,
    Provider,
    answer_or_error,
    json_events,
    whole_number,
)

CODEX = Provider(
    name="codex",
    label="Codex",
    company="OpenAI",
    executable="codex",
    default_model=None,
    sources=("codex",),
)

TOOLS_OFF = (
    "features.shell_tool=false",
    "features.unified_exec=false",
    "features.view_image=false",
    'web_search="disabled"',
    "features.multi_agent=false",
    "features.goals=false",
    "features.sleep_tool=false",
    "features.default_mode_request_user_input=false",
)


class CodexModel(CliModel):
    provider = CODEX
    login_variables = ("CODEX_API_KEY",)

    @classmethod
    def login_files(cls, environ: Mapping[str, str], home: Path) -> list[Path]:
        """`auth.json`, which `codex login` writes (ChatGPT sign-in or API key alike)."""
        return [codex_home(environ, home) / "auth.json"]

    def argv(self, system: str, model: str, prompt: str) -> list[str]:
        settings = [
            "mcp_servers={}",
            *TOOLS_OFF,
            'model_reasoning_effort="low"',
            f"developer_instructions={json.dumps(system)}",
        ]
        return [
            self.executable,
            "exec",
            "--json",
            "--ephemeral",
            "--skip-git-repo-check",
            "--ignore-user-config",
            "--ignore-rules",
            "--sandbox",
            "read-only",
            *(["--model", model] if model else []),
            *[part for setting in settings for part in ("-c", setting)],
            "-",
        ]

    def parse(self, stdout: str) -> CliAnswer:
        text = ""
        usage: dict[str, object] = {}
        errors = []
        for event in json_events(stdout):
            kind = event.get("type")
            item = event.get("item")
            if kind == "item.completed" and isinstance(item, dict):
                if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                    text = item["text"]
            elif kind == "turn.completed" and isinstance(event.get("usage"), dict):
                usage = event["usage"]
            elif kind == "turn.failed":
                error = event.get("error")
                errors.append(str(error.get("message") if isinstance(error, dict) else error))
            elif kind == "error" and not str(event.get("message", "")).startswith("Reconnecting"):
                errors.append(str(event.get("message")))
        answer = CliAnswer(
            text=text,
            tokens_in=whole_number(usage.get("input_tokens")),
            tokens_out=whole_number(usage.get("output_tokens")),
        )
        return answer_or_error(answer, errors, self.provider.label)


MODEL = CodexModel
