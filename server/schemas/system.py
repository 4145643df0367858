"""Shapes of the service's own routes: health, cache invalidation, the agents and the error body."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel


class Health(BaseModel):
    status: Literal["ok", "degraded"]
    database: Literal["ok", "unavailable"]
    database_kind: Literal["embedded", "external"]
    embedding_provider: Literal["local", "openai"]
    embedding_model: str
    embedding_dimension: int
    embeddings: Literal["ok", "unavailable"]
    vectors_waiting: int | None = None  # None while the database is unavailable
    version: str


class AgentInfo(BaseModel):
    """A coding agent claude-memory knows (server/agent_facts/): its name, as every row it
    brings records it in `source`, and its name for people."""

    name: str
    label: str


class Done(BaseModel):
    status: str


class ErrorDetail(BaseModel):
    code: str
    message: str


class Error(BaseModel):
    """Every REST error: {"error": {"code", "message"}}."""

    error: ErrorDetail


OpenApiDocument = dict[str, Any]
