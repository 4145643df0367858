"""How an MCP tool is written here: a top-level async function whose first parameter is the
service (`MemoryApi`), listed in its module's `TOOLS` with its annotations.

    async def get_memory(service: MemoryApi, memory_id: MemoryId) -> Memory: ...
    async def hybrid_search(service: MemoryApi, args: HybridSearch) -> SearchResult: ...

A tool whose one argument is a shape from server/schemas takes that shape's fields as its
parameters (type, limits, default and description each come from the field: the same ones the
REST route for that operation parses); any other tool takes its parameters as written.
`exposed` builds the function FastMCP registers: those parameters plus FastMCP's `Context`,
from whose lifespan context it takes the service (server/adapters/mcp/__init__.py). The tool
itself can be called alone: `await get_memory(service, 7)`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Annotated, Any, get_type_hints

from fastmcp import Context
from fastmcp.exceptions import ToolError
from pydantic import BaseModel, Field

from server.agents.registry import source_of_mcp_client
from server.core.errors import ServiceError
from server.service.face import MemoryApi

READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}
WRITES = {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}
DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}
SERVICE = "service"  # the lifespan context's key for the service
_CALLING_AGENT: ContextVar[str] = ContextVar("calling_agent", default="mcp")

ToolFunction = Callable[..., Awaitable[Any]]


@dataclass(frozen=True)
class Tool:
    """One tool of a module's TOOLS: the function and its MCP annotations (READ_ONLY, ...)."""

    function: ToolFunction
    annotations: dict[str, bool]


def service_of(ctx: Context) -> MemoryApi:
    """The service the server's lifespan put in its context."""
    found: MemoryApi | None = ctx.lifespan_context.get(SERVICE)
    if found is None:
        raise ToolError("the memory service is not running yet; try again in a moment")
    return found


def calling_agent() -> str:
    """Whose MCP client calls the running tool, as a source: the agent's name ("codex"), or
    `mcp:<name>` for another client (server/agents/registry.py, `source_of_mcp_client`)."""
    return _CALLING_AGENT.get()


def _client_name(ctx: Context) -> str | None:
    """The name the client gave in `initialize` (clientInfo.name); None when it gave none."""
    try:
        params = ctx.session.client_params
    except RuntimeError:  # no session: nothing to tell
        return None
    return params.client_info.name if params is not None and params.client_info else None


@contextmanager
def tool_errors() -> Iterator[None]:
    """Turn service errors into MCP tool errors carrying the service's message."""
    try:
        yield
    except ServiceError as exc:
        raise ToolError(exc.message) from exc


def exposed(tool: ToolFunction) -> ToolFunction:
    """The function FastMCP registers for `tool`: its parameters but the service, plus `ctx`.

    FastMCP reads a tool's parameters from its signature, so the signature is built here;
    FastMCP fills `ctx` and leaves it out of the input schema, and has validated the arguments
    by the time the function runs.
    """
    hints = get_type_hints(tool, include_extras=True)
    own = list(inspect.signature(tool).parameters.values())[1:]  # after `service`
    shape = hints[own[0].name] if len(own) == 1 else None
    if not (inspect.isclass(shape) and issubclass(shape, BaseModel)):
        shape = None
    parameters = _shape_parameters(shape) if shape else _plain_parameters(own, hints)

    async def call(ctx: Context, **values: Any) -> Any:
        service = service_of(ctx)
        client = _CALLING_AGENT.set(source_of_mcp_client(_client_name(ctx)))
        try:
            with tool_errors():
                if shape is not None:
                    return await tool(service, shape.model_construct(**values))
                return await tool(service, **values)
        finally:
            _CALLING_AGENT.reset(client)

    context = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
    returns = hints["return"]
    call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [*parameters, context], return_annotation=returns
    )
    call.__annotations__ = {p.name: p.annotation for p in [*parameters, context]}
    call.__annotations__["return"] = returns
    call.__name__ = tool.__name__
    call.__qualname__ = tool.__qualname__
    call.__doc__ = tool.__doc__
    return call


def _plain_parameters(
    own: list[inspect.Parameter], hints: dict[str, Any]
) -> list[inspect.Parameter]:
    return [p.replace(kind=inspect.Parameter.KEYWORD_ONLY, annotation=hints[p.name]) for p in own]


def _shape_parameters(shape: type[BaseModel]) -> list[inspect.Parameter]:
    """`shape`'s fields as parameters, the required ones first."""
    fields = sorted(shape.model_fields.items(), key=lambda item: not item[1].is_required())
    return [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=(
                inspect.Parameter.empty
                if field.is_required()
                else field.get_default(call_default_factory=True)
            ),
            annotation=Annotated[
                field.annotation,
                *field.metadata,
                Field(description=field.description, json_schema_extra=field.json_schema_extra),
            ],
        )
        for name, field in fields
    ]
