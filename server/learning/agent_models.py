"""An agent's own CLI as the model the LLM jobs ask (#67): Claude Code, Codex, Gemini, Copilot.

Each provider is its CLI in headless mode, logged in as the user, answering the same
`complete_json` as the OpenAI-compatible ChatClient: the prompt and the parsing of the reply
stay the jobs' own. What this module owns is how the child process runs:

- Redacted first: every message is run through server/core/redact.py before it is written to
  the child's stdin (the system prompt is ours and goes as is).
- No loops: the child gets no tools and no MCP servers, our hooks answer nothing in it
  (CLAUDE_MEMORY_CHILD=1 in its environment, which server/hooks.py honours, besides each CLI's
  own way to skip hooks), and it runs in a folder of its own under the data dir, which the
  importer never imports a session from (server/learning/child.py). Claude Code is also told not to
  keep its session at all.
- Counted: every call adds to `usage` (calls, tokens in and out as the CLI reports them, else
  estimated, and cost where the CLI reports one).
- A rate-limit or quota answer raises LlmRateLimited with what the CLI said about when it
  resets; anything else the CLI prints on failure becomes an LlmError that quotes it.

Why the `claude` CLI and not the Claude Agent SDK: the SDK drives this same CLI as a child
process, adds a dependency tree and a bundled copy of the CLI to the install for nothing
this module needs, and in its streaming-input mode the CLI also asks the model for a session
title: two requests a call (figures in docs/learning.md).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import math
import os
import re
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from server.core.redact import redact
from server.learning.child import CHILD_MARKER, child_folder
from server.learning.distill_core import CHARS_PER_TOKEN, estimate_tokens
from server.learning.llm import LlmError, LlmRateLimited, LlmRequestError, LlmUnavailable

MAX_ERROR_CHARS = 300

_RATE_LIMITED = re.compile(
    r"rate.?limit|usage limit|hit your limit|quota|too many requests|\b429\b|resource.exhausted",
    re.I,
)
# When the answer says when the limit resets, as in "usage limit reached, resets 3pm".
_RESETS = re.compile(r"\bresets?\s+((?:at|in|on)\s+)?([^\n.|·\"]{1,40})", re.I)


@dataclass(frozen=True, slots=True)
class Provider:
    """One agent CLI that can distil: what it is called, whose model it is, what it may read."""

    name: str  # the CLAUDE_MEMORY_LLM_PROVIDER value
    label: str
    company: str
    executable: str
    # The model asked for unless LLM_MODEL says otherwise; None: the CLI's own default.
    default_model: str | None
    # The agents (imported sessions' `source`) whose text may go to this provider.
    sources: tuple[str, ...]
    # The context a distill window fills (prompt and reply): large enough that a session is
    # one request as a rule, within the smallest context of the CLI's own models.
    context_tokens: int = 150_000


@dataclass(slots=True)
class Usage:
    """What the calls of one run cost, as far as the CLI says (else estimated)."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float | None = None
    estimated: bool = False  # some token counts are our estimate, not the CLI's
    redactions: int = 0  # secrets replaced in what was sent

    def add(self, answer: CliAnswer, prompt_chars: int) -> None:
        self.calls += 1
        if answer.tokens_in is None or answer.tokens_out is None:
            self.estimated = True
        self.tokens_in += (
            answer.tokens_in
            if answer.tokens_in is not None
            else math.ceil(prompt_chars / CHARS_PER_TOKEN)
        )
        self.tokens_out += (
            answer.tokens_out if answer.tokens_out is not None else estimate_tokens(answer.text)
        )
        if answer.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + answer.cost_usd

    def as_json(self) -> dict[str, object]:
        return {
            "calls": self.calls,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "tokens_estimated": self.estimated,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
            "redactions": self.redactions,
        }


@dataclass(frozen=True, slots=True)
class CliAnswer:
    text: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None


@dataclass(frozen=True, slots=True)
class Prompt:
    """The chat messages as a CLI takes them: a system prompt and one text on stdin."""

    system: str
    text: str
    redactions: int


