"""The hook client for the agents with command hooks, standard library only.

`claude-memory hook <event>`, or the registered command: the agent runs it on every session
start, prompt, tool call and turn end, so it must start fast and can never get in the way:

- `install-hooks` / `connect` register it as `<venv python> -I -S <repo>/server/hooks.py <event>
  --url http://<host>:<port> [--agent NAME] || true`. `-S` skips `site` (and with it the
  editable install's import finder), so the process costs about what a bare interpreter does;
  `-I` keeps the user's project directory and PYTHON* variables out of it
  (bench/hook_latency.py has the figures). Without `--agent` it answers the default agent.
- Each agent's events, and the shape of its answers, are its module in server/agent_facts/
  (standard library only), imported from the repository this file sits in: only the one
  agent's the hook runs for.
- It reads the event JSON on stdin, sends the few fields the server needs to
  `/api/hooks/...` with a short timeout, over a plain socket: `http.client` alone would import
  `email` and `ssl` and double the start-up time.
- It answers in the agent's own shape; with nothing to add it prints nothing.
- When the server could not check the memories it shows against the session's folder (a
  team's server never reads its users' files), its answer carries their anchors and the
  memories are checked here, where the tree is (server/worktree/context_check.py, imported only
  then): orphaned ones are left out, drifted ones say what changed.
- It exits 0 whatever happens (server down, bad input, timeout) and never prints a traceback:
  exit 2 from a prompt hook would erase the user's prompt, and some agents read stderr as the
  answer when stdout is empty.

The bearer token comes from `CLAUDE_MEMORY_TOKEN` in the environment at run time and is never
written to any config. Without `--url`, CLAUDE_MEMORY_HOST and CLAUDE_MEMORY_PORT come from the
environment (never the project's own HOST or PORT); `.env` is not read, because the hook runs in
the user's project, whose `.env` is not ours.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time

TYPE_CHECKING = False  # typing costs ~4 ms to import; only the type checker needs it
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any, BinaryIO, TextIO

_REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _REPOSITORY not in sys.path:
    sys.path.append(_REPOSITORY)  # after the standard library: it shadows nothing
from server.agent_facts import DEFAULT  # noqa: E402
from server.agent_facts.answers import ANSWERED  # noqa: E402

CHILD_MARKER = "CLAUDE_MEMORY_CHILD"  # server/learning/agent_models.py sets it in its child

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
# What a hook asks of the server: (path, payload fields forwarded, timeout seconds). The rest
# of the payload (tool output for lessons, last messages) is not needed. Timeouts stay well
# under the agents' own: 30 s for Claude Code's prompts, a shared 1.5 s for its SessionEnd.
START = ("/api/hooks/session-start", ("session_id", "cwd", "source"), 2.0)
PROMPT = ("/api/hooks/prompt", ("session_id", "cwd", "prompt", "prompt_id"), 2.0)
LESSONS = (
    "/api/hooks/pre-tool",
    ("session_id", "cwd", "tool_name", "tool_use_id", "tool_input"),
    1.0,
)
CALL = ("/api/hooks/tool", _CALL_FIELDS, 1.0)
IMPORT = ("/api/hooks/session-end", ("session_id", "cwd", "transcript_path"), 1.0)
Request = tuple[str, tuple[str, ...], float]

# What each kind of hook in an agent's HOOKS asks (server/agent_facts/answers.py).
REQUESTS: dict[str, Request] = {
    "start": START,
    "prompt": PROMPT,
    "lessons": LESSONS,
    "call": CALL,
    "import": IMPORT,
}


def events_of(agent: ModuleType) -> dict[str, tuple[Request, str | None]]:
    """`agent`'s events: our argument -> (request, its event name printed back, or None)."""
    return {
        argument: (REQUESTS[kind], name if kind in ANSWERED else None)
        for name, argument, _, kind in agent.HOOKS
    }


def about(agent: str) -> ModuleType | None:
    """`agent`'s facts, server/agent_facts/<agent>.py, imported alone: a hook runs for one
    agent, and each module imported costs start-up time. None for no such agent."""
    module = f"server.agent_facts.{agent.replace('-', '_')}"
    if not agent.replace("-", "_").isidentifier():
        return None
    try:
        __import__(module)
    except ImportError:
        return None
    facts = sys.modules[module]
    return facts if getattr(facts, "NAME", None) == agent else None


