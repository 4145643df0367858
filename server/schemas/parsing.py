"""Parse input into a shape, and turn a validation failure into the caller's error message.

One translation serves REST (a 400 or 422 with {"error": {"code", "message"}}) and MCP (a tool
error): a value of the wrong type is "unprocessable" (422), a value out of its range or set is
"invalid" (400). Messages name the field and say what to send, with the bounds read from the
field's JSON Schema, so they stay true when a limit changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, TypeVar, get_args

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from server.core.errors import InvalidInput, ServiceError

ShapeT = TypeVar("ShapeT", bound=BaseModel)

KINDS = {
    "integer": "a whole number",
    "number": "a number",
    "string": "text",
    "boolean": "true or false",
    "array": "a list",
    "object": "a JSON object",
}
PARSING = {
    "int_parsing": "must be a whole number",
    "bool_parsing": "must be true or false",
    "float_parsing": "must be a number",
}


class UnprocessableInput(ServiceError):
    """A field has the wrong type (422), as opposed to a bad value (400)."""

    code = "unprocessable"
    status = 422


def parse_body(shape: type[ShapeT], body: Mapping[str, Any]) -> ShapeT:
    """A JSON body as `shape`: types must match exactly (5 is not "5"), null means absent."""
    present = {
        key: value
        for key, value in body.items()
        if value is not None or (key in shape.model_fields and _admits_null(shape, key))
    }
    try:
        return shape.model_validate(present, strict=True)
    except ValidationError as failure:
        raise input_error(failure.errors(), schema_of(shape)) from None


def parse_query(shape: type[ShapeT], params: Mapping[str, str]) -> ShapeT:
    """A query string as `shape`: text is read as the field's type; blank means absent."""
    present = {key: value for key, value in params.items() if value and key in shape.model_fields}
    try:
        return shape.model_validate(present)
    except ValidationError as failure:
        raise input_error(failure.errors(), schema_of(shape)) from None


def _admits_null(shape: type[BaseModel], name: str) -> bool:
    """Whether null is a value of the field (`X | None`); elsewhere null means "absent"."""
    return type(None) in get_args(shape.model_fields[name].annotation)


@cache
def schema_of(shape: type[BaseModel]) -> dict[str, Any]:
    return shape.model_json_schema()


def input_error(errors: list[ErrorDetails], schema: Mapping[str, Any]) -> ServiceError:
    """The first problem as a ServiceError; `schema` is the input's JSON Schema (for bounds)."""
    error = errors[0]
    where, name, indexes = _place(error["loc"])
    field = _field_schema(schema, error["loc"])
    kind, value = error["type"], error.get("input")
    context = error.get("ctx", {})
    if kind == "missing":
        return InvalidInput(
            f"{where}{name} is required: send {KINDS.get(field.get('type', ''), 'it')}"
        )
    if kind in PARSING:
        return UnprocessableInput(f"{where}{name} {PARSING[kind]}, got {value!r}")
    if kind in ("model_type", "model_attributes_type", "dict_type") and indexes:
        return UnprocessableInput(f"{where}{name}{indexes} must be a JSON object")
    if kind.endswith("_type") or kind in ("int_from_float", "is_instance_of"):
        if indexes:
            items = KINDS.get(str(field.get("type", "")), "values")
            return UnprocessableInput(f"{where}{name} must be a list of {_plural(items)}")
        expected = KINDS.get(str(field.get("type", "")), "another type")
        return UnprocessableInput(f"{where}{name} has the wrong type; send {expected}")
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        low, high = field.get("minimum"), field.get("maximum")
        if low is not None and high is not None:
            return InvalidInput(f"{where}{name} must be between {low} and {high}, got {value}")
        bound = f"at least {low}" if low is not None else f"at most {high}"
        return InvalidInput(f"{where}{name} must be {bound}, got {value}")
    if kind in ("literal_error", "enum"):
        choices = ", ".join(str(choice) for choice in field.get("enum", []))
        return InvalidInput(f"{where}{name} must be one of {choices}, got {value!r}")
    if kind == "string_too_long":
        return InvalidInput(
            f"{where}{name} is longer than {context.get('max_length', 0):,} characters"
        )
    if kind == "too_long":
        return InvalidInput(
            f"{where}at most {context.get('max_length', 0)} {name} per request, "
            f"got {context.get('actual_length', 0)}"
        )
    return InvalidInput(f"{where}{name} {error['msg']}")


def _place(location: tuple[int | str, ...]) -> tuple[str, str, str]:
    """Split a location at its last field name: what holds it, the name, list indexes after it.

    ("memories", 0, "content") -> ("memories[0]: ", "content", ""); ("tags", 0) -> ("", "tags",
    "[0]"); ("limit",) -> ("", "limit", "").
    """
    names = [i for i, part in enumerate(location) if isinstance(part, str)]
    if not names:
        return "", "", _path(location)
    holder = _path(location[: names[-1]])
    return (
        (f"{holder}: " if holder else ""),
        str(location[names[-1]]),
        _path(location[names[-1] + 1 :]),
    )


def _path(parts: tuple[int | str, ...]) -> str:
    """("memories", 0, "tags") -> "memories[0].tags"."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _field_schema(schema: Mapping[str, Any], location: tuple[int | str, ...]) -> dict[str, Any]:
    """The JSON Schema of the value at `location`, following properties, items and $refs."""
    node: Any = schema
    for part in location:
        node = _resolve(schema, node)
        if isinstance(part, int):
            node = node.get("items", {})
        else:
            node = node.get("properties", {}).get(part, {})
    node = _resolve(schema, node)
    for option in node.get("anyOf", []):  # `X | None`: the non-null alternative
        if option.get("type") != "null":
            return {**_resolve(schema, option), **{k: v for k, v in node.items() if k != "anyOf"}}
    return dict(node)


def _resolve(schema: Mapping[str, Any], node: Any) -> Any:
    reference = node.get("$ref", "") if isinstance(node, dict) else ""
    if reference:
        return schema.get("$defs", {}).get(reference.rsplit("/", 1)[-1], {})
    return node


def _plural(kind: str) -> str:
    return {"text": "strings", "a whole number": "whole numbers", "a number": "numbers"}.get(
        kind, kind
    )
