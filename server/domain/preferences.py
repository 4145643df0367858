"""Preferences in tiers with a confidence built from evidence, not from age alone.

Pure: given the stored preference-like memories, the pairs of them that say nearly the same
thing, and the time now, decide each one's tier, confidence and whether a newer one replaces it.

- Tier: `explicit` when saved as a preference by the user or an agent (any source but the
  learning jobs) or locked by the user (`metadata.locked`); `signals` when counted by
  `claude-memory signals` (source `signals`); `inferred` for what an LLM read into sessions
  (source `distill`, or kind `behavior`).
- Evidence: the sessions behind it (`metadata.evidence_count`, else the length of
  `metadata.evidence_sessions`, else the one session it came from), and when it was last
  seen (`metadata.last_seen`, else the memory's update time).
- Confidence: explicit preferences start at 0.9 (1.0 once confirmed). Learned ones start at
  0.5 (signals) or 0.35 (inferred), gain 0.1 for each further supporting session (up to four),
  and fade towards 60% of that as their last evidence ages (half-way in 90 days). A confirmed
  learned preference never falls below 0.95.
- Contradictions: two preferences of one project on the same subject (similarity at or above
  the guard's update threshold) cannot both hold: the newer wins, the older is marked
  `superseded_by` and sorted after the live ones. The `supersedes` column says the same
  explicitly.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from datetime import datetime

import numpy as np

from server.core.errors import ServiceError
from server.core.models.memories import Memory
from server.core.models.views import Preference, PreferenceTier, PreferenceTiers
from server.core.percent import whole_percent
from server.core.timeparse import parse_optional_time

LEARNING_SOURCES = ("signals", "distill", "behavior")
BASE_CONFIDENCE: dict[PreferenceTier, float] = {"explicit": 0.9, "signals": 0.5, "inferred": 0.35}
SESSION_BONUS = 0.1
MAX_BONUS_SESSIONS = 4
FADE_HALF_LIFE_DAYS = 90.0
FADE_FLOOR = 0.6


def tier_of(memory: Memory) -> PreferenceTier:
    if memory.metadata.get("locked") is True:
        return "explicit"
    if memory.source == "signals":
        return "signals"
    if memory.kind == "behavior" or memory.source in LEARNING_SOURCES:
        return "inferred"
    return "explicit"


def _evidence(memory: Memory) -> tuple[int, datetime]:
    sessions = memory.metadata.get("evidence_sessions")
    counted = memory.metadata.get("evidence_count")
    if isinstance(counted, int) and not isinstance(counted, bool):
        count = counted
    elif isinstance(sessions, list):
        count = len({str(s) for s in sessions})
    else:
        count = 1 if memory.metadata.get("session_id") or memory.session_id else 0
    last_seen = memory.updated_at
    raw = memory.metadata.get("last_seen")
    if isinstance(raw, str):
        with contextlib.suppress(ServiceError):
            last_seen = parse_optional_time(raw, "last_seen") or last_seen
    return count, last_seen


def confidence(
    tier: PreferenceTier, sessions: int, last_seen: datetime, confirmed: bool, now: datetime
) -> float:
    if tier == "explicit":
        return 1.0 if confirmed else BASE_CONFIDENCE["explicit"]
    supported = BASE_CONFIDENCE[tier] + SESSION_BONUS * min(
        max(sessions - 1, 0), MAX_BONUS_SESSIONS
    )
    age_days = max((now - last_seen).total_seconds() / 86_400, 0.0)
    fade = FADE_FLOOR + (1 - FADE_FLOOR) * math.pow(0.5, age_days / FADE_HALF_LIFE_DAYS)
    value = supported * fade
    return round(max(value, 0.95) if confirmed else value, 3)


def same_subject_pairs(
    vectors: Sequence[tuple[int, str, np.ndarray]], min_similarity: float
) -> list[tuple[int, int, float]]:
    """(a, b, cosine similarity) for each pair of memories of one project whose stored
    vectors are at least `min_similarity` alike, a before b by id, in id order: what
    `build_tiers` reads as two preferences on one subject. `vectors` is (id, project,
    vector) per memory; a vector without length is like nothing."""
    by_project: dict[str, list[tuple[int, np.ndarray]]] = {}
    for memory_id, project, vector in sorted(vectors, key=lambda row: row[0]):
        by_project.setdefault(project, []).append((memory_id, vector))
    pairs: list[tuple[int, int, float]] = []
    for members in by_project.values():
        if len(members) < 2:
            continue
        matrix = np.array([vector for _, vector in members], dtype=np.float64)
        lengths = np.linalg.norm(matrix, axis=1, keepdims=True)
        unit = np.divide(matrix, lengths, out=np.zeros_like(matrix), where=lengths > 0)
        similarity = unit @ unit.T
        firsts, seconds = np.nonzero(np.triu(similarity >= min_similarity, k=1))
        ids = [memory_id for memory_id, _ in members]
        pairs.extend(
            (ids[i], ids[j], float(similarity[i, j]))
            for i, j in zip(firsts.tolist(), seconds.tolist(), strict=True)
        )
    return sorted(pairs)


def build_tiers(
    memories: Sequence[Memory],
    similar: Sequence[tuple[int, int, float]],
    now: datetime,
    per_tier: int,
) -> PreferenceTiers:
    """Group, score and order; the newer of two same-subject preferences supersedes the older."""
    by_id = {memory.id: memory for memory in memories}
    superseded: dict[int, int] = {}
    for memory in memories:
        if memory.supersedes in by_id:
            superseded[memory.supersedes] = memory.id
    for first, second, _ in similar:
        a, b = by_id.get(first), by_id.get(second)
        if a is None or b is None or a.kind != b.kind:
            continue
        older, newer = sorted((a, b), key=lambda m: (m.created_at, m.id))
        superseded.setdefault(older.id, newer.id)
    tiers: dict[PreferenceTier, list[Preference]] = {"explicit": [], "signals": [], "inferred": []}
    for memory in memories:
        tier = tier_of(memory)
        sessions, last_seen = _evidence(memory)
        confirmed = (
            memory.metadata.get("locked") is True or memory.metadata.get("confirmed") is True
        )
        score = confidence(tier, sessions, last_seen, confirmed, now)
        tiers[tier].append(
            Preference(
                memory=memory,
                tier=tier,
                confidence=score,
                confidence_percent=whole_percent(score),
                evidence_sessions=sessions,
                last_seen=last_seen,
                confirmed=confirmed,
                superseded_by=superseded.get(memory.id),
            )
        )
    for items in tiers.values():
        items.sort(
            key=lambda p: (
                p.superseded_by is not None,
                -p.confidence,
                -p.memory.created_at.timestamp(),
            )
        )
    return PreferenceTiers(
        explicit=tiers["explicit"][:per_tier],
        signals=tiers["signals"][:per_tier],
        inferred=tiers["inferred"][:per_tier],
    )
