"""Claude Code as the model that distils (#67): `claude -p` with the user's own login.

Flags checked against the pinned CLI's `--help` (2.1.331) and proven with it in
tests/integration/test_agent_model_distill.py: the request it sends offers no tools and no MCP
servers, our hooks never run in it, and no transcript of it is kept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from server.agent_facts.claude_code import claude_config_file, claude_dir
from server.learning.agent_models import (
    CliAnswer,
    CliModel,
    Provider,
    error_answer,
    json_object,
    whole_number,
)
from server.learning.llm import LlmRateLimited

CLAUDE_CODE = Provider(
    name="claude-code",
    label="Claude Code",
    company="Anthropic",
    executable="claude",
    default_model="haiku",
    sources=("claude-code",),
)


class ClaudeCodeModel(CliModel):
    """`claude -p --output-format json`: one result object with usage and cost.

    No tools (`--tools ""`), no MCP servers (`--strict-mcp-config` with an empty config), no
    settings files (`--setting-sources ""`: no user hooks, no plugins) and hooks off besides
    (`disableAllHooks`), no session kept (`--no-session-persistence`).
    """

    provider = CLAUDE_CODE
    login_variables = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")

    @classmethod
    def login_files(cls, environ: Mapping[str, str], home: Path) -> list[Path]:
        """Where Claude Code keeps its login on Linux (macOS keeps it in the keychain, and
        its config file, `claude_config_file`, then names the account)."""
        folder = claude_dir(environ, home)
        account = claude_config_file(environ, home)
        try:
            named = "oauthAccount" in json.loads(account.read_text(encoding="utf-8"))
        except (OSError, ValueError, TypeError):
            named = False
        return [folder / ".credentials.json", *([account] if named else [])]

    def argv(self, system: str, model: str, prompt: str) -> list[str]:
        return [
            self.executable,
            "-p",
            "--output-format",
            "json",
            *(["--model", model] if model else []),
            "--tools",
            "",
            "--strict-mcp-config",
            "--mcp-config",
            '{"mcpServers": {}}',
            "--setting-sources",
            "",
            "--settings",
            '{"disableAllHooks": true}',
            "--no-session-persistence",
            "--disable-slash-commands",
            "--system-prompt",
            system,
        ]

    def parse(self, stdout: str) -> CliAnswer:
        data = json_object(stdout, self.provider.label)
        result = data.get("result")
        if data.get("api_error_status") == 429 or data.get("api_error_type") == "rate_limit_error":
            raise LlmRateLimited(f"{self.provider.label} answered: {result}")
        if data.get("is_error") or data.get("subtype") not in (None, "success"):
            code = data.get("api_error_status") or data.get("subtype")
            raise error_answer(self.provider.label, code, result)
        usage = data.get("usage")
        if not isinstance(usage, dict):
            usage = {}
        read_in = [
            whole_number(usage.get(key))
            for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        ]
        cost = data.get("total_cost_usd")
        return CliAnswer(
            text=result if isinstance(result, str) else "",
            tokens_in=sum(n for n in read_in if n is not None) if read_in[0] is not None else None,
            tokens_out=whole_number(usage.get("output_tokens")),
            cost_usd=float(cost) if isinstance(cost, int | float) else None,
        )


MODEL = ClaudeCodeModel
