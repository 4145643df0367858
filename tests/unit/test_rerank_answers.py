"""Reading rerankers' answers (server/service/rerank.py): every shape the common endpoints send,
and an LLM's ranking as it may write it; anything else is refused, so the fused order stands."""

from __future__ import annotations

import json
from typing import Any

import pytest

from server.service.rerank import RerankFailed, endpoint_scores, ranking_scores


@pytest.mark.parametrize(
    "body",
    [
        {"results": [{"index": 1, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.2}]},
        [{"index": 1, "score": 0.9}, {"index": 0, "score": 0.2}],
        {"data": [{"index": 0, "relevance_score": 0.2}, {"index": 1, "relevance_score": 0.9}]},
        {
            "results": [
                {"index": 0, "score": 0.2, "document": {"text": "a"}},
                {"index": 1, "score": 0.9},
            ]
        },
    ],
    ids=["llama.cpp-infinity-cohere", "tei", "data", "with-documents"],
)
def test_endpoint_scores_come_back_in_request_order(body: Any) -> None:
    assert endpoint_scores(body, 2) == [0.2, 0.9]


@pytest.mark.parametrize(
    "body",
    [
        {"results": [{"index": 0, "relevance_score": 0.5}]},
        {"results": [{"index": 0, "relevance_score": 0.5}, {"index": 2, "relevance_score": 0.1}]},
        {"results": [{"index": True, "relevance_score": 0.5}, {"index": 1, "score": 0.1}]},
        {"results": [{"index": 0, "relevance_score": "high"}, {"index": 1, "score": 0.1}]},
        {"results": [{"index": 0, "relevance_score": float("nan")}, {"index": 1, "score": 0.1}]},
        {"error": "model not loaded"},
        "warming up",
    ],
    ids=["missing", "out-of-range", "bool-index", "text-score", "nan", "error", "string"],
)
def test_endpoint_answer_without_a_score_per_candidate_is_refused(body: Any) -> None:
    with pytest.raises(RerankFailed):
        endpoint_scores(body, 2)


def test_llm_ranking_puts_named_candidates_first_and_the_rest_in_fused_order() -> None:
    scores = ranking_scores(json.dumps({"ranking": ["[3]", 1, 3, 9, "x"]}), 4)

    order = sorted(range(4), key=lambda i: -scores[i])
    assert order == [2, 0, 1, 3]


@pytest.mark.parametrize(
    "reply",
    ["not json", json.dumps({"ranking": [0, 7]}), json.dumps({"best": 1}), json.dumps([])],
    ids=["prose", "out-of-range", "other-key", "empty"],
)
def test_llm_ranking_naming_no_candidate_is_refused(reply: str) -> None:
    with pytest.raises(RerankFailed):
        ranking_scores(reply, 3)
