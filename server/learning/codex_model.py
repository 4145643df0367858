"""Codex as the model that distils (#67): `codex exec --json` with the user's own login.

Flags checked against the pinned CLI's `codex exec --help` (0.169.0) and proven with it in
tests/integration/test_agent_model_distill.py:

- `--ephemeral`: no session file is written; `--ignore-user-config`, `--ignore-rules`: none of
  the user's config.toml (so none of their MCP servers, hooks or profiles) or exec rules;
  `-c mcp_servers={}` besides; `-s read-only`.
- No tools: Codex 0.169's model catalogue outranks its settings. An entry's `tool_mode`
  ("code_mode_only": code mode's `exec`/`wait`, sent in an `additional_tools` input item),
  `multi_agent_version` (the `collaboration` sub-agent tools), `experimental_supported_tools`
  (`clock`, `request_user_input_async`) and `apply_patch_tool_type` (`apply_patch`) each win
  over any `features.*` flag (openai/codex: codex-rs core/src/tools/mod.rs
  `effective_tool_mode`; measured: `features.code_mode=false` changes nothing). So each run
  first reads the catalogue this CLI holds (`codex debug models`), writes it to the child's
  folder with those four fields cleared, and points `model_catalog_json` at it: the same
  models and default, no tools chosen by the catalogue.
  The settings then turn off the rest: the shell and exec tools, image viewing, web search,
  sleep, goals, sub-agents (`agents.enabled=false`, which also holds for a model the
  catalogue does not know) and `request_user_input`
  (`tools.experimental_request_user_input.enabled`), as Codex's own tool-less "temporary
  structured request" does (codex-rs tui/src/temporary_structured_request.rs). The request
  then offers the model no tool at all (proven with the real CLI in
  tests/integration/test_agent_model_distill.py). A Codex whose catalogue cannot be read
  (one without `debug models`) is not run: the child would have tools.
- Codex's base instructions (a coding agent's, about tools it no longer has) are replaced by
  one line (`model_instructions_file`): with no tool to offer, 0.169 sends them twice, about
  5,500 tokens each.
- Our system prompt goes as `developer_instructions`; the transcript on stdin (`-`).
- The model: the CLI's own default unless CLAUDE_MEMORY_LLM_MODEL names one, with low reasoning
  effort; Codex names its models by codename, and none is documented as its cheapest.

Its `--json` output is JSON lines: the answer is the last `item.completed` of type
`agent_message`, the tokens are `turn.completed`'s `usage` (no cost is reported); a failed turn
is `turn.failed` or an `error` event.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from server.agent_facts.codex import codex_home
from server.learning.agent_models import (
    MAX_ERROR_CHARS,
    CliAnswer,
    CliModel,
    Provider,
    answer_or_error,
    json_events,
    whole_number,
)
from server.learning.child import child_folder
from server.learning.llm import LlmRequestError, LlmUnavailable

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
    "features.multi_agent_v2=false",
    "agents.enabled=false",
    "features.goals=false",
    "features.sleep_tool=false",
    "features.default_mode_request_user_input=false",
    "tools.experimental_request_user_input.enabled=false",
)
# The catalogue fields that choose tools whatever the settings say, as the child gets them.
CATALOGUE_TOOLS_OFF: dict[str, object] = {
    "tool_mode": "direct",
    "multi_agent_version": None,
    "experimental_supported_tools": [],
    "apply_patch_tool_type": None,
}
CATALOGUE_FILE = "codex-models.json"
INSTRUCTIONS_FILE = "codex-instructions.md"
INSTRUCTIONS = "Do what the developer instructions ask; you have no tools.\n"


def without_tools(catalogue: object) -> dict[str, Any]:
    """Codex's model catalogue with every entry's tool choices cleared; ValueError when it is
    not one (no `models` list of objects)."""
    if not isinstance(catalogue, dict):
        raise ValueError("not a JSON object")
    entries = catalogue.get("models")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ValueError("no `models` list")
    return {**catalogue, "models": [{**entry, **CATALOGUE_TOOLS_OFF} for entry in entries]}


def unreadable(why: str) -> LlmUnavailable:
    return LlmUnavailable(
        f"Codex's model catalogue (`codex debug models`) could not be read ({why}), so its"
        " tools could not be turned off; update Codex or choose another provider with"
        " `claude-memory llm use`"
    )


class CodexModel(CliModel):
    provider = CODEX
    login_variables = ("CODEX_API_KEY",)

    def __init__(self, home: Path, **options: Any) -> None:
        super().__init__(home, **options)
        self._catalogue_written = False
        self._catalogue_lock = asyncio.Lock()

    async def complete_json(
        self, messages: list[dict[str, str]], *, model: str, max_tokens: int | None = None
    ) -> str:
        """One run, after (once per instance) the catalogue without tools is written."""
        async with self._catalogue_lock:
            if not self._catalogue_written:
                await self.write_catalogue()
                self._catalogue_written = True
        return await super().complete_json(messages, model=model, max_tokens=max_tokens)

    async def write_catalogue(self) -> None:
        """`codex debug models` with the tool choices cleared, and our one-line base
        instructions, into the child's folder; LlmUnavailable when the catalogue can't be
        read, so that no child runs with the catalogue's tools."""
        folder = child_folder(self.home)
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            process = await asyncio.create_subprocess_exec(
                self.located(), "debug", "models",
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=folder,
                env=self.child_environment(),
                start_new_session=True,
            )  # fmt: skip
        except OSError as exc:
            raise LlmRequestError(f"cannot run {self.executable}: {exc}") from exc
        try:
            out, err = await asyncio.wait_for(process.communicate(), self.timeout)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise unreadable(f"no answer within {self.timeout:g} s") from None
        try:
            catalogue = without_tools(json.loads(out))
        except ValueError as exc:
            said = " ".join(err.decode(errors="replace").split())[-MAX_ERROR_CHARS:]
            raise unreadable(f"exit {process.returncode}: {exc}; {said}") from exc
        (folder / CATALOGUE_FILE).write_text(json.dumps(catalogue))
        (folder / INSTRUCTIONS_FILE).write_text(INSTRUCTIONS)

    @classmethod
    def login_files(cls, environ: Mapping[str, str], home: Path) -> list[Path]:
        """`auth.json`, which `codex login` writes (ChatGPT sign-in or API key alike)."""
        return [codex_home(environ, home) / "auth.json"]

    def argv(self, system: str, model: str, prompt: str) -> list[str]:
        folder = child_folder(self.home)
        settings = [
            "mcp_servers={}",
            f"model_catalog_json={json.dumps(str(folder / CATALOGUE_FILE))}",
            f"model_instructions_file={json.dumps(str(folder / INSTRUCTIONS_FILE))}",
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
