"""Secrets pasted into a session never reach the database, through any write path.

One table of credential shapes, written through every way text gets in: a transcript import,
MCP save_memory and update_memory, REST create / update / bulk, and distillation (the scripted
LLM answers with items holding the secrets). After each, every string in every table, the
export, the responses and the log are searched for the secret: none may hold it. Ordinary text
that merely looks similar is written alongside and must be stored exactly as given.

The values are fake, built from repeated characters in each provider's format.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from fastmcp import Client

from server.core.models.memories import MemoryDraft
from server.core.redact import redact
from server.ingest.importer import ImportFilters, SessionImporter
from server.learning.distill import Distiller
from server.learning.llm import ChatClient
from server.service.memory import MemoryService
from tests.llm_stub import Reply, ScriptedLLM
from tests.security.transcripts import conversation, stored_strings, strings_in, write_session

pytestmark = pytest.mark.security

AWS_KEY_ID = "AKIA" + "Z2Y3" * 4
AWS_SECRET = "aB3+" * 9 + "cD4/"
GCP_KEY_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + "q1W2e3R4t5Y6u7I8" * 4
AZURE_ACCOUNT_KEY = "q1W2e3R4t5Y6u7I8o9P0" * 4 + "a1B2c3=="
AZURE_BUS_KEY = "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7Zx6="
AZURE_SAS_SIG = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0uVw%3D"
GITHUB_CLASSIC = "ghp_" + "a1B2" * 9
GITHUB_FINE_GRAINED = "github_pat_" + "11AAAA2BB" * 2 + "0_" + "a1B2c3" * 10
GITHUB_OAUTH = "gho_" + "c3D4" * 9
GITLAB = "glpat-" + "a1B2c3D4e5" * 2
SLACK_BOT = "xoxb-1234567890-1234567890123-" + "a1B2" * 6
SLACK_USER = "xoxp-1234567890-1234567890-1234567890123-" + "ab12" * 8
SLACK_HOOK = "T0ABC1234/B0ABC5678/" + "a1B2" * 6
STRIPE_LIVE = "sk_live_" + "a1B2" * 6
STRIPE_RESTRICTED = "rk_live_" + "e5F6" * 6
OPENAI = "sk-" + "a1B2" * 12
OPENAI_PROJECT = "sk-proj-" + "a1B2_c3D-" * 10 + "xY9"
ANTHROPIC = "sk-ant-api03-" + "a1B2-c3D_" * 10 + "AA"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + "a1B2_c3D-" * 4
PEM_LINES = ("MIIEowIBAAKCAQEA" + "q1W2e3R4t5Y6u7I8" * 3, "Zx9Yw8Vu7Ts6Rq5P" * 4)
URL_PASSWORD = "pa55-W0rd!x"
ENV_PASSWORD = "hunter2!x"
YAML_PASSWORD = "Tr0ub4dor&3"
BEARER = "a1B2c3" * 5
# #65: a token as base64 (a CI secret, a kube Secret), and one the terminal wrapped.
BASE64_TOKEN = "ghs_" + "B64t0k3N" * 5
TOKEN_BASE64 = base64.b64encode(BASE64_TOKEN.encode()).decode()
WRAPPED_TOKEN = "ghp_" + "Wr4pP3d9" * 5


@dataclass(frozen=True, slots=True)
class SecretCase:
    name: str
    text: str  # what the user pasted
    secrets: tuple[str, ...]  # parts of it that must never be stored


SECRETS: tuple[SecretCase, ...] = (
    SecretCase(
        "aws-access-key-id",
        f"CI deploy user: aws_access_key_id = {AWS_KEY_ID} (rotated in March)",
        (AWS_KEY_ID,),
    ),
    SecretCase(
        "aws-secret-access-key",
        f"~/.aws/credentials for ci has aws_secret_access_key = {AWS_SECRET}",
        (AWS_SECRET,),
    ),
    SecretCase(
        "gcp-service-account-json",
        json.dumps(
            {
                "type": "service_account",
                "project_id": "acme-prod",
                "private_key": f"-----BEGIN PRIVATE KEY-----\n{GCP_KEY_BODY}\n"
                "-----END PRIVATE KEY-----\n",
                "client_email": "ci@acme-prod.iam.gserviceaccount.com",
            }
        ),
        (GCP_KEY_BODY,),
    ),
    SecretCase(
        "azure-storage-connection-string",
        "AZURE_STORAGE=DefaultEndpointsProtocol=https;AccountName=acmeprod;"
        f"AccountKey={AZURE_ACCOUNT_KEY};EndpointSuffix=core.windows.net",
        (AZURE_ACCOUNT_KEY,),
    ),
    SecretCase(
        "azure-service-bus-connection-string",
        "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
        f"SharedAccessKey={AZURE_BUS_KEY}",
        (AZURE_BUS_KEY,),
    ),
    SecretCase(
        "azure-sas-url",
        "restore from https://acmeprod.blob.core.windows.net/backups/db.dump?sv=2022-11-02"
        f"&ss=b&srt=o&sp=r&se=2026-12-31T00:00:00Z&sig={AZURE_SAS_SIG}",
        (AZURE_SAS_SIG,),
    ),
    SecretCase("github-classic", f"push from the runner with {GITHUB_CLASSIC}", (GITHUB_CLASSIC,)),
    SecretCase(
        "github-fine-grained",
        f"GH_TOKEN={GITHUB_FINE_GRAINED} gh pr list --state open",
        (GITHUB_FINE_GRAINED,),
    ),
    SecretCase("github-oauth", f"the OAuth app handed back {GITHUB_OAUTH}", (GITHUB_OAUTH,)),
    SecretCase("gitlab", f"the GitLab runner registers with {GITLAB}", (GITLAB,)),
    SecretCase("slack-bot", f"SLACK_BOT_TOKEN={SLACK_BOT}", (SLACK_BOT,)),
    SecretCase("slack-user", f"my user token {SLACK_USER} has chat:write", (SLACK_USER,)),
    SecretCase(
        "slack-webhook",
        f"deploy alerts post to https://hooks.slack.com/services/{SLACK_HOOK}",
        (SLACK_HOOK,),
    ),
    SecretCase("stripe-live", f"the live charge used {STRIPE_LIVE} by mistake", (STRIPE_LIVE,)),
    SecretCase(
        "stripe-restricted", f"reporting job key: {STRIPE_RESTRICTED}", (STRIPE_RESTRICTED,)
    ),
    SecretCase("openai", f"OPENAI_API_KEY={OPENAI}", (OPENAI,)),
    SecretCase(
        "openai-project", f"eval harness project key {OPENAI_PROJECT} works", (OPENAI_PROJECT,)
    ),
    SecretCase("anthropic", f"export ANTHROPIC_API_KEY={ANTHROPIC}", (ANTHROPIC,)),
    SecretCase("jwt", f"the session cookie was {JWT} when it failed", (JWT,)),
    SecretCase(
        "pem-private-key",
        "deploy key:\n-----BEGIN RSA PRIVATE KEY-----\n"
        + "\n".join(PEM_LINES)
        + "\n-----END RSA PRIVATE KEY-----\nkeep it out of git",
        PEM_LINES,
    ),
    SecretCase(
        "url-with-password",
        f"DATABASE_URL=postgres://app:{URL_PASSWORD}@db.internal:5432/app",
        (URL_PASSWORD,),
    ),
    SecretCase(
        "password-assignment",
        f"in .env.production: DB_PASSWORD={ENV_PASSWORD}",
        (ENV_PASSWORD,),
    ),
    SecretCase(
        "password-yaml",
        f"config/database.yml for prod:\n  username: app\n  PASSWORD: {YAML_PASSWORD}\n",
        (YAML_PASSWORD, "Tr0ub4dor"),
    ),
    SecretCase(
        "github-token-base64",
        f"the release job's secret is {TOKEN_BASE64} (base64, as the CI stores it)",
        (TOKEN_BASE64, BASE64_TOKEN),
    ),
    SecretCase(
        "github-token-wrapped",
        f"token as the terminal wrapped it:\n{WRAPPED_TOKEN[:22]}\n{WRAPPED_TOKEN[22:]}\nrotate it",
        (WRAPPED_TOKEN[:22], WRAPPED_TOKEN[22:]),
    ),
    SecretCase(
        "authorization-bearer-header",
        f"curl -H 'Authorization: Bearer {BEARER}' https://api.acme.dev/v1/orders",
        (BEARER,),
    ),
)

IMAGE_NAME_BASE64 = base64.b64encode(b"screenshots/login-page-2026-04-14.png").decode()
LOOKALIKES: tuple[str, ...] = (
    "We compared the sk-learn pipeline with the baseline; sk-learn-contrib has the rest.",
    "Where is the staging key? The key is in 1Password, in the Infra vault.",
    "Fixed in commit 4c1e9a7d2b3f5e6a7b8c9d0e1f2a3b4c5d6e7f80 on main, see the PR.",
    "Session 3f6c2a1e-8b4d-4c9e-a1f7-2d5e9b0c7a41 is the one where the pool leaked.",
    "The password policy requires 12 characters and at least one digit.",
    f"The login thumbnail is stored inline as {IMAGE_NAME_BASE64} in the fixture.",
    "Send the Bearer token in the Authorization header, never in the query string.",
    "Read it with token = get_token() and password = os.environ['DB_PASSWORD'] at start.",
)
TEXTS = tuple(case.text for case in SECRETS) + LOOKALIKES


# A write path: writes TEXTS and returns what it answered its caller (searched for leaks too).
Writer = Callable[[MemoryService, str, Path], Awaitable[list[str]]]


async def through_import(service: MemoryService, app_url: str, tmp_path: Path) -> list[str]:
    projects = tmp_path / "projects"
    write_session(projects, conversation(TEXTS))
    summary = await SessionImporter(service, ImportFilters(min_length=1)).run(projects)
    return [json.dumps(summary.as_json())]


async def through_mcp_save(service: MemoryService, app_url: str, tmp_path: Path) -> list[str]:
    async with Client(f"{app_url}/mcp") as client:
        results = [
            await client.call_tool("save_memory", {"content": text, "force": True})
            for text in TEXTS
        ]
    return [json.dumps(r.structured_content) for r in results]


async def through_mcp_update(service: MemoryService, app_url: str, tmp_path: Path) -> list[str]:
    ids = await placeholders(service)
    async with Client(f"{app_url}/sse") as client:
        results = [
            await client.call_tool(
                "update_memory", {"memory_id": memory_id, "content": text, "force": True}
            )
            for memory_id, text in zip(ids, TEXTS, strict=True)
        ]
    return [json.dumps(r.structured_content) for r in results]


async def through_rest_create(service: MemoryService, app_url: str, tmp_path: Path) -> list[str]:
    async with httpx.AsyncClient(base_url=app_url, timeout=60) as http:
        responses = [
            await http.post("/api/memories", json={"content": text, "force": True})
            for text in TEXTS
        ]
    return [r.text for r in responses]


async def through_rest_update(service: MemoryService, app_url: str, tmp_path: Path) -> list[str]:
    ids = await placeholders(service)
    async with httpx.AsyncClient(base_url=app_url, timeout=60) as http:
        responses = [
            await http.patch(f"/api/memories/{memory_id}", json={"content": text, "force": True})
            for memory_id, text in zip(ids, TEXTS, strict=True)
        ]
    return [r.text for r in responses]


async def through_rest_bulk(service: MemoryService, app_url: str, tmp_path: Path) -> list[str]:
    body = {"memories": [{"content": text} for text in TEXTS], "force": True}
    async with httpx.AsyncClient(base_url=app_url, timeout=60) as http:
        response = await http.post("/api/memories/bulk", json=body)
    return [response.text]


async def through_distill(service: MemoryService, app_url: str, tmp_path: Path) -> list[str]:
    """A benign session is imported; the scripted LLM 'learns' the secrets from it."""
    projects = tmp_path / "projects"
    write_session(projects, conversation([f"Plain remark {n} about the build." for n in range(6)]))
    await SessionImporter(service, ImportFilters(min_length=1)).run(projects)
    items = [{"content": text, "kind": "fact", "tags": ["ops"], "turns": [1]} for text in TEXTS]
    with ScriptedLLM(default=Reply.json({"memories": items})) as llm:
        async with ChatClient(llm.base_url, timeout=10) as client:
            summary = await Distiller(service, client, model="qwen2.5:7b", workers=1).run()
    assert summary.distilled == 1, summary.as_json()
    return [json.dumps(summary.as_json())]


async def placeholders(service: MemoryService) -> list[int]:
    """One dull memory per text, for the update paths to overwrite (one batch: fast)."""
    drafts = [
        MemoryDraft(f"Placeholder note {n}: entry {n} of the inventory list.")
        for n in range(len(TEXTS))
    ]
    result = await service.save_many(drafts, force=True)
    assert result.saved == len(TEXTS)
    return [item.id for item in result.items if item.id is not None]


WRITERS: dict[str, Writer] = {
    "import": through_import,
    "mcp-save_memory": through_mcp_save,
    "mcp-update_memory": through_mcp_update,
    "rest-create": through_rest_create,
    "rest-update": through_rest_update,
    "rest-bulk": through_rest_bulk,
    "distill": through_distill,
}


async def exported(app_url: str) -> list[str]:
    """Every string of the JSON export and the whole Markdown export, deleted rows included."""
    query = "include_deleted=true&include_archived=true"
    async with httpx.AsyncClient(base_url=app_url, timeout=60) as http:
        as_json = await http.get(f"/api/export?format=json&{query}")
        as_markdown = await http.get(f"/api/export?format=markdown&{query}")
    assert as_json.status_code == as_markdown.status_code == 200
    return [*strings_in(as_json.json()), as_markdown.text]


def leaks(corpus: Iterable[tuple[str, str]]) -> str:
    """`case in where` for each secret found anywhere in `corpus` of (where, text), one a line.

    A secret is found by its first 20 characters, so a copy cut short (an error message that
    quotes the start of a reply) counts too.
    """
    return "\n".join(
        sorted(
            {
                f"{case.name} in {where}"
                for where, text in corpus
                for case in SECRETS
                for secret in case.secrets
                if secret[:20] in text
            }
        )
    )


def labelled(where: str, texts: Iterable[str]) -> list[tuple[str, str]]:
    return [(where, text) for text in texts]


@pytest.mark.parametrize("case", SECRETS, ids=lambda case: case.name)
def test_each_credential_shape_is_redacted(case: SecretCase) -> None:
    """The table itself, through redact(): a failure here names the shape the rules miss."""
    result = redact(case.text)

    assert result.count >= 1
    assert [s for s in case.secrets if s in result.text] == []
    assert "[REDACTED:" in result.text


@pytest.mark.parametrize("text", LOOKALIKES)
def test_ordinary_text_that_looks_like_a_secret_is_left_alone(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"PASSWORD: {YAML_PASSWORD}", "PASSWORD: [REDACTED:password]"),
        (
            "https://x.example/login?password=abc123&user=bob",
            "https://x.example/login?password=[REDACTED:password]&user=bob",
        ),
        ("DB_PASSWORD=hunter2&&make test", "DB_PASSWORD=[REDACTED:password]&&make test"),
        (
            f"AccountName=acmeprod;AccountKey={AZURE_ACCOUNT_KEY};EndpointSuffix=x",
            "AccountName=acmeprod;AccountKey=[REDACTED:azure-key];EndpointSuffix=x",
        ),
        (
            f"b.txt?sv=2022-11-02&sp=r&sig={AZURE_SAS_SIG}&foo=1",
            "b.txt?sv=2022-11-02&sp=r&sig=[REDACTED:azure-sas]&foo=1",
        ),
        ("AccessKey=ThisIsJustAVeryLongConfigSettingName", None),
        ("see https://example.com/?sig=short", None),
    ],
)
def test_redaction_replaces_only_the_secret_and_keeps_its_context(
    text: str, expected: str | None
) -> None:
    """Where the secret ends matters as much as where it starts (None: nothing to redact)."""
    assert redact(text).text == (text if expected is None else expected)


@pytest.mark.parametrize("path", WRITERS)
async def test_no_secret_is_stored_exported_returned_or_logged(
    path: str,
    service: MemoryService,
    app_url: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)

    responses = await WRITERS[path](service, app_url, tmp_path)

    assert not (found := leaks(await stored_strings(service.pool))), found
    assert not (found := leaks(labelled("export", await exported(app_url)))), found
    assert not (found := leaks(labelled("response", responses))), found
    assert not (found := leaks([("log", caplog.text)])), found
    async with service.pool.connection() as conn:
        cur = await conn.execute("SELECT content FROM memories")
        contents = {row[0] for row in await cur.fetchall()}
    assert [text for text in LOOKALIKES if text not in contents] == [], "look-alikes mangled"
    redacted = [content for content in contents if "[REDACTED:" in content]
    assert len(redacted) == len(SECRETS)


async def test_an_unusable_llm_reply_quoting_a_secret_leaves_no_copy_in_the_session_state(
    service: MemoryService, tmp_path: Path
) -> None:
    """A broken or hostile LLM endpoint echoes a pasted key; the failure reason is stored."""
    projects = tmp_path / "projects"
    write_session(projects, conversation([f"Plain remark {n} about the build." for n in range(6)]))
    await SessionImporter(service, ImportFilters(min_length=1)).run(projects)
    reply = Reply.text(f"{ANTHROPIC} is the key you pasted; here are no memories")

    with ScriptedLLM(default=reply) as llm:
        async with ChatClient(llm.base_url, timeout=10) as client:
            summary = await Distiller(service, client, model="qwen2.5:7b", workers=1).run()

    assert summary.failed == 1
    assert not (found := leaks(await stored_strings(service.pool))), found


async def test_tool_calls_and_titles_from_transcripts_are_redacted_before_storage(
    service: MemoryService, tmp_path: Path
) -> None:
    """Bash commands are kept as session events and titles on the session row: both are text
    from the transcript, and both reach the database."""
    projects = tmp_path / "projects"
    records = conversation(
        ["Deploy the orders service to staging and tell me when it is up."],
        commands=[
            f"curl -H 'Authorization: Bearer {BEARER}' https://api.acme.dev/v1/deploy",
            f"AWS_SECRET_ACCESS_KEY={AWS_SECRET} ./scripts/deploy.sh",
            f"psql postgres://app:{URL_PASSWORD}@db.internal:5432/app -c 'select 1'",
        ],
        title=f"rotate {GITHUB_CLASSIC} after the leak",
    )
    write_session(projects, records)

    summary = await SessionImporter(service, ImportFilters(min_length=1)).run(projects)

    assert summary.events == 3
    assert not (found := leaks(await stored_strings(service.pool))), found


async def test_secrets_in_tags_and_metadata_are_redacted_on_create_and_update(
    service: MemoryService, app_url: str
) -> None:
    """Tags and REST metadata are free text too: a key pasted there is not stored either."""
    async with httpx.AsyncClient(base_url=app_url, timeout=60) as http:
        created = await http.post(
            "/api/memories",
            json={
                "content": "The deploy script reads its credentials from the vault.",
                "tags": ["deploy", f"token {GITHUB_CLASSIC}"],
                "metadata": {
                    "ticket": "OPS-12",
                    "notes": [f"Authorization: Bearer {BEARER}", {"key": ANTHROPIC}],
                },
            },
        )
        memory_id = created.json()["id"]
        updated = await http.patch(
            f"/api/memories/{memory_id}", json={"tags": ["ops", f"key {ANTHROPIC}"]}
        )

    assert created.status_code == 201 and created.json()["redacted"] == 3
    assert updated.status_code == 200
    assert not (found := leaks(await stored_strings(service.pool))), found
    memory = await service.get(memory_id)
    assert memory.tags[0] == "ops" and memory.tags[1].startswith("key [REDACTED:")
    assert memory.metadata["ticket"] == "OPS-12"


async def test_secrets_in_project_and_source_names_are_redacted_on_create_bulk_and_update(
    service: MemoryService, app_url: str
) -> None:
    """Project and source are names the caller chooses and every teammate of the project is
    shown; a token pasted into one is not stored either (#34)."""
    async with httpx.AsyncClient(base_url=app_url, timeout=60) as http:
        created = await http.post(
            "/api/memories",
            json={
                "content": "The release job signs artifacts with the team's key.",
                "project": f"release token={GITHUB_CLASSIC}",
                "source": f"script {ANTHROPIC}",
            },
        )
        bulk = await http.post(
            "/api/memories/bulk",
            json={
                "memories": [
                    {
                        "content": "Nightly builds run at 02:00.",
                        "source": f"Authorization: Bearer {BEARER}",
                    }
                ]
            },
        )
        moved = await http.patch(
            f"/api/memories/{created.json()['id']}", json={"project": f"ops {GITHUB_CLASSIC}"}
        )

    assert created.status_code == 201 and created.json()["redacted"] == 2, created.text
    assert bulk.status_code == 200 and bulk.json()["items"][0]["redacted"] == 1, bulk.text
    assert moved.status_code == 200 and moved.json()["redacted"] == 1, moved.text
    assert not (found := leaks(await stored_strings(service.pool))), found
    memory = await service.get(created.json()["id"])
    assert memory.project.startswith("ops [REDACTED:")
