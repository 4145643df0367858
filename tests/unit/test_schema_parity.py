"""REST and MCP agree: where a tool and a route do the same thing, their inputs match.

Both sides are read as their clients see them: the MCP tool's input schema as FastMCP lists it
(in process, no database needed), the REST operation's parameters and body from the served
OpenAPI document. For every argument they share, the default and every limit (minimum,
maximum, enum, length) must be the same, and so must whether it is required.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastmcp import Client

from server.adapters.mcp import build_mcp
from server.adapters.openapi import openapi_document

# tool -> (REST method, path, renamed arguments {tool name: REST name})
SAME_OPERATION: dict[str, tuple[str, str, dict[str, str]]] = {
    "save_memory": ("post", "/api/memories", {}),
    "update_memory": ("patch", "/api/memories/{memory_id}", {}),
    "list_memories": ("get", "/api/memories", {}),
    "bulk_delete": ("delete", "/api/memories", {}),
    "export_memories": ("get", "/api/export", {"output_format": "format"}),
    "semantic_search": ("post", "/api/search", {}),
    "search_memories": ("post", "/api/search", {}),
    "hybrid_search": ("post", "/api/search", {}),
    "journal": ("get", "/api/journal", {}),
    "list_lessons": ("get", "/api/lessons", {}),
    "learn": ("post", "/api/trajectories", {}),
}
COMPARED = ("default", "minimum", "maximum", "enum", "minLength", "maxLength", "maxItems")
EMPTY_DEFAULTS: tuple[Any, ...] = (None, [], {})


def terms(schema: dict[str, Any], required: bool) -> dict[str, Any]:
    """What a caller must respect about one argument: its limits, default and requiredness.

    `X | None` is read as X, and an empty default (null, [], {}) as no default: both sides
    treat a missing argument, null and an empty default alike.
    """
    options = [option for option in schema.get("anyOf", []) if option.get("type") != "null"]
    merged = {**(options[0] if options else {}), **schema}
    found = {key: merged[key] for key in COMPARED if key in merged}
    if found.get("default") in EMPTY_DEFAULTS:
        found.pop("default", None)
    return {**found, "required": required}


def rest_inputs(document: dict[str, Any], method: str, path: str) -> dict[str, dict[str, Any]]:
    operation = document["paths"][path][method]
    inputs = {
        parameter["name"]: terms(parameter["schema"], parameter["required"])
        for parameter in operation.get("parameters", [])
    }
    if "requestBody" in operation:
        name = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        body = document["components"]["schemas"][name.rsplit("/", 1)[-1]]
        required = set(body.get("required", []))
        for field, schema in body["properties"].items():
            inputs[field] = terms(schema, field in required)
    return inputs


def tool_inputs(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    required = set(schema.get("required", []))
    return {name: terms(field, name in required) for name, field in schema["properties"].items()}


def disagreements(
    tool: dict[str, dict[str, Any]], rest: dict[str, dict[str, Any]], renamed: dict[str, str]
) -> list[str]:
    """Each shared argument whose terms differ, and each tool argument REST does not take."""
    problems = []
    for name, terms_of_tool in tool.items():
        rest_name = renamed.get(name, name)
        if rest_name not in rest:
            problems.append(f"{name}: the REST operation does not take it")
        elif terms_of_tool != rest[rest_name]:
            problems.append(f"{name}: MCP {terms_of_tool} != REST {rest[rest_name]}")
    return problems


@pytest.fixture(scope="module")
async def tool_schemas() -> dict[str, dict[str, Any]]:
    async with Client(build_mcp()) as client:
        return {tool.name: tool.input_schema for tool in await client.list_tools()}


@pytest.mark.parametrize("tool", sorted(SAME_OPERATION))
async def test_a_tool_and_its_route_agree_on_defaults_and_limits(
    tool: str, tool_schemas: dict[str, dict[str, Any]]
) -> None:
    method, path, renamed = SAME_OPERATION[tool]
    rest = rest_inputs(openapi_document(), method, path)

    assert disagreements(tool_inputs(tool_schemas[tool]), rest, renamed) == []


def test_the_check_reports_a_drifted_default_and_limit() -> None:
    tool = {
        "type": "object",
        "properties": {
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
            "project": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
    }
    rest = {
        "limit": terms({"type": "integer", "minimum": 1, "maximum": 500, "default": 50}, False),
        "project": terms({"type": "string"}, False),
    }

    problems = disagreements(tool_inputs(tool), rest, {})

    assert len(problems) == 1 and problems[0].startswith("limit: MCP")
    assert "'maximum': 100" in problems[0] and "'maximum': 500" in problems[0]


def test_an_argument_only_the_tool_takes_is_reported() -> None:
    tool = {"type": "object", "properties": {"scan_limit": {"type": "integer", "default": 500}}}

    assert disagreements(tool_inputs(tool), {}, {}) == [
        "scan_limit: the REST operation does not take it"
    ]


def test_every_operation_in_the_route_table_is_served() -> None:
    from server.adapters import rest as api
    from server.adapters.rest import hooks as hook_routes
    from server.adapters.route_table import OPERATIONS

    served = {
        (route.path, method)
        for route in [
            *api.routes(service=None),  # type: ignore[arg-type]
            *hook_routes.routes(recall=None, sessions=None),  # type: ignore[arg-type]
        ]
        for method in (route.methods or ())  # type: ignore[attr-defined]
        if method != "HEAD"
    }

    assert served == {(operation.path, operation.method) for operation in OPERATIONS}
