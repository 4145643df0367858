"""How values leave the service: as JSON and as one-line previews."""

from __future__ import annotations

from dataclasses import asdict
from datetime import date, datetime
from typing import Any

PREVIEW_CHARS = 160


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """The first `limit` characters on one line, with an ellipsis when cut."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def to_json(value: Any) -> Any:
    """Turn dataclasses, datetimes, dates and containers of them into JSON-ready values."""
    if hasattr(value, "__dataclass_fields__"):
        return {key: to_json(item) for key, item in asdict(value).items()}
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, dict):
        return {key: to_json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(item) for item in value]
    return value
