"""HTTP requests that ordinary clients refuse to send, for the hostile-input tests.

httpx will not send a URL over 65,536 characters nor encode a lone surrogate, and the MCP
client will not put one in JSON. A server still has to cope with both: any program on the
machine can write such bytes to the socket. `send_raw` speaks HTTP/1.1 through h11 on a fresh
connection; `RawMcpSession` drives the streamable HTTP transport with hand-written JSON-RPC.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import quote

import h11
import httpx

PROTOCOL_VERSION = "2025-06-18"


def percent_encoded(value: str) -> str:
    """`value` for a URL; lone surrogates become the (invalid UTF-8) bytes a careless client
    would send."""
    return quote(value.encode("utf-8", "surrogatepass"), safe="")


def target(path: str, query: dict[str, str]) -> str:
    if not query:
        return path
    pairs = "&".join(f"{percent_encoded(k)}={percent_encoded(v)}" for k, v in query.items())
    return f"{path}{'&' if '?' in path else '?'}{pairs}"


async def send_raw(
    base_url: str, method: str, request_target: str, body: bytes | None = None
) -> httpx.Response:
    """One request on its own connection; the answer as an httpx.Response (status and body)."""
    url = httpx.URL(base_url)
    host, port = url.host, url.port or 80
    reader, writer = await asyncio.open_connection(host, port)
    connection = h11.Connection(h11.CLIENT)
    headers = [
        ("host", f"{host}:{port}"),
        ("connection", "close"),
        ("content-type", "application/json"),
        ("content-length", str(len(body or b""))),
    ]
    request = h11.Request(method=method, target=request_target.encode("ascii"), headers=headers)
    data = connection.send(request) or b""
    if body:
        data += connection.send(h11.Data(data=body)) or b""
    data += connection.send(h11.EndOfMessage()) or b""
    try:
        writer.write(data)
        await writer.drain()
        status, chunks = 0, []
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                connection.receive_data(await reader.read(65_536))
            elif isinstance(event, h11.Response):
                status = event.status_code
            elif isinstance(event, h11.Data):
                chunks.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
                break
    finally:
        writer.close()
    return httpx.Response(status, content=b"".join(chunks))


class RawMcpSession:
    """A streamable HTTP MCP session with JSON-RPC written by hand (json.dumps escapes)."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http
        self.headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
        }
        self.next_id = 1

    async def start(self) -> None:
        initialize = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "security-tests", "version": "1"},
        }
        response = await self._post(self._request("initialize", initialize))
        assert response.status_code == 200, response.text
        self.headers["mcp-session-id"] = response.headers["mcp-session-id"]
        self.headers["mcp-protocol-version"] = PROTOCOL_VERSION
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await self._post(note)).status_code == 202

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """HTTP status and the JSON-RPC answer (with `result` or `error`)."""
        response = await self._post(
            self._request("tools/call", {"name": name, "arguments": arguments})
        )
        return response.status_code, _message(response)

    def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        return {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}

    async def _post(self, message: dict[str, Any]) -> httpx.Response:
        return await self.http.post("/mcp", content=json.dumps(message), headers=self.headers)


def _message(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a plain JSON answer or of the first SSE `data:` line."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:"):
                return dict(json.loads(line[5:]))
        raise AssertionError(f"no data in the event stream: {response.text[:200]}")
    return dict(response.json())
