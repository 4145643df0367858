"""The REST edge: read a request into its operation's shapes, then call the handler.

A route's handler never sees the raw request: it receives each id its path names (`memory_id`,
`lesson_id`: whole numbers), `query` (the parsed query string) and `body` (the parsed JSON
body) as its operation in server/adapters/route_table.py declares them. Unknown query
parameters and body fields are ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from server.adapters.route_table import Operation
from server.core.errors import InvalidInput, ServiceError
from server.schemas.parsing import UnprocessableInput, parse_body, parse_query

Handler = Callable[..., Awaitable[Response]]


class UnsupportedMediaType(ServiceError):
    """A request body that is not declared as JSON (415)."""

    code = "unsupported_media_type"
    status = 415


def serve(operation: Operation, handler: Handler) -> Route:
    """The Starlette route for `operation`, handing `handler` its parsed input."""

    async def endpoint(request: Request) -> Response:
        arguments: dict[str, Any] = {
            name: _path_id(request, name) for name in path_parameters(operation.path)
        }
        if operation.query is not None:
            arguments["query"] = parse_query(operation.query, request.query_params)
        if operation.body is not None:
            arguments["body"] = parse_body(operation.body, await json_body(request))
        return await handler(**arguments)

    return Route(operation.path, endpoint, methods=[operation.method])


def path_parameters(path: str) -> list[str]:
    """The names of the ids in a route's path: "/api/memories/{memory_id}" -> ["memory_id"]."""
    return re.findall(r"{(\w+)}", path)


def _path_id(request: Request, name: str) -> int:
    raw = request.path_params[name]
    try:
        return int(raw)
    except ValueError:
        label = name.replace("_", " ")
        raise UnprocessableInput(f"{label} must be a whole number, got {raw!r}") from None


def _reject_constant(name: str) -> Any:
    raise InvalidInput(f"the request body is not valid JSON: {name} is not a number in JSON")


# Python refuses to read integers longer than this (sys.get_int_max_str_digits), and no field
# of ours needs one anywhere near as long.
MAX_INTEGER_DIGITS = 4_300


class _HugeInteger:
    """An integer too long to read, left unread so the field holding it can be named."""

    def __init__(self, digits: str) -> None:
        self.digits = len(digits.lstrip("-"))


def _huge_integer_field(value: Any, path: str) -> tuple[str, int] | None:
    """Where in a parsed body a _HugeInteger sits ("limit", "memories[2].created_at") and its
    digit count; None when there is none."""
    if isinstance(value, _HugeInteger):
        return path or "the body", value.digits
    if isinstance(value, dict):
        places = [(f"{path}.{key}" if path else str(key), item) for key, item in value.items()]
    elif isinstance(value, list):
        places = [(f"{path}[{index}]", item) for index, item in enumerate(value)]
    else:
        return None
    for place, item in places:
        found = _huge_integer_field(item, place)
        if found is not None:
            return found
    return None


def _declared_json(content_type: str) -> bool:
    media_type = content_type.split(";", 1)[0].strip().lower()
    return media_type == "application/json" or media_type.endswith("+json")


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object; a body must be declared `Content-Type: application/json`.

    A web page can send another site a text/plain or form body without asking first; a JSON
    content type makes the browser ask (a CORS preflight), and this server never says yes. So
    a page from any origin, another port on this machine included, cannot write here.
    """
    raw = await request.body()
    if raw and not _declared_json(request.headers.get("content-type", "")):
        raise UnsupportedMediaType(
            "send the request body as JSON with Content-Type: application/json"
        )
    too_long: list[_HugeInteger] = []

    def read_integer(digits: str) -> int | _HugeInteger:
        if len(digits) <= MAX_INTEGER_DIGITS:
            return int(digits)
        too_long.append(_HugeInteger(digits))
        return too_long[-1]

    try:
        body = json.loads(raw or b"{}", parse_constant=_reject_constant, parse_int=read_integer)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        raise InvalidInput("the request body is not valid JSON") from None
    found = _huge_integer_field(body, "") if too_long else None
    if found is not None:
        field, digits = found
        raise InvalidInput(
            f"{field} is a number of {digits:,} digits; numbers may have at most"
            f" {MAX_INTEGER_DIGITS:,}"
        )
    if not isinstance(body, dict):
        raise UnprocessableInput("the request body must be a JSON object")
    try:
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("the request body has text that is not valid Unicode") from None
    return body