def as_prompt(messages: list[dict[str, str]]) -> Prompt:
    """The system message apart; the rest, redacted, as one text (labelled turns when the
    conversation has more than one, as a repair request does)."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    rest = [m for m in messages if m["role"] != "system"]
    count = 0
    parts = []
    for message in rest:
        cleaned = redact(message["content"])
        count += cleaned.count
        parts.append((message["role"], cleaned.text))
    if len(parts) == 1:
        text = parts[0][1]
    else:
        text = "\n\n".join(f"[{role.title()}]\n{content}" for role, content in parts)
    return Prompt(system, text, count)


class CliModel:
    """One provider's CLI run once per request; subclasses say how to call it and read it."""

    provider: ClassVar[Provider]

    def __init__(
        self,
        home: Path,
        *,
        timeout: float,
        executable: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.home = home
        self.timeout = timeout
        self.executable = executable or self.provider.executable
        self.environ = dict(os.environ if environ is None else environ)
        self.usage = Usage()

    # Whether the prompt goes on stdin; a CLI that reads it only from its command line gets it
    # in `argv` (and a window small enough for one argument: Provider.context_tokens).
    prompt_on_stdin: ClassVar[bool] = True
    # Signs that the user has signed in to the CLI (`signed_in`): a variable the CLI takes a
    # key or token from, or a file it writes when they log in.
    login_variables: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def login_files(cls, environ: Mapping[str, str], home: Path) -> list[Path]:
        """The files the CLI keeps a login in (none known by default)."""
        return []

    @classmethod
    def signed_in(cls, environ: Mapping[str, str], home: Path) -> bool:
        """Whether the user looks signed in to this CLI, from its files and environment only
        (nothing is run or asked over the network): `llm offers` says so, nothing more."""
        if any(environ.get(variable, "").strip() for variable in cls.login_variables):
            return True
        return any(path.is_file() for path in cls.login_files(environ, home))

    def argv(self, system: str, model: str, prompt: str) -> list[str]:
        """The command line; `prompt` is in it only when the CLI cannot read it on stdin."""
        raise NotImplementedError

    def parse(self, stdout: str) -> CliAnswer:
        """The answer in the CLI's headless output; LlmError when it reports a failure."""
        raise NotImplementedError

    def prepare(self, folder: Path) -> None:
        """Anything the CLI needs in its working folder before a run (nothing by default)."""

    def child_environment(self) -> dict[str, str]:
        env = {k: v for k, v in self.environ.items() if not k.startswith("CLAUDE_MEMORY_")}
        env[CHILD_MARKER] = "1"
        return env

    def call_environment(self, system: str, folder: Path) -> dict[str, str]:
        """More of the child's environment for one call (none by default): for a CLI that
        takes its system prompt from a file."""
        return {}

    def located(self) -> str:
        """The executable's full path; LlmRequestError when it is not installed."""
        found = shutil.which(self.executable, path=self.environ.get("PATH"))
        if found is None:
            raise LlmRequestError(
                f"{self.provider.label}'s CLI (`{self.executable}`) is not on PATH; install it"
                f" and log in, or choose another provider with `claude-memory llm use`"
            )
        return found

    async def complete_json(
        self, messages: list[dict[str, str]], *, model: str, max_tokens: int | None = None
    ) -> str:
        """One run of the CLI: the system prompt on its command line, the rest on stdin."""
        prompt = as_prompt(messages)
        self.usage.redactions += prompt.redactions
        folder = child_folder(self.home)
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.prepare(folder)
        argv = [self.located(), *self.argv(prompt.system, model, prompt.text)[1:]]
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=folder,
                env=self.child_environment() | self.call_environment(prompt.system, folder),
                start_new_session=True,
            )
        except OSError as exc:
            raise LlmRequestError(f"cannot run {self.executable}: {exc}") from exc
        try:
            out, err = await asyncio.wait_for(
                process.communicate(prompt.text.encode() if self.prompt_on_stdin else b""),
                self.timeout,
            )
        except TimeoutError:
            process.kill()
            await process.wait()
            raise LlmUnavailable(
                f"{self.provider.label} did not answer within {self.timeout:g} s;"
                " raise CLAUDE_MEMORY_LLM_TIMEOUT_SECONDS or try again later"
            ) from None
        stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace")
        try:
            answer = self.parse(stdout)
        except LlmError as exc:
            limited = isinstance(exc, LlmRateLimited)
            raise self.failure(f"{exc} {stderr}", process.returncode, limited) from exc
        if process.returncode != 0 and not answer.text:
            raise self.failure(stdout + stderr, process.returncode)
        self.usage.add(answer, len(prompt.system) + len(prompt.text))
        return answer.text

    def failure(self, output: str, code: int | None, limited: bool = False) -> LlmError:
        """The error for a failed run: a rate limit when the CLI or its output says so."""
        said = " ".join(output.split())[-MAX_ERROR_CHARS:]
        if limited or _RATE_LIMITED.search(output):
            found = _RESETS.search(output)
            resumes = " ".join(found.group(0).split()[1:]).strip() if found else ""
            when = (
                f"; it resets {resumes}, and the next run after that goes on"
                if resumes
                else "; the next run tries again"
            )
            return LlmRateLimited(
                f"{self.provider.label} is rate limited or out of quota ({said}){when}."
                " The sessions not yet distilled stay pending.",
                resumes,
            )
        return LlmUnavailable(
            f"{self.provider.label}'s CLI failed (exit {code}): {said or 'no output'}"
        )


