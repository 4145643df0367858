"""Hostile text in every parameter of every REST operation and MCP tool.

SQL metacharacters, tsquery operators, LIKE and regex wildcards, NUL bytes, lone surrogates,
invalid UTF-8 and 100,000-character strings go into each text parameter (and, over REST, into
every query and path parameter). REST must answer below 500 with our JSON error shape; an MCP
tool must succeed or raise a ToolError with our own message (never the masked "Error calling
tool"); no answer may carry database or Python error text. Searches treat the text literally:
`50%_off` finds the memory that says it, and `%` alone does not match everything.

One database, filled once per module, and one server serve every case.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastmcp import Client
from mcp.types import Tool

from server.adapters.openapi import openapi_document
from server.core.models.memories import MemoryDraft
from server.ingest.importer import ImportFilters, SessionImporter
from server.service.memory import MemoryService
from tests.security.raw_http import RawMcpSession, percent_encoded, send_raw, target
from tests.security.surface import leaked_internals
from tests.security.transcripts import SESSION, conversation, write_session

pytestmark = pytest.mark.security

PAYLOADS: dict[str, str] = {
    "sql": "'; DROP TABLE memories; --",
    "tsquery": "a & | ! :* ( ) <-> 'b' \\",
    "wildcards": "%_% .* [a-z]+ ^$ \\%",
    "nul": "before\x00after",
    "lone-surrogate": "lone \ud800 surrogate \udfff",
    "100k": "overflow " * 11_111 + "x",  # 9 * 11,111 + 1 = 100,000 characters
}

# Our error messages are for people and agents: one screenful, even about a 100k-char input.
MAX_ERROR_CHARS = 2_000

COUPON = "Coupon 50%_off applies to orders over 20 euros, once per customer."
CORPUS = (
    COUPON,
    "The orders service listens on port 4000 behind the gateway.",
    "Deploys go through GitHub Actions when a pull request merges to main.",
    "The rate limiter keeps its buckets in Redis, keyed by API key.",
    "This repository uses pnpm; npm would rewrite the lockfile.",
    "Invoices are numbered per tenant and never reused after a void.",
    "Nightly backups are written with pg_dump in custom format.",
    "Feature flags live in LaunchDarkly; the default is always off.",
)
TARGET = "Target memory that the hostile update and delete requests aim at."


@dataclass(frozen=True, slots=True)
class Corpus:
    ids: dict[str, int]  # content -> id
    target: int


@pytest.fixture(scope="module")
async def corpus(module_service: MemoryService, tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    drafts = [MemoryDraft(text, tags=["corpus"], project="acme-vault") for text in CORPUS]
    saved = await module_service.save_many([*drafts, MemoryDraft(TARGET)], force=True)
    ids = [item.id for item in saved.items if item.id is not None]
    assert len(ids) == len(CORPUS) + 1
    projects = tmp_path_factory.mktemp("hostile") / "projects"
    write_session(projects, conversation([f"Plain remark {n} about invoices." for n in range(3)]))
    await SessionImporter(module_service, ImportFilters(min_length=1)).run(projects)
    return Corpus(dict(zip(CORPUS, ids[:-1], strict=True)), ids[-1])


@pytest.fixture(scope="module")
async def http(module_app_url: str, corpus: Corpus) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=module_app_url, timeout=120) as client:
        yield client


@pytest.fixture(scope="module")
async def mcp(module_app_url: str, corpus: Corpus) -> AsyncIterator[Client[Any]]:
    async with Client(f"{module_app_url}/mcp", timeout=120) as client:
        yield client


# --- REST ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RestCase:
    label: str
    method: str
    path: str
    query: dict[str, str]
    body: dict[str, Any] | None


BASELINE_BODIES: dict[str, dict[str, Any]] = {
    "CreateMemory": {"content": "A baseline memory about hostile input handling."},
    "BulkCreate": {"memories": [{"content": "A baseline bulk memory about hostile input."}]},
    "UpdateMemory": {"tags": ["baseline"]},
    "RecallRequest": {"query": "orders service port"},
    "SearchRequest": {"query": "orders service port"},
    "LockRequest": {},
    "PromoteRequest": {"project": "acme-vault", "accept": [1], "reject": [2]},
    "ResetFailures": {"session": "0000-no-such-session"},
    "SessionStartHook": {"session_id": SESSION, "cwd": "/home/dev/acme-vault"},
    "PromptHook": {
        "session_id": SESSION,
        "cwd": "/home/dev/acme-vault",
        "prompt": "which port does the orders service use?",
    },
    "SessionEndHook": {"session_id": SESSION, "transcript_path": "/nonexistent.jsonl"},
    "NewLesson": {"pattern": "staging", "message": "Use the local stack."},
    "LessonEdit": {"message": "Use the local stack."},
    "LearnTrajectory": {"task": "Fix the flaky orders test", "worked": "Seed the clock."},
    "PreToolHook": {
        "session_id": SESSION,
        "cwd": "/home/dev/acme-vault",
        "tool_name": "Bash",
        "tool_input": {"command": "pnpm test"},
    },
    "ToolHook": {
        "session_id": SESSION,
        "cwd": "/home/dev/acme-vault",
        "tool_name": "Bash",
        "tool_use_id": "toolu_hostile_baseline",
        "tool_input": {"command": "pnpm test"},
        "tool_response": {"stdout": "ok", "stderr": "", "interrupted": False},
    },
}
SKIPPED_PATHS = {"/health", "/api/openapi.json"}  # no parameters


def _schema_name(operation: dict[str, Any]) -> str | None:
    body = operation.get("requestBody")
    if body is None:
        return None
    ref: str = body["content"]["application/json"]["schema"]["$ref"]
    return ref.rsplit("/", 1)[-1]


def rest_cases(payload: str, target: int) -> list[RestCase]:
    """One request per parameter of every operation, with `payload` in that parameter."""
    cases: list[RestCase] = []
    for template, operations in openapi_document()["paths"].items():
        if template in SKIPPED_PATHS:
            continue
        for verb, operation in operations.items():
            method = verb.upper()
            path = template.replace("{memory_id}", str(target))
            schema = _schema_name(operation)
            body = BASELINE_BODIES[schema] if schema else None
            route = f"{method} {template}"
            for parameter in operation.get("parameters", []):
                name = parameter["name"]
                if parameter["in"] == "path":
                    hostile = template.replace("{memory_id}", percent_encoded(payload))
                    cases.append(RestCase(f"{route} path", method, hostile, {}, body))
                else:
                    cases.append(RestCase(f"{route} ?{name}", method, path, {name: payload}, body))
            if schema is not None and body is not None:
                cases.extend(
                    RestCase(f"{route} {label}", method, path, {}, hostile_body)
                    for label, hostile_body in _bodies_with(body, schema, payload)
                )
    return cases


def _bodies_with(
    baseline: dict[str, Any], schema: str, payload: str
) -> list[tuple[str, dict[str, Any]]]:
    """The baseline body with `payload` in each of its schema's text fields, one at a time."""
    schemas = openapi_document()["components"]["schemas"]
    properties: dict[str, Any] = schemas[schema]["properties"]
    bodies: list[tuple[str, dict[str, Any]]] = []
    for name, field in properties.items():
        if field.get("type") == "string":
            bodies.append((name, {**baseline, name: payload}))
        elif field.get("type") == "array" and field["items"].get("type") == "string":
            bodies.append((name, {**baseline, name: [payload]}))
        elif field.get("type") == "array" and name == "memories":
            item_properties = field["items"]["properties"]
            for item_name, item_field in item_properties.items():
                value: Any = payload if item_field.get("type") == "string" else None
                if item_field.get("type") == "array":
                    value = [payload]
                if value is not None:
                    item = {**baseline["memories"][0], item_name: value}
                    bodies.append((f"memories[0].{item_name}", {**baseline, "memories": [item]}))
    return bodies


