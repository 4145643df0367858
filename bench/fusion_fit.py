"""Learned fusion, measured: fit a ranker over hybrid's signals and compare it with the product's.

Reads the candidate files bench/fusion_capture.py writes (team, outside, locomo), describes
every candidate by the signals hybrid search has (similarity and keyword score, each also as a
share of its list's best and as a rank; the dated lists; kind, length, a turn that asks; how new
it is among the candidates, with the question's tense; links), fits two rankers with
scikit-learn and re-orders each question's candidates by them:
- `linear`: pairwise logistic regression (an answering candidate against one that does not,
  feature differences, no intercept), the classic linear learning-to-rank;
- `trees`: gradient-boosted trees on single candidates (answers or not), for interactions.
Each is fitted on LoCoMo's tuning split with the team's corpus (weighted to count as much),
and on LoCoMo's tuning split alone; never on the outside corpus or LoCoMo's held-out split,
which only measure. The product's order is its fused x prior score, before the version rules
(which run after fusion in either case), so the comparison is of the fusion alone.

Per set: @1 (the first candidate answers), mrr (first answering candidate in the top 10) and
r10 (answering candidates in the top 10, as a share of the question's evidence; LoCoMo).

Usage: .venv/bin/python bench/fusion_fit.py [--dir DIR]  (DIR holds team.jsonl, outside.jsonl,
       locomo.jsonl)
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression

KINDS = ("distilled", "note", "preference", "pattern", "behavior", "manual", "trajectory")
PAIRS_PER_QUESTION = 60

Row = dict[str, Any]
Scorer = Callable[[np.ndarray], np.ndarray]


def features(row: Row) -> tuple[list[str], np.ndarray]:
    """One feature vector per candidate; every list-relative signal is relative to this list."""
    candidates = row["candidates"]
    similarities = [c["similarity"] for c in candidates]
    keywords = [c["keyword"] for c in candidates]
    best_similarity = max(max(similarities), 1e-9)
    best_keyword = max(keywords)
    by_similarity = _ranks(similarities)
    by_keyword = _ranks(keywords)
    times = [datetime.fromisoformat(c["created_at"]).timestamp() for c in candidates]
    oldest, span = min(times), max(max(times) - min(times), 1.0)
    present = float(row["tense"] == "present")
    vectors: list[dict[str, float]] = []
    for i, c in enumerate(candidates):
        newness = (times[i] - oldest) / span
        dated = bool(c["has_dated"])
        vector = {
            "similarity": c["similarity"],
            "similarity_share": c["similarity"] / best_similarity,
            "similarity_rank": 1.0 / (1 + by_similarity[i]),
            "keyword_share": c["keyword"] / best_keyword if best_keyword > 0 else 0.0,
            "keyword_rank": 1.0 / (1 + by_keyword[i]) if c["keyword"] > 0 else 0.0,
            "keyword_none": float(c["keyword"] <= 0),
            "dated_similarity": (c["semantic_dated"] or 0.0) / best_similarity if dated else 0.0,
            "dated_keyword": (
                (c["keyword_dated"] or 0.0) / best_keyword if dated and best_keyword > 0 else 0.0
            ),
            "in_period": float(c["semantic_dated"] is not None or c["keyword_dated"] is not None),
            "asks": float(c["asks"]),
            "length": math.log(max(c["length"], 1)) / math.log(1000),
            "newness": newness,
            "newness_present": newness * present,
            "newness_past": newness * (1.0 - present),
            "general": float(c["general"]),
            "superseded_present": float(c["superseded"]) * present,
            "superseded_past": float(c["superseded"]) * (1.0 - present),
            "supersedes": float(c["supersedes"]),
            **{f"kind_{kind}": float(c["kind"] == kind) for kind in KINDS},
        }
        vectors.append(vector)
    names = list(vectors[0])
    return names, np.array([[v[n] for n in names] for v in vectors])


def _ranks(values: list[float]) -> dict[int, int]:
    order = sorted(range(len(values)), key=lambda i: -values[i])
    return {index: rank for rank, index in enumerate(order)}


def fit_linear(training: list[tuple[list[Row], float]]) -> tuple[list[str], Scorer]:
    rng = np.random.default_rng(0)
    differences: list[np.ndarray] = []
    weights: list[float] = []
    names: list[str] = []
    for rows, weight in training:
        for row in rows:
            if not row["candidates"]:
                continue
            names, matrix = features(row)
            good = [i for i, c in enumerate(row["candidates"]) if c["answers"]]
            bad = [i for i, c in enumerate(row["candidates"]) if not c["answers"]]
            pairs = [(g, b) for g in good for b in bad]
            if len(pairs) > PAIRS_PER_QUESTION:
                chosen = rng.choice(len(pairs), PAIRS_PER_QUESTION, replace=False)
                pairs = [pairs[j] for j in chosen]
            for g, b in pairs:
                differences.append(matrix[g] - matrix[b])
                weights.append(weight / len(pairs))
    x = np.array(differences)
    model = LogisticRegression(C=1.0, fit_intercept=False, max_iter=2000)
    model.fit(
        np.vstack([x, -x]),
        np.r_[np.ones(len(x)), np.zeros(len(x))],
        sample_weight=np.r_[weights, weights],
    )
    coefficients = model.coef_[0]
    return names, lambda matrix: matrix @ coefficients


def fit_trees(training: list[tuple[list[Row], float]]) -> Scorer:
    rows_x: list[np.ndarray] = []
    labels: list[int] = []
    weights: list[float] = []
    for rows, weight in training:
        for row in rows:
            if not row["candidates"]:
                continue
            _, matrix = features(row)
            for i, c in enumerate(row["candidates"]):
                rows_x.append(matrix[i])
                labels.append(int(c["answers"]))
                weights.append(weight / len(row["candidates"]))
    model = HistGradientBoostingClassifier(
        max_depth=3, max_iter=150, learning_rate=0.05, l2_regularization=1.0
    )
    model.fit(np.array(rows_x), np.array(labels), sample_weight=np.array(weights))
    return lambda matrix: model.predict_proba(matrix)[:, 1]


def evaluate(rows: list[Row], scorer: Scorer | None) -> dict[str, float]:
    """@1, mrr and r10 with candidates ordered by `scorer` (None: the product's score)."""
    first: list[float] = []
    reciprocal: list[float] = []
    recall: list[float] = []
    for row in rows:
        candidates = row["candidates"]
        if not candidates:
            first.append(0.0)
            reciprocal.append(0.0)
            recall.append(0.0)
            continue
        if scorer is None:
            scores = np.array([c["product_score"] for c in candidates])
        else:
            scores = scorer(features(row)[1])
        order = sorted(range(len(candidates)), key=lambda i: -scores[i])
        labels = [bool(candidates[i]["answers"]) for i in order]
        first.append(float(labels[0]))
        reciprocal.append(next((1.0 / (k + 1) for k, hit in enumerate(labels[:10]) if hit), 0.0))
        recall.append(min(sum(labels[:10]) / row.get("evidence", 1), 1.0))
    return {
        "@1": round(statistics.fmean(first), 3),
        "mrr": round(statistics.fmean(reciprocal), 3),
        "r10": round(statistics.fmean(recall), 3),
    }


def load(path: Path) -> list[Row]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/fusion"))
    args = parser.parse_args()
    team = load(args.dir / "team.jsonl")
    outside = load(args.dir / "outside.jsonl")
    locomo = load(args.dir / "locomo.jsonl")
    tuning = [r for r in locomo if r["split"] == "tuning"]
    held_out = [r for r in locomo if r["split"] == "held_out"]
    sets = {"team": team, "outside": outside, "locomo_tuning": tuning, "locomo_held_out": held_out}
    trainings = {
        "locomo_tuning+team": [(tuning, 1.0), (team, len(tuning) / max(len(team), 1))],
        "locomo_tuning": [(tuning, 1.0)],
    }
    report: dict[str, Any] = {
        "benchmark": "learned-fusion",
        "questions": {name: len(rows) for name, rows in sets.items()},
        "product": {name: evaluate(rows, None) for name, rows in sets.items()},
    }
    for training_name, training in trainings.items():
        names, linear = fit_linear(training)
        trees = fit_trees(training)
        report[f"linear fitted on {training_name}"] = {
            name: evaluate(rows, linear) for name, rows in sets.items()
        }
        report[f"trees fitted on {training_name}"] = {
            name: evaluate(rows, trees) for name, rows in sets.items()
        }
        weights = linear(np.eye(len(names)))
        report[f"linear weights ({training_name})"] = {
            name: round(float(w), 2) for name, w in zip(names, weights, strict=True)
        }
    print(json.dumps(report, indent=2))  # noqa: T201


if __name__ == "__main__":
    main()
