"""Links from a newer memory to the older one whose fact it changes: found, set, backfilled.

Every write path that stores memories (save, save_many, imports, distillation) calls
`link_new_memories` in the transaction that inserted them, so a link exists as soon as the
memory does. For each new memory the closest earlier live memories of its project (stored
vectors, nothing re-embedded) are read against it by the rules in
server/domain/supersession_rules.py, most similar first; the first older memory that is still
current and that the new one changes gets the link. A memory supersedes at most one other, so
versions form a chain.

Where an LLM is configured, distillation then asks it about each session's new memories
(server/learning/link_review.py): `review_pairs` gathers what to ask and `apply_verdicts` applies
the answers, each in its own short transaction, the request made between them.

Nothing is deleted or hidden: the older memory stays searchable and says what replaced it.
Memories stored before migration 008 are linked by `backfill`, in batches that each commit
with their progress, so an interrupted run goes on where it stopped.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Sequence

from server.core.errors import InvalidInput, NotFound
from server.core.models.learning import LinkPair, LinkReviewOutcome, LinkVerdict
from server.core.models.memories import MemoryVersion
from server.core.models.output import preview
from server.domain.supersession_rules import Statement, read_statement, replacement_reason
from server.store import memories as memory_store
from server.store import supersessions as links_store
from server.store.tx import Conn, Pool, transaction

logger = logging.getLogger(__name__)

NEIGHBOURS = 8  # earlier memories read against each new one
# Later memories read again with each new one (more than NEIGHBOURS: the new one need not be
# among the closest of theirs for them to be among its closest, nor the other way round).
LATER_NEIGHBOURS = 2 * NEIGHBOURS
BACKFILL_BATCH = 500
USER_REASON = "set by hand"

# The model is asked about a pair the rules left apart only at this similarity or above.
# Under the bundled MiniLM model two unrelated facts that both name their project score up to
# about 0.56 on the name alone ("minimum Node version for acme-api builds" against "acme-api
# deploys with Jenkins"), while a change told in other words scores well above 0.65 (Jenkins
# -> GitHub Actions 0.82, SendGrid -> Amazon SES 0.73, Datadog -> Grafana Loki 0.80). Rule
# links are reviewed whatever their similarity.
REVIEW_MIN_SIMILARITY = 0.65
# A new memory supersedes at most one other, most likely one of its closest; three each lets
# a session of eight new memories show all its candidates within REVIEW_MAX_PAIRS.
REVIEW_PER_MEMORY = 3
# At most this many pairs in the one review request of a session, rule links first: with texts
# cut at 600 characters (learning/link_review.py) the prompt stays under about 10,000 tokens, and
# a smaller model context drops the last pairs rather than overflow.
REVIEW_MAX_PAIRS = 24
CONFIRMED_NOTE = " (confirmed by the model)"
MODEL_REASON = "the model says it replaces #"  # and the older memory's id


async def link_new_memories(conn: Conn, memory_ids: Sequence[int]) -> list[tuple[int, int, str]]:
    """Find and record what each new memory supersedes; returns the (newer, older, reason)
    links that were not there before.

    The later memories near a new one are linked again with it (their links the rules made
    taken back first; a link set by hand or by the model stays), all oldest first, as if they
    had arrived after it: files imported in another order (an older session read last) give
    the links of the order the memories were made in.
    """
    reasons = {"by_hand": USER_REASON, "by_model": MODEL_REASON, "confirmed": CONFIRMED_NOTE}
    later = await links_store.later_relinkable(conn, memory_ids, LATER_NEIGHBOURS, **reasons)
    later = [i for i in later if i not in set(memory_ids)]
    taken_back = await links_store.clear_rule_links(conn, later, **reasons)
    ids = sorted({*memory_ids, *later})
    candidates = await links_store.earlier_neighbours(conn, ids, NEIGHBOURS)
    if not candidates:
        return []
    involved = {c.newer_id for c in candidates} | {c.older_id for c in candidates}
    texts = await links_store.contents(conn, sorted(involved))
    superseded = await links_store.superseded_among(conn, sorted({c.older_id for c in candidates}))
    statements: dict[int, Statement] = {}

    def statement(memory_id: int) -> Statement:
        if memory_id not in statements:
            statements[memory_id] = read_statement(texts.get(memory_id, ""))
        return statements[memory_id]

    links: list[tuple[int, int, str]] = []
    linked: set[int] = set()
    for candidate in candidates:  # grouped by newer memory, oldest newer first, closest first
        if candidate.newer_id in linked or candidate.older_id in superseded:
            continue
        reason = replacement_reason(
            statement(candidate.newer_id), statement(candidate.older_id), candidate.similarity
        )
        if reason is None:
            continue
        links.append((candidate.newer_id, candidate.older_id, reason))
        linked.add(candidate.newer_id)
        superseded.add(candidate.older_id)
    await links_store.set_links(conn, links)
    # A link taken back and made again is no new link.
    links = [link for link in links if taken_back.get(link[0]) != link[1]]
    for newer, older, reason in links:
        logger.info("memory %d supersedes %d (%s)", newer, older, reason)
    return links


async def review_pairs(
    conn: Conn, memory_ids: Sequence[int], rule_links: Sequence[tuple[int, int, str]]
) -> list[LinkPair]:
    """The pairs to put to the model for these new memories: the (newer, older, reason) links
    the rules made for them, then the closest earlier memories they could still supersede (closest
    first), REVIEW_MAX_PAIRS in all."""
    ruled = await links_store.rule_pairs(conn, rule_links)
    nearby = await links_store.review_neighbours(
        conn, memory_ids, min_similarity=REVIEW_MIN_SIMILARITY, per_memory=REVIEW_PER_MEMORY
    )
    return [*ruled, *nearby][:REVIEW_MAX_PAIRS]


def model_reason(older_id: int) -> str:
    """The reason a link the model proposed carries."""
    return f"{MODEL_REASON}{older_id}"


async def apply_verdicts(conn: Conn, verdicts: Sequence[LinkVerdict]) -> LinkReviewOutcome:
    """Apply the model's verdicts, rule links first so a rejected one frees its memory.

    A confirmed rule link keeps its link and its reason says so; a rejected one is cleared and
    its older id joins `supersede_rejected`, so no later linking makes it again. A pair the
    rules left apart that the model says replaces is linked when the newer memory supersedes
    nothing, the older is superseded by nothing and no cycle forms. Each condition is checked
    again by the statement that acts, since another writer may have changed the pair since it
    was read; a verdict that can no longer apply is counted as skipped.
    """
    effects = Counter(
        [await _apply(conn, v) for v in sorted(verdicts, key=lambda v: v.pair.rule_reason is None)]
    )
    return LinkReviewOutcome(
        confirmed=effects["confirmed"],
        rejected=effects["rejected"],
        added=effects["added"],
        skipped=effects["skipped"],
    )


async def _apply(conn: Conn, verdict: LinkVerdict) -> str:
    """What one verdict did: confirmed, rejected, added, skipped, or kept (nothing to do)."""
    pair = verdict.pair
    if pair.rule_reason is not None:
        if verdict.replaces:
            done = await links_store.confirm_link(
                conn, pair.newer_id, pair.older_id, pair.rule_reason, CONFIRMED_NOTE
            )
            return "confirmed" if done else "skipped"
        done = await links_store.reject_link(conn, pair.newer_id, pair.older_id, pair.rule_reason)
        return "rejected" if done else "skipped"
    if not verdict.replaces:
        return "kept"
    if await links_store.chain_reaches(conn, pair.older_id, pair.newer_id):
        return "skipped"
    done = await links_store.link_if_free(
        conn, pair.newer_id, pair.older_id, model_reason(pair.older_id)
    )
    return "added" if done else "skipped"


async def set_link(conn: Conn, newer_id: int, older_id: int | None) -> None:
    """Set by hand (or with None clear) what a memory supersedes; refuses a cycle and a link
    across projects (a version of a fact is of the fact's own project: a write in one project
    never takes over another's memory, #65 H1)."""
    if older_id is not None:
        if older_id == newer_id:
            raise InvalidInput("a memory cannot supersede itself")
        older = await memory_store.get(conn, older_id)
        if older is None:
            raise NotFound(f"memory {older_id} not found (supersedes)")
        newer = await memory_store.get(conn, newer_id)
        if newer is not None and newer.project != older.project:
            raise InvalidInput(
                f"memory {older_id} is of another project ({older.project!r}, not"
                f" {newer.project!r}): a memory supersedes only one of its own project"
            )
        if await links_store.chain_reaches(conn, older_id, newer_id):
            raise InvalidInput(
                f"memory {older_id} already comes after {newer_id} in its chain of versions;"
                " a link cannot form a cycle"
            )
    await links_store.set_link(conn, newer_id, older_id, USER_REASON)


IMPORTED_REASON = "imported with the memory"


async def restore_links(pool: Pool, links: Sequence[tuple[str, str, str]]) -> int:
    """Links an export file carries, as (newer, older) content hashes with their reason; the
    file's link replaces what the rules made at import. A link is made when both memories are
    stored and live and no cycle forms; returns how many were made."""
    if not links:
        return 0
    made = 0
    async with transaction(pool) as conn:
        hashes = sorted({h for newer, older, _ in links for h in (newer, older)})
        rows = {
            m.content_hash: m
            for m in await memory_store.get_by_hashes(conn, hashes)
            if m.deleted_at is None
        }
        for newer_hash, older_hash, reason in links:
            newer, older = rows.get(newer_hash), rows.get(older_hash)
            if newer is None or older is None or newer.id == older.id:
                continue
            if newer.project != older.project:
                continue  # never across projects
            if newer.supersedes == older.id:
                continue
            if await links_store.chain_reaches(conn, older.id, newer.id):
                logger.warning("not restoring %d -> %d: it would form a cycle", newer.id, older.id)
                continue
            await links_store.set_link(conn, newer.id, older.id, reason or IMPORTED_REASON)
            made += 1
    return made


async def memory_versions(pool: Pool, memory_id: int) -> list[MemoryVersion]:
    """The versions of a memory's fact, oldest first: its predecessors, itself, its successors."""
    async with transaction(pool) as conn:
        if await memory_store.get(conn, memory_id) is None:
            raise NotFound(f"no memory with id {memory_id}")
        chain = await links_store.history(conn, memory_id)
        rows = {m.id: m for m in await memory_store.get_many(conn, chain)}
    return [
        MemoryVersion(
            id=m.id,
            created_at=m.created_at,
            kind=m.kind,
            preview=preview(m.content),
            reason=m.supersede_reason,
            deleted=m.deleted_at is not None,
            current=m.deleted_at is None and m.superseded_by is None,
        )
        for m in (rows[i] for i in chain if i in rows)
    ]


async def backfill(pool: Pool, batch_size: int = BACKFILL_BATCH) -> int:
    """Link memories stored before supersession existed; returns how many links it made."""
    made = 0
    while True:
        async with transaction(pool) as conn:
            progress = await links_store.backfill_progress(conn)
            if progress is None or progress[0] >= progress[1]:
                return made
            done_id, up_to_id = progress
            ids = await links_store.backfill_batch(conn, done_id, up_to_id, batch_size)
            made += len(await link_new_memories(conn, ids))
            await links_store.record_backfill(conn, ids[-1] if ids else up_to_id)
        if made:
            logger.info("supersession backfill: %d links so far", made)


async def backfill_in_background(pool: Pool) -> None:
    """The backfill as `serve` runs it beside requests: a failure is logged, not raised, and
    the next start goes on where this one stopped."""
    try:
        made = await backfill(pool)
    except asyncio.CancelledError:
        raise
    except Exception:
        logger.exception("supersession backfill stopped; it goes on at the next start")
    else:
        if made:
            logger.info("supersession backfill done: %d links", made)
