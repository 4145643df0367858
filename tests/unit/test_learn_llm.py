"""ChatClient against ScriptedLLM: what it sends, what it returns, how failures read."""

from __future__ import annotations

import socket

import pytest

from server.learning.llm import ChatClient, LlmError, LlmRequestError, LlmUnavailable
from tests.llm_stub import Reply, ScriptedLLM

MODEL = "qwen2.5:7b"
MESSAGES = [
    {"role": "system", "content": "Reply with JSON."},
    {"role": "user", "content": "Say hi."},
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def test_complete_json_returns_the_message_content(
    llm: ScriptedLLM, client: ChatClient
) -> None:
    llm.script(Reply.text('{"greeting": "hi"}'))

    assert await client.complete_json(MESSAGES, model=MODEL) == '{"greeting": "hi"}'


async def test_complete_json_asks_for_json_mode_with_the_model_and_messages(
    llm: ScriptedLLM, client: ChatClient
) -> None:
    await client.complete_json(MESSAGES, model=MODEL, max_tokens=300)

    [request] = llm.requests
    assert request["model"] == MODEL
    assert request["messages"] == MESSAGES
    assert request["response_format"] == {"type": "json_object"}
    assert request["temperature"] == 0
    assert request["max_tokens"] == 300


async def test_complete_json_sends_no_max_tokens_when_none_given(
    llm: ScriptedLLM, client: ChatClient
) -> None:
    await client.complete_json(MESSAGES, model=MODEL)

    assert "max_tokens" not in llm.requests[0]


async def test_server_error_is_unavailable_and_names_the_url(
    llm: ScriptedLLM, client: ChatClient
) -> None:
    llm.script(Reply.status(500, {"error": {"message": "model runner crashed"}}))

    with pytest.raises(LlmUnavailable) as caught:
        await client.complete_json(MESSAGES, model=MODEL)

    assert llm.base_url in str(caught.value)
    assert "HTTP 500: model runner crashed" in str(caught.value)
    assert caught.value.retryable


async def test_rate_limit_is_unavailable(llm: ScriptedLLM, client: ChatClient) -> None:
    llm.script(Reply.status(429))

    with pytest.raises(LlmUnavailable, match="HTTP 429"):
        await client.complete_json(MESSAGES, model=MODEL)


async def test_reply_slower_than_the_timeout_is_unavailable(llm: ScriptedLLM) -> None:
    llm.script(Reply.delay(30))

    async with ChatClient(llm.base_url, timeout=0.5) as impatient:
        with pytest.raises(LlmUnavailable, match=r"did not answer within 0\.5 s"):
            await impatient.complete_json(MESSAGES, model=MODEL)


async def test_unknown_model_is_a_request_error_that_says_to_pull_it(
    llm: ScriptedLLM, client: ChatClient
) -> None:
    llm.script(Reply.status(404, {"error": {"message": 'model "nope:1b" not found'}}))

    with pytest.raises(LlmRequestError) as caught:
        await client.complete_json(MESSAGES, model="nope:1b")

    assert "`ollama pull nope:1b`" in str(caught.value)
    assert "CLAUDE_MEMORY_DISTILL_MODEL" in str(caught.value)
    assert not caught.value.retryable


async def test_bad_request_is_a_request_error(llm: ScriptedLLM, client: ChatClient) -> None:
    llm.script(Reply.status(400))

    with pytest.raises(LlmRequestError, match="HTTP 400"):
        await client.complete_json(MESSAGES, model=MODEL)


async def test_nothing_listening_is_unavailable_and_names_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"

    async with ChatClient(url, timeout=5) as chat:
        with pytest.raises(LlmUnavailable) as caught:
            await chat.complete_json(MESSAGES, model=MODEL)

    assert url in str(caught.value)
    assert "CLAUDE_MEMORY_OLLAMA_URL" in str(caught.value)


async def test_error_messages_never_show_the_api_key_or_url_password(llm: ScriptedLLM) -> None:
    key = "sk-very-secret-key"
    url = llm.base_url.replace("http://", "http://admin:hunter2@")
    llm.script(Reply.status(401, {"error": {"message": f"bad key {key}"}}))

    async with ChatClient(url, api_key=key, timeout=5) as chat:
        with pytest.raises(LlmError) as caught:
            await chat.complete_json(MESSAGES, model=MODEL)

    message = str(caught.value)
    assert "HTTP 401" in message
    assert key not in message
    assert "hunter2" not in message
    assert llm.base_url in message
