"""The OpenAPI 3.1 document for the REST API, served at /api/openapi.json.

Written by hand next to the routes in server/api.py (and /health, /cache/invalidate in
server/app.py, the hook routes in server/hooks_api.py): the routes parse their own input, so
there is no framework to derive it from. The test suite runs schemathesis against this document,
so a route that drifts from it fails. Responses that carry a memory id (or a project, tag or
session id) have OpenAPI links to the operations that take it, which schemathesis' stateful phase
follows to chain real calls. A link from a list names its first item; an empty list leaves the
link unused (schemathesis reports it under "Failed to extract data", which is not a failure).
"""

from __future__ import annotations

import copy
from typing import Any

from server import __version__
from server.models import EXPORT_FORMATS, MEMORY_KINDS, SEARCH_MODES

Schema = dict[str, Any]


def _ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def _nullable(type_name: str, **extra: Any) -> Schema:
    return {"type": [type_name, "null"], **extra}


def _object(properties: Schema, required: list[str] | None = None) -> Schema:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
    }


TIME = {"type": "string", "format": "date-time"}
TIME_OR_NULL = _nullable("string", format="date-time")
COUNT = {"type": "integer", "minimum": 0}
STRING_LIST = {"type": "array", "items": {"type": "string"}}

MEMORY = _object(
    {
        "id": {"type": "integer"},
        "content": {"type": "string"},
        "content_hash": {"type": "string"},
        "kind": {"type": "string", "enum": list(MEMORY_KINDS)},
        "tags": STRING_LIST,
        "source": {"type": "string"},
        "project": {"type": "string"},
        "project_path": {"type": "string"},
        "session_id": _nullable("string"),
        "role": _nullable("string"),
        "created_at": TIME,
        "updated_at": TIME,
        "deleted_at": TIME_OR_NULL,
        "metadata": {"type": "object"},
        "supersedes": _nullable("integer"),
        "archived_at": TIME_OR_NULL,
        "supersede_reason": {"type": "string"},
        "superseded_by": _nullable("integer"),
    }
)
SIMILAR = _object(
    {"id": {"type": "integer"}, "similarity": {"type": "number"}, "preview": {"type": "string"}}
)
SIMILAR_OR_NULL = {"oneOf": [_ref("SimilarMemory"), {"type": "null"}]}
SAVED_MEMORY = {
    "allOf": [_ref("Memory"), _object({"redacted": COUNT})],
}
NOT_SAVED = _object(
    {
        "status": {"type": "string", "enum": ["noop", "duplicate", "restored"]},
        "id": {"type": "integer"},
        "similar": SIMILAR_OR_NULL,
        "redacted": COUNT,
    }
)
UPDATE_OUTCOME = _object(
    {
        "status": {"type": "string", "enum": ["updated", "unchanged", "noop", "duplicate"]},
        "memory": _ref("Memory"),
        "similar": SIMILAR_OR_NULL,
        "redacted": COUNT,
    }
)
MEMORY_PAGE = _object(
    {
        "total": COUNT,
        "limit": {"type": "integer"},
        "offset": COUNT,
        "memories": {"type": "array", "items": _ref("Memory")},
    }
)
BULK_DELETE = _object(
    {
        "dry_run": {"type": "boolean"},
        "matched": COUNT,
        "deleted": COUNT,
        "preview": {
            "type": "array",
            "items": _object({"id": {"type": "integer"}, "preview": {"type": "string"}}),
        },
    }
)
BULK_SAVE = _object(
    {
        "saved": COUNT,
        "skipped": COUNT,
        "invalid": COUNT,
        "items": {
            "type": "array",
            "items": _object(
                {
                    "index": COUNT,
                    "status": {
                        "type": "string",
                        "enum": ["saved", "noop", "duplicate", "restored", "invalid"],
                    },
                    "id": _nullable("integer"),
                    "similar": SIMILAR_OR_NULL,
                    "redacted": COUNT,
                    "error": _nullable("string"),
                }
            ),
        },
    }
)
SEARCH_HIT = _object(
    {
        "id": {"type": "integer"},
        "content": {"type": "string"},
        "kind": {"type": "string"},
        "tags": STRING_LIST,
        "source": {"type": "string"},
        "project": {"type": "string"},
        "project_path": {"type": "string"},
        "session_id": _nullable("string"),
        "created_at": TIME,
        "similarity": _nullable("number"),
        "keyword_score": _nullable("number"),
        "fused_score": _nullable("number"),
        "score": {"type": "number"},
        "supersedes": _nullable("integer"),
        "superseded_by": _nullable("integer"),
        "version_note": _nullable("string"),
        "time_note": _nullable("string"),
    }
)
SEARCH_RESPONSE = _object(
    {
        "mode": {"type": "string", "enum": list(SEARCH_MODES)},
        "results": {"type": "array", "items": _ref("SearchHit")},
        "took_ms": {"type": "number"},
    }
)
RELATED = _object(
    {
        "id": {"type": "integer"},
        "similarity": {"type": "number"},
        "kind": {"type": "string"},
        "project": {"type": "string"},
        "created_at": TIME,
        "preview": {"type": "string"},
    }
)
VERSION = _object(
    {
        "id": {"type": "integer"},
        "created_at": TIME,
        "kind": {"type": "string"},
        "preview": {"type": "string"},
        "reason": {"type": "string"},
        "deleted": {"type": "boolean"},
        "current": {"type": "boolean"},
    }
)
COUNTS_BY = {"type": "object", "additionalProperties": COUNT}
STATS = _object(
    {
        "total": COUNT,
        "active": COUNT,
        "deleted": COUNT,
        "by_project": COUNTS_BY,
        "by_source": COUNTS_BY,
        "by_kind": COUNTS_BY,
        "storage": _object(
            {
                "table_bytes": COUNT,
                "index_bytes": COUNT,
                "vector_bytes": COUNT,
                "total_bytes": COUNT,
            }
        ),
        "sessions": _object(
            {"imported": COUNT, "distilled": COUNT, "failed": COUNT, "pending": COUNT}
        ),
        "cache": _object(
            {
                "size": COUNT,
                "max_size": COUNT,
                "ttl_seconds": {"type": "number"},
                "hits": COUNT,
                "misses": COUNT,
            }
        ),
        "embedding_model": {"type": "string"},
        "embedding_dimension": {"type": "integer"},
    }
)
PROJECT = _object(
    {
        "project": {"type": "string"},
        "project_path": {"type": "string"},
        "count": COUNT,
        "last_at": TIME,
    }
)
TAG = _object({"tag": {"type": "string"}, "count": COUNT})
TIMELINE = _object(
    {
        "total": COUNT,
        "truncated": {"type": "boolean"},
        "points": {
            "type": "array",
            "items": _object(
                {
                    "id": {"type": "integer"},
                    "project": {"type": "string"},
                    "created_at": TIME,
                    "kind": {"type": "string"},
                    "length": COUNT,
                    "title": {"type": "string"},
                }
            ),
        },
        "days": {
            "type": "array",
            "items": _object(
                {"day": {"type": "string", "format": "date"}, "project": {"type": "string"}}
                | {"count": COUNT}
            ),
        },
    }
)
SESSION = _object(
    {
        "session_id": {"type": "string"},
        "title": _nullable("string"),
        "source": {"type": "string"},
        "project": {"type": "string"},
        "project_path": {"type": "string"},
        "file_path": _nullable("string"),
        "bytes_imported": COUNT,
        "lines_imported": COUNT,
        "message_count": COUNT,
        "first_message_at": TIME_OR_NULL,
        "last_message_at": TIME_OR_NULL,
        "imported_at": TIME,
        "distill_state": {"type": "string"},
        "distill_failures": COUNT,
        "distill_last_error": _nullable("string"),
        "distilled_at": TIME_OR_NULL,
        "signals_state": {"type": "string"},
        "behavior_state": {"type": "string"},
    }
)
SESSION_PAGE = _object(
    {
        "total": COUNT,
        "limit": {"type": "integer"},
        "offset": COUNT,
        "sessions": {"type": "array", "items": _ref("ImportedSession")},
    }
)
MEMORY_LIST = {"type": "array", "items": _ref("Memory")}
PREFERENCE = _object(
    {
        "memory": _ref("Memory"),
        "tier": {"type": "string", "enum": ["explicit", "signals", "inferred"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "confidence_percent": {"type": "integer", "minimum": 0, "maximum": 100},
        "evidence_sessions": COUNT,
        "last_seen": TIME,
        "confirmed": {"type": "boolean"},
        "superseded_by": _nullable("integer"),
    }
)
PREFERENCE_LIST = {"type": "array", "items": _ref("Preference")}
PREFERENCES = _object(
    {"explicit": PREFERENCE_LIST, "signals": PREFERENCE_LIST, "inferred": PREFERENCE_LIST}
)
HEALTH = _object(
    {
        "status": {"type": "string", "enum": ["ok", "degraded"]},
        "database": {"type": "string", "enum": ["ok", "unavailable"]},
        "database_kind": {"type": "string", "enum": ["embedded", "external"]},
        "embedding_model": {"type": "string"},
        "embedding_dimension": {"type": "integer"},
        "version": {"type": "string"},
    }
)
ERROR = _object({"error": _object({"code": {"type": "string"}, "message": {"type": "string"}})})
SESSION_START_CONTEXT = _object(
    {
        "additionalContext": {"type": "string", "description": 'Markdown; "" when empty'},
        "project": _nullable("string"),
    }
)
PROMPT_CONTEXT = _object(
    {
        "additionalContext": {"type": "string", "description": 'Markdown; "" when nothing fits'},
        "memory_ids": {"type": "array", "items": {"type": "integer"}},
    }
)
IMPORT_STARTED = _object(
    {
        "status": {
            "type": "string",
            "enum": ["importing", "queued"],
            "description": "queued: that transcript is being imported and will be read once more",
        }
    }
)

NEW_MEMORY_FIELDS: Schema = {
    "content": {
        "type": "string",
        "minLength": 1,
        "description": "The text to remember (secrets are redacted).",
    },
    "tags": STRING_LIST,
    "project": {"type": "string"},
    "source": {"type": "string", "default": "api"},
    "kind": {"type": "string", "enum": list(MEMORY_KINDS), "default": "manual"},
    "created_at": {"type": "string", "description": "ISO 8601, or relative like 7d / 12h."},
    "metadata": {"type": "object"},
}
CREATE_MEMORY = _object(
    {**NEW_MEMORY_FIELDS, "force": {"type": "boolean", "default": False}}, ["content"]
)
BULK_CREATE = _object(
    {
        "memories": {
            "type": "array",
            "maxItems": 1000,
            "items": _object(NEW_MEMORY_FIELDS, ["content"]),
        },
        "force": {"type": "boolean", "default": False},
    },
    ["memories"],
)
UPDATE_MEMORY = _object(
    {
        "content": {"type": "string"},
        "tags": STRING_LIST,
        "project": {"type": "string"},
        "kind": {"type": "string", "enum": list(MEMORY_KINDS)},
        "supersedes": {
            **_nullable("integer", minimum=0),
            "description": "Id of the older memory whose fact this one replaces; null or 0"
            " removes the link.",
        },
        "force": {"type": "boolean", "default": False},
    },
    [],
)
RECALL_REQUEST = _object(
    {
        "query": {"type": "string", "minLength": 1},
        "threshold": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "Cut-off; by default the one measured for the embedding model"
            " (0.15 for the bundled model)",
        },
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
        "project": {"type": "string"},
    },
    ["query"],
)
UNIT = {"type": "number", "minimum": 0, "maximum": 1}
# Hybrid's list weights, as the service checks them (not both 0) and as the MCP tool defaults.
FUSION_WEIGHT = {"type": "number", "minimum": 0, "maximum": 10, "default": 0.5}
SEARCH_REQUEST = _object(
    {
        "query": {"type": "string", "minLength": 1},
        "mode": {"type": "string", "enum": list(SEARCH_MODES), "default": "hybrid"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
        "project": {"type": "string"},
        "tag": {"type": "string"},
        "kind": {"type": "string", "enum": list(MEMORY_KINDS)},
        "since": {"type": "string"},
        "before": {"type": "string"},
        "include_archived": {"type": "boolean", "default": False},
        "min_similarity": {
            **UNIT,
            "description": "Semantic cut-off; by default the one measured for the embedding"
            " model (0.15 for the bundled model) in semantic mode, 0 in hybrid mode",
        },
        "keyword_weight": FUSION_WEIGHT,
        "semantic_weight": FUSION_WEIGHT,
    },
    ["query"],
)

SCHEMAS: Schema = {
    "Memory": MEMORY,
    "SimilarMemory": SIMILAR,
    "SavedMemory": SAVED_MEMORY,
    "NotSaved": NOT_SAVED,
    "UpdateOutcome": UPDATE_OUTCOME,
    "MemoryPage": MEMORY_PAGE,
    "BulkDeleteResult": BULK_DELETE,
    "BulkSaveResult": BULK_SAVE,
    "SearchHit": SEARCH_HIT,
    "SearchResponse": SEARCH_RESPONSE,
    "RelatedMemory": RELATED,
    "MemoryVersion": VERSION,
    "Stats": STATS,
    "ProjectSummary": PROJECT,
    "TagCount": TAG,
    "Timeline": TIMELINE,
    "ImportedSession": SESSION,
    "SessionPage": SESSION_PAGE,
    "Preference": PREFERENCE,
    "PreferenceTiers": PREFERENCES,
    "Health": HEALTH,
    "Error": ERROR,
    "CreateMemory": CREATE_MEMORY,
    "BulkCreate": BULK_CREATE,
    "UpdateMemory": UPDATE_MEMORY,
    "RecallRequest": RECALL_REQUEST,
    "SearchRequest": SEARCH_REQUEST,
    "LockRequest": _object({"locked": {"type": "boolean", "default": True}}, []),
    "ResetFailures": _object({"session": {"type": "string"}}, []),
    "SessionStartHook": _object(
        {
            "session_id": {"type": "string"},
            "cwd": {"type": "string", "description": "the session's folder; finds its project"},
            "source": {
                "type": "string",
                "default": "startup",
                "description": "clear and compact let earlier recalls be injected again",
            },
        },
        [],
    ),
    "PromptHook": _object(
        {"session_id": {"type": "string"}, "cwd": {"type": "string"}, "prompt": {"type": "string"}},
        [],
    ),
    "SessionEndHook": _object(
        {
            "session_id": {"type": "string"},
            "cwd": {"type": "string"},
            "transcript_path": {
                "type": "string",
                "description": "absolute path of <config dir>/projects/<project>/<session>.jsonl",
            },
        },
        [],
    ),
    "SessionStartContext": SESSION_START_CONTEXT,
    "PromptContext": PROMPT_CONTEXT,
    "ImportStarted": IMPORT_STARTED,
}


def _query(name: str, schema: Schema, description: str = "") -> Schema:
    parameter: Schema = {"name": name, "in": "query", "required": False, "schema": schema}
    if description:
        parameter["description"] = description
    return parameter


MEMORY_ID = {
    "name": "memory_id",
    "in": "path",
    "required": True,
    "schema": {"type": "integer", "minimum": 1},
}
TEXT = {"type": "string"}
TIME_PARAM = {"type": "string", "description": "ISO 8601, or relative like 7d / 12h / 2w"}
FILTER_PARAMS = [
    _query("project", TEXT, "display name or full path"),
    _query("tag", TEXT),
    _query("kind", {"type": "string", "enum": list(MEMORY_KINDS)}),
    _query("source", TEXT),
    _query("since", TIME_PARAM),
    _query("before", TIME_PARAM),
    _query("include_deleted", {"type": "boolean", "default": False}),
    _query("q", TEXT, "keep memories containing all of these words"),
    _query("include_archived", {"type": "boolean"}, "raw turns archived by distillation too"),
    _query("only_deleted", {"type": "boolean", "default": False}, "soft-deleted memories only"),
    _query("session_id", TEXT, "memories of one session"),
]


def _json(schema: Schema, description: str, links: Schema | None = None) -> Schema:
    response: Schema = {
        "description": description,
        "content": {"application/json": {"schema": schema}},
    }
    if links:
        response["links"] = links
    return response


def _operation(
    operation_id: str,
    summary: str,
    responses: Schema,
    *,
    parameters: list[Schema] | None = None,
    body: str | None = None,
) -> Schema:
    operation: Schema = {
        "operationId": operation_id,
        "summary": summary,
        "responses": {**responses, "default": _json(_ref("Error"), "an error")},
    }
    if parameters:
        operation["parameters"] = parameters
    if body:
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": _ref(body)}},
        }
    return operation


def _memory_links(pointer: str, *targets: str) -> Schema:
    """Links passing the memory id at `pointer` in the response body to operations on it.

    A target is an operationId, or "purgeMemory": deleteMemory with purge=true.
    """
    links: Schema = {}
    for target in targets:
        parameters: Schema = {"path.memory_id": f"$response.body#{pointer}"}
        if target == "purgeMemory":
            parameters["query.purge"] = True
        links[target] = {
            "operationId": "deleteMemory" if target == "purgeMemory" else target,
            "parameters": parameters,
        }
    return links


def _query_links(value: str, targets: dict[str, str]) -> Schema:
    """Links passing `value` (a runtime expression) as the named query parameter of each target."""
    return {
        f"{operation_id}By{parameter.title().replace('_', '')}": {
            "operationId": operation_id,
            "parameters": {f"query.{parameter}": value},
        }
        for operation_id, parameter in targets.items()
    }


def _paths() -> Schema:
    ok = "OK"
    page = [
        _query("limit", {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}),
        _query("offset", {"type": "integer", "minimum": 0, "maximum": 2**63 - 1, "default": 0}),
    ]
    first_memory = _memory_links("/memories/0/id", "getMemory", "updateMemory", "deleteMemory")
    first_hit = _memory_links("/results/0/id", "getMemory", "relatedMemories")
    return {
        "/health": {
            "get": _operation(
                "health",
                "Liveness, database state, model and version",
                {
                    "200": _json(_ref("Health"), "healthy"),
                    "503": _json(_ref("Health"), "the database does not answer"),
                },
            )
        },
        "/cache/invalidate": {
            "post": _operation(
                "invalidateCache",
                "Drop the read cache (batch jobs call this after writing)",
                {"200": _json(_object({"status": {"type": "string"}}), ok)},
            )
        },
        "/api/openapi.json": {
            "get": _operation("openapi", "This document", {"200": _json({"type": "object"}, ok)})
        },
        "/api/stats": {
            "get": _operation(
                "stats", "Counts, storage sizes, sessions", {"200": _json(_ref("Stats"), ok)}
            )
        },
        "/api/projects": {
            "get": _operation(
                "projects",
                "Projects with live memories",
                {
                    "200": _json(
                        {"type": "array", "items": _ref("ProjectSummary")},
                        ok,
                        _query_links(
                            "$response.body#/0/project",
                            {
                                "listMemories": "project",
                                "timeline": "project",
                                "preferences": "project",
                                "listSessions": "project",
                            },
                        ),
                    )
                },
            )
        },
        "/api/tags": {
            "get": _operation(
                "tags",
                "Tags with counts",
                {
                    "200": _json(
                        {"type": "array", "items": _ref("TagCount")},
                        ok,
                        _query_links("$response.body#/0/tag", {"listMemories": "tag"}),
                    )
                },
            )
        },
        "/api/memories": {
            "get": _operation(
                "listMemories",
                "List memories, newest first",
                {"200": _json(_ref("MemoryPage"), ok, first_memory)},
                parameters=[*FILTER_PARAMS, *page],
            ),
            "post": _operation(
                "createMemory",
                "Create a memory (through the write guard)",
                {
                    "201": _json(
                        _ref("SavedMemory"),
                        "saved",
                        _memory_links(
                            "/id",
                            "getMemory",
                            "updateMemory",
                            "deleteMemory",
                            "relatedMemories",
                            "lockMemory",
                        ),
                    ),
                    "200": _json(
                        _ref("NotSaved"),
                        "not saved: already there or too close",
                        _memory_links(
                            "/id", "getMemory", "updateMemory", "deleteMemory", "restoreMemory"
                        ),
                    ),
                },
                body="CreateMemory",
            ),
            "delete": _operation(
                "bulkDeleteMemories",
                "Soft-delete every memory matching project, tag and/or source",
                {"200": _json(_ref("BulkDeleteResult"), ok)},
                parameters=[
                    _query("project", TEXT),
                    _query("tag", TEXT),
                    _query("source", TEXT),
                    _query("all", {"type": "boolean", "default": False}),
                    _query("dry_run", {"type": "boolean", "default": True}),
                ],
            ),
        },
        "/api/memories/bulk": {
            "post": _operation(
                "createMemories",
                "Create up to 1,000 memories in one transaction",
                {
                    "200": _json(
                        _ref("BulkSaveResult"),
                        "per-item outcomes",
                        _memory_links("/items/0/id", "getMemory", "updateMemory", "deleteMemory"),
                    )
                },
                body="BulkCreate",
            )
        },
        "/api/memories/{memory_id}": {
            "get": _operation(
                "getMemory",
                "One memory",
                {
                    "200": _json(
                        _ref("Memory"),
                        ok,
                        _memory_links(
                            "/id",
                            "updateMemory",
                            "deleteMemory",
                            "restoreMemory",
                            "relatedMemories",
                            "lockMemory",
                        ),
                    )
                },
                parameters=[MEMORY_ID],
            ),
            "patch": _operation(
                "updateMemory",
                "Change content, tags, project or kind",
                {
                    "200": _json(
                        _ref("UpdateOutcome"),
                        ok,
                        _memory_links("/memory/id", "getMemory", "deleteMemory", "lockMemory"),
                    )
                },
                parameters=[MEMORY_ID],
                body="UpdateMemory",
            ),
            "delete": _operation(
                "deleteMemory",
                "Soft delete; with purge=true, erase a soft-deleted memory",
                {
                    "200": _json(
                        {
                            "oneOf": [
                                _ref("Memory"),
                                _object({"purged_id": {"type": "integer"}}),
                            ]
                        },
                        "the soft-deleted memory, or the id of the purged one",
                        _memory_links("/id", "restoreMemory", "purgeMemory", "getMemory"),
                    )
                },
                parameters=[MEMORY_ID, _query("purge", {"type": "boolean", "default": False})],
            ),
        },
        "/api/memories/{memory_id}/restore": {
            "post": _operation(
                "restoreMemory",
                "Undo a soft delete",
                {
                    "200": _json(
                        _ref("Memory"),
                        ok,
                        _memory_links("/id", "getMemory", "updateMemory", "deleteMemory"),
                    )
                },
                parameters=[MEMORY_ID],
            )
        },
        "/api/memories/{memory_id}/related": {
            "get": _operation(
                "relatedMemories",
                "Nearest neighbours of a memory",
                {
                    "200": _json(
                        {"type": "array", "items": _ref("RelatedMemory")},
                        ok,
                        _memory_links("/0/id", "getMemory"),
                    )
                },
                parameters=[
                    MEMORY_ID,
                    _query("limit", {"type": "integer", "minimum": 1, "maximum": 100}),
                ],
            )
        },
        "/api/memories/{memory_id}/versions": {
            "get": _operation(
                "memoryVersions",
                "The chain of versions of a memory's fact, oldest first",
                {
                    "200": _json(
                        {"type": "array", "items": _ref("MemoryVersion")},
                        ok,
                        _memory_links("/0/id", "getMemory"),
                    )
                },
                parameters=[MEMORY_ID],
            )
        },
        "/api/recall": {
            "post": _operation(
                "recall",
                "Semantic search with a threshold (kept for compatibility)",
                {"200": _json(_ref("SearchResponse"), ok, first_hit)},
                body="RecallRequest",
            )
        },
        "/api/search": {
            "post": _operation(
                "search",
                "Semantic, keyword or hybrid search, with every score",
                {"200": _json(_ref("SearchResponse"), ok, first_hit)},
                body="SearchRequest",
            )
        },
        "/api/export": {
            "get": _operation(
                "export",
                "Download matching memories (streamed)",
                {
                    "200": {
                        "description": "a download",
                        "content": {
                            "application/json": {"schema": MEMORY_LIST},
                            "application/x-ndjson": {"schema": {"type": "string"}},
                            "text/markdown": {"schema": {"type": "string"}},
                        },
                    }
                },
                parameters=[
                    _query("format", {"type": "string", "enum": list(EXPORT_FORMATS)}),
                    *FILTER_PARAMS,
                ],
            )
        },
        "/api/timeline": {
            "get": _operation(
                "timeline",
                "Newest memories as points, and per-day counts per project",
                {"200": _json(_ref("Timeline"), ok, _memory_links("/points/0/id", "getMemory"))},
                parameters=[
                    _query("project", TEXT),
                    _query("kind", {"type": "string", "enum": list(MEMORY_KINDS)}),
                    _query("since", TIME_PARAM),
                    _query("before", TIME_PARAM),
                    _query("limit", {"type": "integer", "minimum": 1, "maximum": 5000}),
                ],
            )
        },
        "/api/preferences": {
            "get": _operation(
                "preferences",
                "Learned preferences: explicit, signals, inferred",
                {"200": _json(_ref("PreferenceTiers"), ok)},
                parameters=[_query("project", TEXT)],
            )
        },
        "/api/memories/{memory_id}/lock": {
            "post": _operation(
                "lockMemory",
                "Lock a learned preference (explicit tier), or unlock it with locked=false",
                {
                    "200": _json(
                        _ref("Memory"),
                        ok,
                        _memory_links("/id", "getMemory", "updateMemory", "deleteMemory"),
                    )
                },
                parameters=[MEMORY_ID],
                body="LockRequest",
            )
        },
        "/api/sessions/reset-failures": {
            "post": _operation(
                "resetDistillFailures",
                "Make failed sessions (all, or one by id or prefix) pending for distill again",
                {"200": _json(_object({"reset": COUNT}), ok)},
                body="ResetFailures",
            )
        },
        "/api/sessions": {
            "get": _operation(
                "listSessions",
                "Imported sessions with import and learning state",
                {
                    "200": _json(
                        _ref("SessionPage"),
                        ok,
                        {
                            "resetDistillFailures": {
                                "operationId": "resetDistillFailures",
                                "requestBody": {"session": "$response.body#/sessions/0/session_id"},
                            },
                            **_query_links(
                                "$response.body#/sessions/0/session_id",
                                {"listMemories": "session_id"},
                            ),
                        },
                    )
                },
                parameters=[_query("project", TEXT), _query("source", TEXT), *page],
            )
        },
        "/api/hooks/session-start": {
            "post": _operation(
                "hookSessionStart",
                "Claude Code SessionStart hook: the startup context of the session's project",
                {
                    "200": _json(
                        _ref("SessionStartContext"),
                        "context for the session; project is null outside known projects",
                        _query_links("$response.body#/project", {"listMemories": "project"}),
                    )
                },
                body="SessionStartHook",
            )
        },
        "/api/hooks/prompt": {
            "post": _operation(
                "hookPrompt",
                "Claude Code UserPromptSubmit hook: memories relevant to the prompt, each once",
                {"200": _json(_ref("PromptContext"), ok)},
                body="PromptHook",
            )
        },
        "/api/hooks/session-end": {
            "post": _operation(
                "hookSessionEnd",
                "Claude Code Stop/SessionEnd hook: import the transcript in the background",
                {
                    "202": _json(
                        _ref("ImportStarted"), "accepted; the import runs after the answer"
                    ),
                    "400": _json(
                        _ref("Error"),
                        "transcript_path is not an existing <config dir>/projects/<project>/"
                        "<session>.jsonl file",
                    ),
                },
                body="SessionEndHook",
            )
        },
    }


def openapi_document() -> Schema:
    """The whole document; built per call (it is small) so nothing shared can be mutated."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "claude-memory",
            "version": __version__,
            "description": "Persistent, searchable memory for AI coding agents. "
            "Errors are {error: {code, message}}; times are ISO 8601 with time zone.",
        },
        "servers": [{"url": "/"}],
        "paths": _paths(),
        "components": {"schemas": copy.deepcopy(SCHEMAS)},
    }