def rest_problem(response: httpx.Response) -> str | None:
    """Why a REST answer to hostile input is wrong, or None."""
    if response.status_code >= 500:
        return f"HTTP {response.status_code}: {response.text[:200]}"
    leaked = leaked_internals(response.text) if response.status_code >= 400 else []
    if leaked:
        return f"error text has {leaked}: {response.text[:200]}"
    if response.status_code >= 400:
        try:
            error = response.json()["error"]
        except (ValueError, KeyError, TypeError):
            return f"HTTP {response.status_code} without our error shape: {response.text[:200]}"
        if not error.get("code") or not error.get("message"):
            return f"HTTP {response.status_code} without code and message: {error}"
    return None


async def rest_answers(
    base_url: str, payload: str, memory_id: int
) -> list[tuple[str, httpx.Response]]:
    """(case label, response) for `payload` in each parameter of every operation."""
    answers = []
    for case in rest_cases(payload, memory_id):
        body = None if case.body is None else json.dumps(case.body).encode()
        response = await send_raw(base_url, case.method, target(case.path, case.query), body)
        answers.append((case.label, response))
    return answers


@pytest.mark.parametrize("payload", PAYLOADS)
async def test_rest_answers_hostile_text_in_every_parameter_below_500_with_our_error_shape(
    module_app_url: str, corpus: Corpus, payload: str
) -> None:
    answers = await rest_answers(module_app_url, PAYLOADS[payload], corpus.target)
    problems = [
        f"{label}: {problem}"
        for label, response in answers
        if (problem := rest_problem(response)) is not None
    ]

    assert len(answers) >= 60  # every parameter of every operation
    assert not problems, "\n".join(problems)


