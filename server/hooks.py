"""The Claude Code hook client: `claude-memory hook <event>`, standard library only.

Claude Code runs this on every session start, prompt, tool call (before and after), turn end
and session end, so it must start fast and can never get in the way:

- `install-hooks` registers it as `<venv python> -I -S <repo>/server/hooks.py <event> --url
  http://HOST:PORT || true`. `-S` skips `site` (and with it the editable install's import
  finder), so the process costs about what a bare interpreter does; `-I` keeps the user's
  project directory and PYTHON* variables out of it (bench/hook_latency.py has the figures).
- It reads the event JSON on stdin, sends the few fields the server needs to
  `/api/hooks/...` with a short timeout, over a plain socket: `http.client` alone would import
  `email` and `ssl` and double the start-up time.
- It prints the documented nested shape `{"hookSpecificOutput": {"hookEventName": ...,
  "additionalContext": ...}}`: a top-level `additionalContext` is not delivered by every
  client (FORMATS.md §3.3). With nothing to add it prints nothing.
- It exits 0 whatever happens (server down, bad input, timeout) and never prints a traceback:
  exit 2 from a UserPromptSubmit hook would erase the user's prompt.

The bearer token comes from `CLAUDE_MEMORY_TOKEN` in the environment at run time and is never
written to settings.json. Without `--url`, HOST and PORT come from the environment; `.env` is
not read, because the hook runs in the user's project, whose `.env` is not ours.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

TYPE_CHECKING = False  # typing costs ~4 ms to import; only the type checker needs it
if TYPE_CHECKING:
    from typing import Any, BinaryIO, TextIO

# event -> (path, hookEventName printed back or None for capture-only events, timeout seconds).
# Timeouts stay well under Claude Code's: 30 s for prompts, a shared 1.5 s for SessionEnd.
EVENTS: dict[str, tuple[str, str | None, float]] = {
    "session-start": ("/api/hooks/session-start", "SessionStart", 2.0),
    "user-prompt-submit": ("/api/hooks/prompt", "UserPromptSubmit", 2.0),
    "stop": ("/api/hooks/session-end", None, 1.0),
    "session-end": ("/api/hooks/session-end", None, 1.0),
    "pre-tool-use": ("/api/hooks/pre-tool", "PreToolUse", 1.0),
    "post-tool-use": ("/api/hooks/tool", None, 1.0),
    "post-tool-use-failure": ("/api/hooks/tool", None, 1.0),
}
_CALL_FIELDS = (
    "hook_event_name",
    "session_id",
    "cwd",
    "prompt_id",
    "agent_id",
    "tool_name",
    "tool_use_id",
    "tool_input",
    "tool_response",
    "error",
    "is_interrupt",
)
# Payload fields forwarded per event; the rest (tool I/O, last messages) is not needed.
FIELDS: dict[str, tuple[str, ...]] = {
    "session-start": ("session_id", "cwd", "source"),
    "user-prompt-submit": ("session_id", "cwd", "prompt", "prompt_id"),
    "stop": ("session_id", "cwd", "transcript_path"),
    "session-end": ("session_id", "cwd", "transcript_path"),
    "pre-tool-use": ("session_id", "cwd", "tool_name", "tool_use_id", "tool_input"),
    "post-tool-use": _CALL_FIELDS,
    "post-tool-use-failure": _CALL_FIELDS,
}
# A tool's input and output can be megabytes (a file read, a long log); the journal keeps a
# few hundred characters of each, so the client sends only the start of every text in them.
TOOL_IO = ("tool_input", "tool_response")
MAX_TOOL_TEXT_CHARS = 2_000
MAX_TOOL_ITEMS = 50
MAX_TOOL_DEPTH = 4
MAX_PROMPT_CHARS = 20_000  # the server searches with less; this only bounds the request
# Claude Code replaces additionalContext over 10,000 chars with a preview and a file path.
MAX_CONTEXT_CHARS = 9_999
MAX_RESPONSE_BYTES = 1024 * 1024


def main(argv: list[str] | None = None) -> int:
    """Run one hook; always 0."""
    try:
        run(sys.argv[1:] if argv is None else argv, sys.stdin.buffer, sys.stdout)
    except BaseException:
        return 0  # whatever went wrong (server down, timeout, bad input), the session goes on
    return 0


def run(argv: list[str], stdin: BinaryIO, stdout: TextIO) -> None:
    """Parse `<event> [--url URL] [--timeout SECONDS]`, call the server, print its context."""
    if not argv or argv[0] not in EVENTS:
        return
    event = argv[0]
    options = dict(zip(argv[1::2], argv[2::2], strict=False))
    path, hook_name, timeout = EVENTS[event]
    if "--timeout" in options:
        timeout = min(float(options["--timeout"]), 30.0)
    payload = _read_payload(stdin)
    body: dict[str, Any] = {}
    for name in FIELDS[event]:
        value = payload.get(name)
        if name in TOOL_IO and value is not None:
            body[name] = _bounded(value, MAX_TOOL_DEPTH)
        elif isinstance(value, str | bool):
            body[name] = value
    if "prompt" in body:
        body["prompt"] = body["prompt"][:MAX_PROMPT_CHARS]
    host, port = _split_url(options.get("--url") or _url_from_environment())
    answer = post_json(host, port, path, body, _token(), timeout)
    if hook_name is None or answer is None:
        return
    specific: dict[str, str] = {}
    context = answer.get("additionalContext")
    if isinstance(context, str) and context.strip():
        specific["additionalContext"] = context[:MAX_CONTEXT_CHARS]
    if hook_name == "PreToolUse" and answer.get("permissionDecision") == "ask":
        # A strict lesson: Claude Code asks the user, showing the reason, before the call runs.
        specific["permissionDecision"] = "ask"
        reason = answer.get("permissionDecisionReason")
        if isinstance(reason, str) and reason:
            specific["permissionDecisionReason"] = reason[:MAX_CONTEXT_CHARS]
    if not specific:
        return
    output = {"hookSpecificOutput": {"hookEventName": hook_name, **specific}}
    stdout.write(json.dumps(output) + "\n")
    stdout.flush()


def _bounded(value: Any, depth: int) -> Any:
    """`value` with long texts, long lists and deep nesting cut (tool I/O can be huge)."""
    if isinstance(value, str):
        return value[:MAX_TOOL_TEXT_CHARS]
    if depth <= 0:
        return None
    if isinstance(value, list):
        return [_bounded(item, depth - 1) for item in value[:MAX_TOOL_ITEMS]]
    if isinstance(value, dict):
        items = list(value.items())[:MAX_TOOL_ITEMS]
        return {str(key): _bounded(item, depth - 1) for key, item in items}
    return value


def _read_payload(stdin: BinaryIO) -> dict[str, Any]:
    """The event JSON; bytes, so the locale's encoding never matters."""
    if stdin.isatty():
        return {}
    data = json.loads(stdin.read() or b"{}")
    return data if isinstance(data, dict) else {}