def json_object(stdout: str, label: str) -> dict[str, Any]:
    try:
        data = json.loads(stdout)
    except json.JSONDecodeError:
        raise LlmUnavailable(
            f"{label} printed no JSON result: {stdout[-MAX_ERROR_CHARS:]}"
        ) from None
    if not isinstance(data, dict):
        raise LlmUnavailable(f"{label} printed an unexpected result: {stdout[-MAX_ERROR_CHARS:]}")
    return data


def json_events(stdout: str) -> Iterator[dict[str, Any]]:
    """The JSON objects of a CLI's JSON-lines output (Codex's, Copilot's), other lines skipped."""
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict):
            yield event


def error_answer(label: str, code: object, message: object) -> LlmUnavailable:
    """The error for a run whose one JSON result reports a failure (Claude Code's, Gemini
    CLI's), quoting its code and message."""
    return LlmUnavailable(f"{label} answered an error ({code}): {message}")


def answer_or_error(answer: CliAnswer, errors: list[str], label: str) -> CliAnswer:
    """The answer a JSON-lines run gave; LlmUnavailable quoting the last error it reported
    when it gave no text."""
    if errors and not answer.text:
        raise LlmUnavailable(f"{label} answered an error: {errors[-1]}")
    return answer


def whole_number(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def models() -> dict[str, type[CliModel]]:
    """Each agent's model class, by the agent's name: its server/learning/<agent>_model.py,
    for every agent that has one (the agents' one list is server/agent_facts/every.py)."""
    if not _MODELS:
        from server.agent_facts.every import ABOUT

        for about in ABOUT.values():
            stem = about.__name__.rsplit(".", 1)[1]
            try:
                module = importlib.import_module(f"server.learning.{stem}_model")
            except ModuleNotFoundError as exc:
                if exc.name != f"server.learning.{stem}_model":
                    raise
                continue
            model: type[CliModel] = module.MODEL
            _MODELS[model.provider.name] = model
    return _MODELS


_MODELS: dict[str, type[CliModel]] = {}


def provider_of(name: str) -> Provider:
    """The agent provider called `name`; LlmRequestError for a name with none."""
    found = models().get(name)
    if found is None:
        raise LlmRequestError(
            f"CLAUDE_MEMORY_LLM_PROVIDER={name}: no such provider; it is openai or one of"
            f" {', '.join(sorted(models()))}"
        )
    return found.provider


@dataclass(slots=True)
class RunBudget:
    """What one run may send to an agent's model, and what it was refused.

    The caps count sessions and estimated prompt tokens before anything is sent; a session
    that would pass either is left pending for the next run. Sessions of another agent are
    never sent: they wait for a run with their own agent's provider.
    """

    provider: Provider
    max_sessions: int
    max_input_tokens: int
    usage: Usage = field(default_factory=Usage)  # the model's, shared: the run's receipt
    sessions: int = 0
    input_tokens: int = 0
    other_agents: dict[str, int] = field(default_factory=dict)
    deferred: int = 0
    cap: str | None = None
    # Link review (server/learning/distill.py): pairs not shown because their older memory
    # came from no session of this provider's agent or is another user's, and reviews the
    # token cap refused.
    pairs_withheld: int = 0
    reviews_capped: int = 0

    def allows_source(self, source: str) -> bool:
        if source in self.provider.sources:
            return True
        self.other_agents[source] = self.other_agents.get(source, 0) + 1
        return False

    def admit(self, tokens: int) -> bool:
        """Take one session of `tokens` estimated prompt tokens, if the caps allow it."""
        if self.sessions >= self.max_sessions:
            self.cap = (
                f"{self.max_sessions} sessions per run (CLAUDE_MEMORY_LLM_MAX_SESSIONS_PER_RUN)"
            )
        elif self.input_tokens + tokens > self.max_input_tokens:
            self.cap = (
                f"{self.max_input_tokens} input tokens per run"
                " (CLAUDE_MEMORY_LLM_MAX_INPUT_TOKENS_PER_RUN)"
            )
        else:
            self.sessions += 1
            self.input_tokens += tokens
            return True
        self.deferred += 1
        return False

    def shown(self, older_agent: str | None) -> bool:
        """Whether a link-review pair may go to this provider: its older memory came from a
        session of this provider's agent too (the newer one always does); one from another
        agent's session, from none (saved by hand, imported from a file), or owned by someone
        other than the newer one's owner (a teammate's shared memory: `older_agent` is None
        for it, server/store/supersessions.py) is withheld."""
        if older_agent in self.provider.sources:
            return True
        self.pairs_withheld += 1
        return False

    def admit_review(self, tokens: int) -> bool:
        """Take one link-review request of `tokens` estimated prompt tokens, if the run's token
        cap allows it (a review is no session: the session cap does not count it)."""
        if self.input_tokens + tokens > self.max_input_tokens:
            self.reviews_capped += 1
            return False
        self.input_tokens += tokens
        return True

    def receipt(self) -> dict[str, object]:
        return {
            "provider": self.provider.name,
            "sessions_sent": self.sessions,
            **self.usage.as_json(),
        }

    def notes(self) -> list[str]:
        lines = []
        if self.pairs_withheld:
            lines.append(
                f"link review: {self.pairs_withheld} pair(s) not sent to {self.provider.label}:"
                " their older memory came from another agent's session, from none, or is a"
                " teammate's; the rules' links stand for them"
            )
        if self.reviews_capped:
            lines.append(
                f"link review: {self.reviews_capped} review(s) not sent: the run's input token"
                " cap (CLAUDE_MEMORY_LLM_MAX_INPUT_TOKENS_PER_RUN) was reached; the rules' links"
                " stand for them"
            )
        if self.cap:
            lines.append(
                f"cap reached: {self.cap}; {self.deferred} session(s) left pending for the next run"
            )
        for source, count in sorted(self.other_agents.items()):
            lines.append(
                f"{count} {source} session(s) left pending: their text goes only to their own"
                f" agent's model, not to {self.provider.label}"
                f" (CLAUDE_MEMORY_LLM_PROVIDER={source} distils them)"
                if source in models()
                else f"{count} {source} session(s) left pending: their text goes only to their"
                f" own agent's model, not to {self.provider.label}"
            )
        return lines


def open_model(
    name: str, home: Path, *, timeout: float, environ: Mapping[str, str] | None = None
) -> CliModel:
    """The provider `name`'s model, its child working under `home`."""
    provider_of(name)
    return models()[name](home, timeout=timeout, environ=environ)


def consent_sentence(name: str, model: str) -> str:
    """What `llm use NAME` turns on, in one sentence."""
    provider = provider_of(name)
    which = f"model {model}" if model else "default model"
    return (
        f"From now on `distill` and `behavior` send the redacted text of your {provider.label}"
        f" sessions, one request per session, to {provider.company}'s {which} through"
        f" your own `{provider.executable}` login (at most the per-run caps; sessions of other"
        " agents are never sent to it); `claude-memory llm off` stops it."
    )


def offers(provider_set: str, environ: Mapping[str, str], home: Path) -> list[str]:
    """While no agent's model is on (`provider_set` is the configured provider), one line per
    agent whose CLI is installed and signed in: what `llm use` would send where. It only says
    so: consent is the user running that command (`doctor` and quickstart.sh print these)."""
    if provider_set in models():
        return []
    lines = []
    for name, model in sorted(models().items()):
        provider = model.provider
        installed = shutil.which(provider.executable, path=environ.get("PATH")) is not None
        if installed and model.signed_in(environ, home):
            lines.append(
                f"{provider.label} is installed and signed in: `claude-memory llm use {name}`"
                f" would have {provider.company}'s model distil your {provider.label} sessions,"
                f" their redacted text sent through your own `{provider.executable}` login, one"
                " request per session within the per-run caps. Nothing is sent unless you run it."
            )
    return lines


def model_name(name: str, configured: str) -> str:
    """The model a provider is asked for: LLM_MODEL, else its small default; empty: the CLI's
    own default (no model flag is passed)."""
    return configured or provider_of(name).default_model or ""