async def test_rest_refuses_bodies_that_are_not_utf8_with_400(
    http: httpx.AsyncClient, corpus: Corpus
) -> None:
    problems: list[str] = []
    bodies = [
        b'{"content": "caf\xe9 latin-1, not UTF-8"}',
        b'{"query": "\xff\xfe\xfd"}',
        b'{"memories": [{"content": "\xc3\x28 broken sequence"}]}',
    ]
    routes = [
        ("POST", "/api/memories"),
        ("POST", "/api/search"),
        ("POST", "/api/recall"),
        ("POST", "/api/memories/bulk"),
        ("PATCH", f"/api/memories/{corpus.target}"),
        ("POST", "/api/sessions/reset-failures"),
        ("POST", "/api/hooks/prompt"),
    ]
    for method, path in routes:
        for body in bodies:
            response = await http.request(
                method, path, content=body, headers={"content-type": "application/json"}
            )
            if response.status_code != 400 or rest_problem(response) is not None:
                problems.append(f"{method} {path} {body[:12]!r}: HTTP {response.status_code}")

    assert not problems, "\n".join(problems)


async def test_rest_query_strings_with_invalid_utf8_get_no_5xx(
    http: httpx.AsyncClient, corpus: Corpus
) -> None:
    paths = [
        "/api/memories?q=%FF%FE&project=%C3%28",
        "/api/export?tag=%FF&format=json",
        "/api/timeline?project=%80%80",
        "/api/sessions?source=%FF",
        "/api/preferences?project=%FF%00",
        "/api/memories?session_id=%00%FF",
    ]
    statuses = {path: (await http.get(path)).status_code for path in paths}

    assert {path: s for path, s in statuses.items() if s >= 500} == {}


# --- MCP -----------------------------------------------------------------------------------


def _accepts_text(schema: dict[str, Any]) -> bool:
    if schema.get("type") == "string":
        return True
    return any(option.get("type") == "string" for option in schema.get("anyOf", []))


def _accepts_text_list(schema: dict[str, Any]) -> bool:
    options = [schema, *schema.get("anyOf", [])]
    return any(
        option.get("type") == "array" and option.get("items", {}).get("type") == "string"
        for option in options
    )


def mcp_cases(
    tools: list[Tool], payload: str, memory_id: int
) -> list[tuple[str, str, dict[str, Any]]]:
    """(label, tool, arguments) with `payload` in each text parameter of every tool."""
    baseline = {
        "memory_id": memory_id,
        "content": "A baseline memory for hostile input tests.",
        "query": "orders service port",
        "task": "Fix the flaky orders test",
        "worked": "Seed the clock.",
    }
    cases = []
    for tool in tools:
        schema = tool.input_schema
        required = {name: baseline[name] for name in schema.get("required", [])}
        if tool.name == "bulk_delete":
            required["dry_run"] = True  # the payload may be a filter: never act on it
        for name, field in schema.get("properties", {}).items():
            if _accepts_text(field):
                value: Any = payload
            elif _accepts_text_list(field):
                value = [payload]
            else:
                continue
            cases.append((f"{tool.name}({name}=...)", tool.name, {**required, name: value}))
    return cases


def mcp_problem(tool: str, status: int, message: dict[str, Any]) -> str | None:
    """Why an MCP answer to hostile input is wrong, or None.

    A tool may succeed or fail with its own message. The transport may refuse a request it
    cannot parse (a lone surrogate is not valid JSON text for it) with a JSON-RPC error.
    """
    if status >= 500:
        return f"HTTP {status}: {json.dumps(message)[:200]}"
    if "error" in message:
        text = str(message["error"].get("message", ""))
        if message["error"].get("code") not in (-32700, -32602):
            return f"JSON-RPC error {message['error']}"
    else:
        result = message["result"]
        if not result.get("isError"):
            return None
        text = " ".join(str(block.get("text", "")) for block in result.get("content", []))
        if text.strip() == f"Error calling tool {tool!r}":
            return "internal error (masked): the tool raised something other than ToolError"
    if leaked := leaked_internals(text):
        return f"error text has {leaked}: {text[:200]}"
    return None


