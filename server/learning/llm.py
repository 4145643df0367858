"""The chat client for the local LLM behind an OpenAI-compatible endpoint (Ollama's `/v1`).

Distillation needs one thing from it: a JSON-mode completion. Everything the `openai` package
can raise becomes an `LlmError` whose message names the endpoint and says what to do next;
`LlmUnavailable` means "try again later", `LlmRequestError` means "fix the settings first".
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Protocol, cast
from urllib.parse import urlsplit, urlunsplit

import openai
from openai.types.chat import ChatCompletionMessageParam

# Ollama ignores the key but the openai package refuses to start without one.
PLACEHOLDER_API_KEY = "ollama"
MAX_DETAIL_CHARS = 200


class LlmError(Exception):
    """The LLM call failed; the message says what to do next and never holds the API key."""

    retryable = False


class LlmUnavailable(LlmError):
    """The endpoint is down, slow, overloaded or failing: the same request may work later."""

    retryable = True


class LlmRequestError(LlmError):
    """The endpoint refused the request (unknown model, bad key, bad URL): fix settings first."""


class LlmRateLimited(LlmUnavailable):
    """The provider answered that the user's quota or rate is used up; `resumes` says when it
    expects to take requests again, as the provider put it (empty when it did not say)."""

    def __init__(self, message: str, resumes: str = "") -> None:
        super().__init__(message)
        self.resumes = resumes


class JsonModel(Protocol):
    """What the LLM jobs ask of a model: the reply to chat `messages`, asked for as JSON.

    ChatClient (an OpenAI-compatible endpoint) and the agents' CLIs
    (server/learning/agent_models.py) both answer it; the prompts and the parsing of the reply
    are the jobs' own and the same for every provider.
    """

    async def complete_json(
        self, messages: list[dict[str, str]], *, model: str, max_tokens: int | None = None
    ) -> str: ...


class ChatClient:
    """JSON-mode chat completions against one endpoint; an async context manager.

    Retries are left to the caller (`max_retries=0`): a distill job decides what a failed
    session costs, and the openai package's own back-off would multiply the timeout.
    """

    def __init__(self, base_url: str, *, api_key: str | None = None, timeout: float = 120.0):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self._api_key = api_key
        self._client = openai.AsyncOpenAI(
            base_url=self.base_url,
            api_key=api_key or PLACEHOLDER_API_KEY,
            timeout=timeout,
            max_retries=0,
        )

    async def complete_json(
        self, messages: list[dict[str, str]], *, model: str, max_tokens: int | None = None
    ) -> str:
        """The assistant's reply to `messages`, asked for in JSON mode at temperature 0."""
        try:
            response = await self._client.chat.completions.create(
                model=model,
                messages=cast("list[ChatCompletionMessageParam]", messages),
                response_format={"type": "json_object"},
                temperature=0,
                max_tokens=openai.omit if max_tokens is None else max_tokens,
            )
        except openai.OpenAIError as exc:
            raise self._error(exc, model) from exc
        if not response.choices:
            return ""
        return response.choices[0].message.content or ""

    def _error(self, exc: openai.OpenAIError, model: str) -> LlmError:
        """Our error for one of openai's, worded for the person running the job."""
        where = f"the LLM at {display_url(self.base_url)}"
        # APITimeoutError subclasses APIConnectionError, so it is checked first.
        if isinstance(exc, openai.APITimeoutError):
            return LlmUnavailable(
                f"{where} did not answer within {self.timeout:g} s; check that Ollama is running"
                " and not busy with another model, or raise the request timeout"
            )
        if isinstance(exc, openai.APIConnectionError):
            return LlmUnavailable(
                f"cannot reach {where}; start Ollama (`ollama serve`) or set"
                " CLAUDE_MEMORY_OLLAMA_URL to a running OpenAI-compatible endpoint"
            )
        if not isinstance(exc, openai.APIStatusError):
            return LlmRequestError(f"{where} gave an unusable answer: {self._redact(str(exc))}")
        status = exc.status_code
        detail = self._detail(exc)
        if status == 429:
            return LlmUnavailable(
                f"{where} is rate limiting requests (HTTP 429{detail}); retry later"
            )
        if status >= 500:
            return LlmUnavailable(
                f"{where} failed with HTTP {status}{detail}; check the Ollama logs (the model may"
                " not fit in memory) and retry"
            )
        if status == 404:
            return LlmRequestError(
                f"{where} does not know model {model!r} (HTTP 404{detail}); run `ollama pull"
                f" {model}` or set CLAUDE_MEMORY_DISTILL_MODEL to an installed model, and check"
                " that CLAUDE_MEMORY_OLLAMA_URL ends in /v1"
            )
        if status in (401, 403):
            return LlmRequestError(
                f"{where} refused the API key (HTTP {status}{detail}); check the configured key"
            )
        return LlmRequestError(
            f"{where} rejected the request (HTTP {status}{detail}); check"
            " CLAUDE_MEMORY_DISTILL_MODEL and CLAUDE_MEMORY_OLLAMA_URL"
        )

    def _detail(self, exc: openai.APIStatusError) -> str:
        """The server's own error message, short, as `: message` (empty when there is none)."""
        body: Any = exc.body
        if isinstance(body, dict):
            body = body.get("error", body)
        if isinstance(body, dict):
            body = body.get("message")
        if not isinstance(body, str) or not body.strip():
            return ""
        text = " ".join(self._redact(body).split())
        if len(text) > MAX_DETAIL_CHARS:
            text = text[: MAX_DETAIL_CHARS - 1] + "…"
        return f": {text}"

    def _redact(self, text: str) -> str:
        """`text` with the API key blanked, in case a server echoes it back."""
        return text.replace(self._api_key, "***") if self._api_key else text

    async def close(self) -> None:
        await self._client.close()

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()


def display_url(url: str) -> str:
    """`url` without any user:password part, fit for messages and logs."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit(parts._replace(netloc=netloc))
