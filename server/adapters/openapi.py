"""The OpenAPI 3.1 document, derived from the route table and the shapes; /api/openapi.json.

Parameters, request bodies and responses come from server/adapters/route_table.py's operations and
the types they name (server/schemas for input, server/core/models/ for output), through
Pydantic's JSON Schema. What this module adds is only what cannot be derived: the document's
frame, the error response every operation may give, and the path parameters (ids, whole
numbers). The test suite runs schemathesis against the served document, so a route that drifts
from its shapes fails.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode
from pydantic_core import core_schema

from server import __version__
from server.adapters.http_edge import path_parameters
from server.adapters.route_table import OPERATIONS, Operation, Reply
from server.schemas.system import Error

Schema = dict[str, Any]
REF = "#/components/schemas/{model}"


class _Generator(GenerateJsonSchema):
    """Pydantic's JSON Schema, read as OpenAPI wants it.

    In a request, null is the same as leaving a field out, so `X | None` is documented as X.
    A response always carries every field, so every field of a response is required.
    """

    def nullable_schema(self, schema: core_schema.NullableSchema) -> Schema:
        if self.mode == "validation":
            return self.generate_inner(schema["schema"])
        return super().nullable_schema(schema)

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> Schema:
        json_schema = super().default_schema(schema)
        if self.mode == "validation" and json_schema.get("default", 0) is None:
            del json_schema["default"]
        return json_schema

    def field_is_required(self, field: Any, total: bool) -> bool:
        return self.mode == "serialization" or super().field_is_required(field, total)


def openapi_document() -> Schema:
    """The whole document; a fresh copy per call, so a caller cannot change the next one's."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "claude-memory",
            "version": __version__,
            "description": "Persistent, searchable memory for AI coding agents. "
            "Errors are {error: {code, message}}; times are ISO 8601 with time zone.",
        },
        "servers": [{"url": "/"}],
        **_derived(),
    }


def _derived() -> Schema:
    components: Schema = {}
    paths: Schema = {}
    error = _reference(Error, "serialization", components)
    for operation in OPERATIONS:
        paths.setdefault(operation.path, {})[operation.method.lower()] = _operation(
            operation, error, components
        )
    return {"paths": paths, "components": {"schemas": components}}


def _operation(operation: Operation, error: Schema, components: Schema) -> Schema:
    document: Schema = {
        "operationId": operation.operation_id,
        "summary": operation.summary,
        "responses": {
            **{str(reply.status): _response(reply, components) for reply in operation.replies},
            "default": {
                "description": "an error",
                "content": {"application/json": {"schema": error}},
            },
        },
    }
    parameters: list[Schema] = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "integer", "minimum": 1}}
        for name in path_parameters(operation.path)
    ]
    if operation.query is not None:
        parameters.extend(_query_parameters(operation.query))
    if parameters:
        document["parameters"] = parameters
    if operation.body is not None:
        components[operation.body.__name__] = _inlined(_schema(operation.body, "validation"))
        document["requestBody"] = {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": REF.format(model=operation.body.__name__)}}
            },
        }
    return document


def _response(reply: Reply, components: Schema) -> Schema:
    schema = _reference(reply.shape, "serialization", components)
    response: Schema = {
        "description": reply.description,
        "content": {
            media: {"schema": schema if media == "application/json" else {"type": "string"}}
            for media in reply.media_types
        },
    }
    if reply.links:
        response["links"] = reply.links
    return response


def _query_parameters(shape: type[BaseModel]) -> list[Schema]:
    parameters = []
    for name, field in _schema(shape, "validation")["properties"].items():
        parameter: Schema = {"name": name, "in": "query", "required": False}
        if "description" in field:
            parameter["description"] = field.pop("description")
        parameters.append({**parameter, "schema": field})
    return parameters


def _reference(shape: Any, mode: JsonSchemaMode, components: Schema) -> Schema:
    """A $ref to `shape`'s component (added with the components it uses), or its inline schema."""
    schema = _schema(shape, mode)
    components.update(schema.pop("$defs", {}))
    name = getattr(shape, "__name__", None)
    if isinstance(shape, type) and name:
        components[name] = schema
        return {"$ref": REF.format(model=name)}
    return schema


@cache
def _cached_schema(shape: Any, mode: JsonSchemaMode) -> Schema:
    schema = TypeAdapter(shape).json_schema(
        mode=mode, ref_template=REF, schema_generator=_Generator
    )
    untitled: Schema = _untitled(schema)
    return untitled


def _schema(shape: Any, mode: JsonSchemaMode) -> Schema:
    copy: Schema = _untitled(_cached_schema(shape, mode))  # a deep copy: callers edit it
    return copy


def _untitled(node: Any) -> Any:
    """A deep copy without Pydantic's generated titles (a property named "title" stays)."""
    if isinstance(node, dict):
        return {
            key: _untitled(value)
            for key, value in node.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [_untitled(item) for item in node]
    return node


def _inlined(schema: Schema) -> Schema:
    """A request body's schema with its nested shapes written out in place of $refs."""
    definitions = schema.pop("$defs", {})

    def expand(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return expand(definitions[node["$ref"].rsplit("/", 1)[-1]])
            return {key: expand(value) for key, value in node.items()}
        if isinstance(node, list):
            return [expand(item) for item in node]
        return node

    expanded: Schema = expand(schema)
    return expanded