def _token() -> str | None:
    token = os.environ.get("CLAUDE_MEMORY_TOKEN", "").strip()
    return token or None


def _url_from_environment() -> str:
    host = os.environ.get("HOST", "").strip() or "127.0.0.1"
    port = os.environ.get("PORT", "").strip() or "3333"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _split_url(url: str) -> tuple[str, int]:
    """Host and port of an `http://host:port` URL; a wildcard bind address means loopback."""
    rest = url.strip()
    if not rest.startswith("http://"):
        raise ValueError("only http:// URLs are supported")
    rest = rest[len("http://") :].split("/", 1)[0]
    if rest.startswith("["):
        host, _, tail = rest[1:].partition("]")
        port = int(tail[1:]) if tail.startswith(":") else 80
    elif rest.count(":") == 1:
        host, _, raw_port = rest.partition(":")
        port = int(raw_port)
    else:
        host, port = rest, 80
    if host in ("", "0.0.0.0", "::"):
        host = "127.0.0.1"
    return host, port


def post_json(
    host: str, port: int, path: str, body: dict[str, Any], token: str | None, timeout: float
) -> dict[str, Any] | None:
    """POST `body` as JSON; the decoded JSON object of a 2xx answer, else None.

    One request per connection (`Connection: close`); the whole exchange, connecting
    included, must finish within `timeout` seconds.
    """
    deadline = time.monotonic() + timeout
    data = json.dumps(body).encode("utf-8")
    host_header = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: {host_header}",
        "Content-Type: application/json",
        "Accept: application/json",
        f"Content-Length: {len(data)}",
        "Connection: close",
    ]
    if token is not None:
        lines.append(f"Authorization: Bearer {token}")
    request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + data
    with _connect(host, port, timeout) as connection:
        connection.settimeout(max(0.01, deadline - time.monotonic()))
        connection.sendall(request)
        status, payload = _read_response(connection, deadline)
    if not 200 <= status < 300 or not payload:
        return None
    answer = json.loads(payload)
    return answer if isinstance(answer, dict) else None


def _connect(host: str, port: int, timeout: float) -> socket.socket:
    """Like socket.create_connection, minus the idna codec's import (a bytes host skips it)."""
    error: OSError = OSError(f"cannot resolve {host}")
    for family, kind, proto, _, address in socket.getaddrinfo(
        host.encode("ascii"), port, 0, socket.SOCK_STREAM
    ):
        connection = socket.socket(family, kind, proto)
        connection.settimeout(timeout)
        try:
            connection.connect(address)
        except OSError as exc:
            connection.close()
            error = exc
            continue
        return connection
    raise error


def _read_response(connection: socket.socket, deadline: float) -> tuple[int, bytes]:
    """Status and body, read until Content-Length is reached or the server closes."""
    received = b""
    head_end = -1
    status = 0
    headers: dict[str, str] = {}
    expected: int | None = None
    while True:
        if head_end < 0:
            head_end = received.find(b"\r\n\r\n")
            if head_end >= 0:
                status, headers = _parse_head(received[:head_end])
                length = headers.get("content-length")
                expected = head_end + 4 + int(length) if length is not None else None
        if expected is not None and len(received) >= expected:
            break
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the server did not answer in time")
        connection.settimeout(remaining)
        chunk = connection.recv(65536)
        if not chunk:
            break
        received += chunk
        if len(received) > MAX_RESPONSE_BYTES:
            raise ValueError("the answer is too large")
    if head_end < 0:
        raise ValueError("no complete HTTP answer")
    payload = received[head_end + 4 : expected]
    if headers.get("transfer-encoding", "").lower() == "chunked":
        payload = _unchunk(payload)
    return status, payload


def _parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    status = int(status_line.split(" ", 2)[1])
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers


def _unchunk(data: bytes) -> bytes:
    body = b""
    while data:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line.split(b";", 1)[0], 16)
        if size == 0:
            break
        body += data[:size]
        data = data[size + 2 :]
    return body


if __name__ == "__main__":
    sys.exit(main())