@pytest.fixture(scope="module")
async def tools(mcp: Client[Any]) -> list[Tool]:
    return list(await mcp.list_tools())


@pytest.fixture(scope="module")
async def raw_mcp(module_app_url: str, corpus: Corpus) -> AsyncIterator[RawMcpSession]:
    async with httpx.AsyncClient(base_url=module_app_url, timeout=120) as http:
        session = RawMcpSession(http)
        await session.start()
        yield session


@pytest.mark.parametrize("payload", PAYLOADS)
async def test_every_mcp_tool_answers_hostile_text_with_a_result_or_a_clear_tool_error(
    raw_mcp: RawMcpSession, tools: list[Tool], corpus: Corpus, payload: str
) -> None:
    cases = mcp_cases(tools, PAYLOADS[payload], corpus.target)
    problems = []
    for label, tool, arguments in cases:
        status, message = await raw_mcp.call_tool(tool, arguments)
        if (problem := mcp_problem(tool, status, message)) is not None:
            problems.append(f"{label}: {problem}")

    assert len(cases) >= 30  # every text parameter of the 22 tools
    assert not problems, "\n".join(problems)


LONG = PAYLOADS["100k"]


async def test_errors_about_a_long_value_quote_only_its_start(
    raw_mcp: RawMcpSession, http: httpx.AsyncClient
) -> None:
    lengths: dict[str, int] = {}
    for name in ("project", "since", "before"):
        _, message = await raw_mcp.call_tool("list_memories", {name: LONG})
        lengths[f"list_memories({name})"] = len(json.dumps(message))
    for name in ("since", "before"):
        response = await http.post("/api/search", json={"query": "orders", name: LONG})
        lengths[f"POST /api/search {name}"] = len(response.text)

    assert {label: n for label, n in lengths.items() if n > MAX_ERROR_CHARS} == {}


async def test_hostile_input_leaves_the_corpus_intact(
    module_service: MemoryService, corpus: Corpus
) -> None:
    """Runs after the payload tests in this module: nothing was dropped or mass-deleted."""
    module_service.invalidate_cache()
    for content, memory_id in corpus.ids.items():
        memory = await module_service.get(memory_id)
        assert (memory.content, memory.deleted_at) == (content, None)


# --- literal search ------------------------------------------------------------------------


async def test_keyword_search_for_50_percent_off_finds_that_memory_first(
    http: httpx.AsyncClient, mcp: Client[Any], corpus: Corpus
) -> None:
    rest = await http.post("/api/search", json={"query": "50%_off", "mode": "keyword"})
    tool = await mcp.call_tool("search_memories", {"query": "50%_off"})
    listed = await http.get("/api/memories", params={"q": "50%_off"})

    assert rest.status_code == 200
    assert rest.json()["hits"][0]["content"] == COUPON
    assert tool.structured_content is not None
    assert tool.structured_content["hits"][0]["content"] == COUPON
    assert [m["content"] for m in listed.json()["memories"]] == [COUPON]


@pytest.mark.parametrize("query", ["%", "_", "%%", "%_%", ".*", "*", "&", "!", ":*", "\\"])
async def test_a_wildcard_or_operator_alone_matches_only_memories_that_contain_it(
    http: httpx.AsyncClient, mcp: Client[Any], corpus: Corpus, query: str
) -> None:
    """Never everything: a hit, if any, holds the character(s) literally."""
    rest = await http.post("/api/search", json={"query": query, "mode": "keyword", "limit": 100})
    tool = await mcp.call_tool("search_memories", {"query": query}, raise_on_error=False)
    listed = await http.get("/api/memories", params={"q": query, "limit": 500})

    assert rest.status_code == 200
    assert all(query in hit["content"] for hit in rest.json()["hits"])
    assert not tool.is_error
    assert tool.structured_content is not None
    assert all(query in hit["content"] for hit in tool.structured_content["hits"])
    assert listed.status_code == 200
    assert all(query in memory["content"] for memory in listed.json()["memories"])


async def test_a_reset_failures_prefix_of_percent_matches_no_session(
    http: httpx.AsyncClient, module_service: MemoryService, corpus: Corpus
) -> None:
    """Session ids are matched by prefix; `%` is a character, not a LIKE wildcard."""
    failures = await module_service.learning.record_distill_failure(SESSION, "scripted failure")

    response = await http.post("/api/sessions/reset-failures", json={"session": "%"})

    sessions = {s.session_id: s for s in (await module_service.sessions()).sessions}
    assert response.status_code == 404
    assert sessions[SESSION].distill_failures == failures >= 1
