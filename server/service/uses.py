"""Whether the agent used what memory injected, and what prompt recall learns from it (#38): a
mixin of MemoryService (server/service/memory.py).

An import (server/ingest/importer.py) hands over what it read the agent do in each session
and which prompts read as corrections (`SessionWork`); `judge_injections` places those actions
after the receipts they follow and asks server/domain/use_judge.py about every memory each
receipt names:

- a prompt's receipt is judged on the actions of that prompt's turn: those the transcript
  files under the receipt's `prompt_id` (Claude Code 2.1+), else those after the receipt and
  before the session's next prompt; its contradiction on that next prompt;
- a session-start receipt on every action after it, against all the session's prompts;
- a memory a prompt's index listed is used when the agent fetched it (`get_memory`), and
  otherwise not judged: the agent chose not to open it. The PostToolUse hook reports such a
  fetch at once (`open_listed`).

A read that holds nothing of a receipt's turn leaves it unjudged; a later read of the same
turn can raise a verdict (server/store/receipts.save_uses). Prompts come from the journal,
which the import has just written. `use_factors` turns a caller's decayed verdicts into a
bounded factor prompt recall multiplies a memory's scores by (`use_factor`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import timedelta

import anyio

from server.core.config import Settings
from server.core.models.journal import AgentAction
from server.core.models.receipts import Receipt, SessionWork, UseCounts, UseJudgement
from server.domain.use_judge import apart, fetched_with, judge_use, memory_terms, read_actions
from server.store import journal as journal_store
from server.store import memories as memory_store
from server.store import receipts as receipt_store
from server.store.journal import PromptRow
from server.store.tx import Conn, Pool, transaction

logger = logging.getLogger(__name__)

# How far a factor moves a memory's scores at most, either way (as far as the kind weights
# do), and how many verdicts' worth of doubt it starts from: one use lifts by
# MAX_LIFT / (1 + PRIOR_VERDICTS), five unused injections sink by 5/8 of MAX_LIFT.
MAX_LIFT = 0.5
PRIOR_VERDICTS = 3.0
CONTRADICTED_WEIGHT = 2.0  # a correction says more than an injection left unused
# A prompt's receipt is written a moment before the transcript's prompt line.
PROMPT_SLACK = timedelta(seconds=5)


def use_factor(counts: UseCounts) -> float:
    """The factor a memory's recall scores are multiplied by: 1 without verdicts, above 1 the
    more it was used, below the more it was injected unused (or contradicted); within
    1 +- MAX_LIFT."""
    net = counts.used - counts.unused - CONTRADICTED_WEIGHT * counts.contradicted
    seen = counts.used + counts.unused + counts.contradicted
    lift = MAX_LIFT * net / (seen + PRIOR_VERDICTS)
    return 1.0 + max(-MAX_LIFT, min(MAX_LIFT, lift))


class Uses:
    """`judge_injections` and `use_factors`, for MemoryService."""

    pool: Pool
    settings: Settings

    async def judge_injections(self, work: Sequence[SessionWork]) -> int:
        """Judge the receipts of these sessions against what the agent did; how many
        verdicts were written or raised."""
        sessions = {w.session_id: w for w in work if w.actions}
        if not sessions:
            return 0
        async with transaction(self.pool) as conn:
            receipts = await receipt_store.judgeable(conn, list(sessions))
            if not receipts:
                return 0
            prompts = await journal_store.sessions_prompts(conn, list(sessions))
            ids = sorted({i for r in receipts for i in r.memory_ids})
            contents = {m.id: m.content for m in await memory_store.get_many(conn, ids)}
        # Reading every action against every memory's terms is CPU work: off the event loop.
        judgements = await anyio.to_thread.run_sync(
            _judge_all, receipts, sessions, prompts, contents
        )
        async with transaction(self.pool) as conn:  # verdicts only rise: a race loses nothing
            await receipt_store.save_uses(conn, judgements)
        logger.info("judged %d injected memories in %d sessions", len(judgements), len(sessions))
        return len(judgements)

    async def open_listed(self, session_id: str, memory_id: int, tool: str) -> bool:
        """The agent of `session_id` opened memory `memory_id` with `tool`: when a prompt
        receipt of that session listed it in its index, it counts as used there (#67);
        whether one did."""
        if not session_id:
            return False
        async with transaction(self.pool) as conn:
            opened = await receipt_store.open_listed(
                conn, session_id, memory_id, f"opened from the index with {tool}"
            )
        return opened > 0

    async def _use_factors(self, conn: Conn, memory_ids: Sequence[int]) -> dict[int, float]:
        """The caller's recall factor of each memory that has verdicts (`use_factor`); none
        when recall does not learn from use. Read within the caller's transaction
        (`recall_evidence`)."""
        if not self.settings.recall_learns_from_use or not memory_ids:
            return {}
        counts = await receipt_store.use_counts(
            conn, list(memory_ids), self.settings.recall_use_half_life_days
        )
        return {memory_id: use_factor(c) for memory_id, c in counts.items()}


def _judge_all(
    receipts: list[Receipt],
    sessions: dict[str, SessionWork],
    prompts: list[PromptRow],
    contents: dict[int, str],
) -> list[UseJudgement]:
    by_session: dict[str, list[PromptRow]] = {}
    for prompt in prompts:
        by_session.setdefault(prompt.session_id, []).append(prompt)
    judgements: list[UseJudgement] = []
    for receipt in receipts:
        judgements += _judge_receipt(
            receipt, sessions[receipt.session_id], by_session.get(receipt.session_id, []), contents
        )
    return judgements


def _judge_receipt(
    receipt: Receipt,
    work: SessionWork,
    prompts: list[PromptRow],
    contents: dict[int, str],
) -> list[UseJudgement]:
    if receipt.hook == "prompt":
        turn, asked, correction = _prompt_turn(receipt, work, prompts)
    else:
        turn = [a for a in work.actions if a.at is None or a.at >= receipt.at - PROMPT_SLACK]
        asked, correction = " ".join(p.text for p in prompts), None
    if not turn:
        return []
    asked = f"{asked} {receipt.project}"
    seen = read_actions(turn)
    shown = [i for i in dict.fromkeys(receipt.memory_ids) if i in contents]
    terms = apart([memory_terms(contents[memory_id]) for memory_id in shown])
    judgements = []
    for memory_id, own in zip(shown, terms, strict=True):
        judged = judge_use(memory_id, own, asked, seen, correction)
        judgements.append(
            UseJudgement(receipt.id, memory_id, receipt.at, judged.verdict, judged.evidence)
        )
    # An index line counts as used when the agent opened it; one left unopened gets no verdict.
    for memory_id in dict.fromkeys(receipt.listed_ids):
        tool = fetched_with(memory_id, seen)
        if tool is not None and memory_id not in receipt.memory_ids:
            evidence = f"opened from the index with {tool}"
            judgements.append(UseJudgement(receipt.id, memory_id, receipt.at, "used", evidence))
    return judgements


def _prompt_turn(
    receipt: Receipt, work: SessionWork, prompts: list[PromptRow]
) -> tuple[list[AgentAction], str, str | None]:
    """The actions of the turn a prompt's receipt was injected into, the prompt's text, and
    the quote of the next prompt when the import read it as a correction."""
    index, keyed = _prompt_index(receipt, prompts)
    after = receipt.at - PROMPT_SLACK
    later = [p.at for p in prompts[index + 1 :] if p.at is not None] if index >= 0 else []
    until = later[0] if later else None

    def in_turn(action: AgentAction) -> bool:
        if keyed and action.prompt_key:
            return action.prompt_key == receipt.prompt_id
        # No key to go by (older transcripts; a read that starts mid-turn): by time.
        at = action.at
        return at is not None and at >= after and (until is None or at < until)

    turn = [a for a in work.actions if in_turn(a)]
    asked = prompts[index].text if index >= 0 else ""
    following = prompts[index + 1] if 0 <= index < len(prompts) - 1 else None
    quote = work.corrections.get(following.prompt_key) if following is not None else None
    return turn, asked, f'"{quote}"' if quote else None


def _prompt_index(receipt: Receipt, prompts: list[PromptRow]) -> tuple[int, bool]:
    """Where the receipt's prompt is in the session's prompts, and whether it was found by
    its key: by the hook's prompt id when the journal files the prompt under it (Claude Code),
    else the first prompt written from a moment before the receipt on; -1 when none is."""
    if receipt.prompt_id:
        for index, prompt in enumerate(prompts):
            if prompt.prompt_key == receipt.prompt_id:
                return index, True
    timed = (
        index
        for index, prompt in enumerate(prompts)
        if prompt.at is not None and prompt.at >= receipt.at - PROMPT_SLACK
    )
    return next(timed, -1), False