# A tool's input and output can be megabytes (a file read, a long log); the journal keeps a
# few hundred characters of each, so the client sends only the start of every text in them.
TOOL_IO = ("tool_input", "tool_response")
MAX_TOOL_TEXT_CHARS = 2_000
MAX_TOOL_ITEMS = 50
MAX_TOOL_DEPTH = 4
MAX_PROMPT_CHARS = 20_000  # the server searches with less; this only bounds the request
# Claude Code replaces additionalContext over 10,000 chars with a preview and a file path;
# Codex spills over ~2,500 tokens to a file. The same bound keeps every agent's context whole.
MAX_CONTEXT_CHARS = 9_999
MAX_RESPONSE_BYTES = 1024 * 1024
# When a team's server (or one on another machine) sends the memories it shows with their
# anchors, they are checked here against the session's tree, for at most this long; past it
# the context goes out unchecked. The same budget as the server's own check.
CHECK_SECONDS = 0.25


def main(argv: list[str] | None = None) -> int:
    """Run one hook; always 0."""
    try:
        run(sys.argv[1:] if argv is None else argv, sys.stdin.buffer, sys.stdout)
    except BaseException:
        return 0  # whatever went wrong (server down, timeout, bad input), the session goes on
    return 0


def run(argv: list[str], stdin: BinaryIO, stdout: TextIO) -> None:
    """Parse `<event> [--url URL] [--agent NAME] [--timeout SECONDS]`, call the server, answer.

    Nothing at all inside an agent CLI that claude-memory runs to distil (`CHILD_MARKER` set,
    server/learning/agent_models.py): that session is ours, not the user's, and a hook calling
    back into memory from it would loop.
    """
    if not argv or os.environ.get(CHILD_MARKER):
        return
    event = argv[0]
    options = dict(zip(argv[1::2], argv[2::2], strict=False))
    agent = options.get("--agent", DEFAULT)
    facts = about(agent)
    events = events_of(facts) if facts is not None else {}
    if event not in events:
        return
    (path, fields, timeout), hook_name = events[event]
    if "--timeout" in options:
        timeout = min(float(options["--timeout"]), 30.0)
    payload = _read_payload(stdin)
    body: dict[str, Any] = {}
    for name in fields:
        value = payload.get(name)
        if name in TOOL_IO and value is not None:
            body[name] = _bounded(value, MAX_TOOL_DEPTH)
        elif isinstance(value, str | bool):
            body[name] = value
    if "prompt" in body:
        body["prompt"] = body["prompt"][:MAX_PROMPT_CHARS]
    if path == IMPORT[0] and agent != DEFAULT:
        body["agent"] = agent  # whose session file transcript_path names
    host, port = _split_url(options.get("--url") or _url_from_environment())
    answer = post_json(host, port, path, body, _token(), timeout)
    if hook_name is None or answer is None:
        return
    if answer.get("check"):
        answer["additionalContext"] = checked_here(answer, str(body.get("cwd", "")), path)
    output = agent_output(agent, hook_name, answer)
    if output:
        stdout.write(json.dumps(output) + "\n")
        stdout.flush()


def checked_here(answer: dict[str, Any], cwd: str, path: str) -> Any:
    """The answer's context with its `check` items checked against the tree of `cwd` here
    (server/worktree/context_check.py): the server could not. Any failure leaves it as sent."""
    context = answer.get("additionalContext")
    if not isinstance(context, str) or not context:
        return context
    try:
        from server.worktree.context_check import checked_context

        prompt = path == PROMPT[0]
        return checked_context(context, answer["check"], cwd, CHECK_SECONDS, drop_if_empty=prompt)
    except Exception:
        return context


def agent_output(agent: str, hook_name: str, answer: dict[str, Any]) -> dict[str, Any] | None:
    """What to print for `agent`'s `hook_name`, from the server's answer; None for nothing."""
    facts = about(agent)
    if facts is None:
        return None
    context = answer.get("additionalContext")
    context = context[:MAX_CONTEXT_CHARS] if isinstance(context, str) and context.strip() else ""
    given = answer.get("permissionDecisionReason")
    reason = given[:MAX_CONTEXT_CHARS] if isinstance(given, str) else ""
    if answer.get("permissionDecision") != "ask":
        reason = ""  # only a strict lesson's reason is the agent's to act on
    shaped: dict[str, Any] | None = facts.answer(hook_name, context, reason)
    return shaped


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
    host = os.environ.get("CLAUDE_MEMORY_HOST", "").strip() or "127.0.0.1"
    port = os.environ.get("CLAUDE_MEMORY_PORT", "").strip() or "3333"
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
