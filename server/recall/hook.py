"""What the agents' hooks ask of the server (routes in server/adapters/rest/hooks.py).

- Session start: the startup context of the project the session runs in.
- Prompt recall: a hybrid search with the prompt inside that project (all projects when the
  folder is not a known project). Only hits whose cosine similarity reaches
  CLAUDE_MEMORY_RECALL_THRESHOLD (by default the cut-off measured for the embedding model,
  server/service/cutoffs.py) count, or a little less similar ones that hold enough of the
  prompt's words (`words_needed`; not when another project's memories hold those words far
  better, `asked_elsewhere`), CLAUDE_MEMORY_RECALL_MAX_HITS of them within
  CLAUDE_MEMORY_RECALL_MAX_CHARS (a long one as its statements that name the prompt's words,
  the room that saves going to hits after them, up to CLAUDE_MEMORY_RECALL_ROOM_HITS:
  server/domain/context.py). Beneath them, in the same budget, the next candidates search found
  (CLAUDE_MEMORY_RECALL_INDEX_LINES, none below the index's floor but search's first few,
  `worth_listing`, and none when the prompt is about another project) are listed one line
  each for the agent to open (`get_memory`) if they bear on the task: the bundled model
  decides what is shown in full, the agent what else it reads. No statement is
  shown twice. Nothing found gives an empty answer, so the hook stays silent. A reranker
  the user trusts with the hook (CLAUDE_MEMORY_RERANK_HOOK_MIN_SCORE) decides by its score
  instead, whenever it answers in time. Each fact is shown in full in its current version only
  (a hit another relevant hit superseded is left out), marked "(updated DATE, replaces #id)"
  when the change is recent; the index may list an earlier version, marked as replaced (a
  question about how things were). When the server shares the machine (single-user mode), the
  memories picked are checked against the session's working tree first
  (server/recall/working_tree.py): orphaned ones are left out, drifted ones go last and say
  what changed. When the server cannot (a team's server, or the folder is not on its
  machine), the answer carries their anchors and the hook process checks them
  (server/worktree/context_check.py). Raw turns of the same session are skipped (the
  model still has them in context), and a memory reaches a session at most once: the ids
  already injected are kept per user and session in an in-memory map (`InjectedMemories`, 24 h
  per session), so a teammate who sends another user's session id neither holds back that
  user's recalls nor learns what they were shown. The map is lost when the server restarts; a
  memory may then be injected once more.
- Turn and session end: the session's files are imported at once, in the background, for
  every agent alike (server/ingest/session_imports.py, reached from the routes).

Each hook's receipt (what it injected, server/service/receipts.py) is recorded here, before its
answer goes back to the route, so the session's next hook counts it against the budget.

A prompt is one read of the service and one write: `prompt_recall` reads the folder's project
(found once, then handed on), the names no memory holds, the search, its evidence and the
budget spent, in one transaction; `record_prompt_turn` writes the receipt and the journal's
prompt in one. This module chooses what is shown (the cut-off, the index's candidates: see
`prompt`); server/domain/context.py writes how it reads, for session start too.

The project of a session is found from its `cwd`: the known project whose path is the folder or
contains it, so a session started in a sub-folder of a repository still finds its memories.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from cachetools import TTLCache

from server.core.access import current_viewer, viewer_key
from server.core.config import Settings
from server.core.models.journal import JournalPrompt
from server.core.models.lessons import Lesson
from server.core.models.receipts import CHARS_PER_TOKEN, Injection, estimated_tokens
from server.core.models.search import PromptRead, SearchHit
from server.core.models.views import StartupContext
from server.domain.context import PromptLayout, prompt_markdown
from server.domain.lessons import reason, reminder
from server.domain.use_judge import FETCH_TOOLS
from server.ingest.gemini_messages import without_hook_context
from server.ingest.tool_calls import call_from_hook
from server.recall.cutoff import (
    UNKNOWN_NAME_THRESHOLD,
    asked_elsewhere,
    current_versions,
    index_floor,
    judged_relevant,
    learned_order,
    words_needed,
    worth_listing,
)
from server.recall.working_tree import WORKING_TREES, R, Recalled, hook_check_items
from server.service.face import RecallApi
from server.worktree.context_check import memory_ids_in

logger = logging.getLogger(__name__)

MIN_PROMPT_CHARS = 4  # "ok", "y": nothing to search for
MAX_QUERY_CHARS = 1_000  # the model reads ~256 word pieces; a pasted log adds only noise
CANDIDATES_PER_HIT = 4  # fetched per wanted hit, so already-injected ones can be passed over
SESSION_TTL_SECONDS = 24 * 3600.0
MAX_SESSIONS = 10_000
# Less room than this (in characters) for a session-start context or a lesson is none: a title
# and no memory is noise.
MIN_CONTEXT_CHARS = 200


class InjectedMemories:
    """Per user and session, the ids of memories already injected; sessions expire after a day
    idle. Each is keyed by the user a request acts for (0: nobody, single-user mode) as well as
    the session id, which any caller may send."""

    def __init__(self, ttl: float = SESSION_TTL_SECONDS, max_sessions: int = MAX_SESSIONS) -> None:
        self._sessions: TTLCache[tuple[int, str], frozenset[int]] = TTLCache(
            maxsize=max_sessions, ttl=ttl
        )
        self._listed: TTLCache[tuple[int, str], frozenset[int]] = TTLCache(
            maxsize=max_sessions, ttl=ttl
        )

    def of(self, session_id: str) -> frozenset[int]:
        return self._sessions.get((viewer_key(), session_id), frozenset())

    def add(self, session_id: str, ids: Sequence[int]) -> None:
        self._sessions[(viewer_key(), session_id)] = self.of(session_id) | frozenset(ids)

    def forget(self, session_id: str) -> None:
        self._sessions.pop((viewer_key(), session_id), None)
        self._listed.pop((viewer_key(), session_id), None)

    def listed_of(self, session_id: str) -> frozenset[int]:
        """The ids the session's index lines listed (shown in full later if they count)."""
        return self._listed.get((viewer_key(), session_id), frozenset())

    def add_listed(self, session_id: str, ids: Sequence[int]) -> None:
        self._listed[(viewer_key(), session_id)] = self.listed_of(session_id) | frozenset(ids)


@dataclass(frozen=True, slots=True)
class PromptAnswer:
    """Prompt recall's context, the ids of the memories shown in full in it, `check`: the items
    the hook process checks against the session's tree when this server could not
    (server/worktree/context_check.py), and `listed_ids`: those its index lists."""

    markdown: str
    memory_ids: list[int]
    check: list[Any]
    listed_ids: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class StartAnswer:
    """The session-start context and its `check` items as in PromptAnswer."""

    context: StartupContext
    check: list[Any]


@dataclass(frozen=True, slots=True)
class LessonsAnswer:
    """The lessons that apply to a call, their reminder text, and the reason a strict one gives
    for stopping the call (the first strict lesson, labelled; else "")."""

    lessons: list[Lesson]
    text: str
    reason: str = ""


class HookRecall:
    """The hooks' server side over the service's face; one per app."""

    def __init__(self, service: RecallApi, settings: Settings) -> None:
        self.service = service
        self.threshold = (
            settings.recall_threshold
            if settings.recall_threshold is not None
            else service.cutoffs.recall
        )
        self.threshold_with_words = min(self.threshold, service.cutoffs.recall_with_words)
        # A reranker the user trusts with the hook decides which candidates count; it is shown
        # every candidate down to semantic search's own cut-off (server/recall/cutoff.py).
        self.rerank_min_score = settings.rerank_hook_min_score if settings.rerank_hooks else None
        self.rerank_floor = service.cutoffs.semantic
        self.max_hits = settings.recall_max_hits
        self.max_chars = settings.recall_max_chars
        self.statements = settings.recall_statements
        # Hits past max_hits fill the room statements leave (0 or statements off: none).
        self.room_hits = (
            max(settings.recall_room_hits, self.max_hits) if self.statements else self.max_hits
        )
        self.index_lines = max(settings.recall_index_lines, 0)
        self.index_floor = index_floor(self.threshold, self.threshold_with_words)
        self.start_tokens = settings.context_start_tokens
        self.prompt_tokens = settings.context_prompt_tokens
        self.session_tokens = settings.context_session_tokens
        self.injected = InjectedMemories()
        self.trees = WORKING_TREES

    async def session_start(self, session_id: str, cwd: str, source: str) -> StartAnswer:
        """The startup context for the project of `cwd` (general context when unknown)."""
        if source in ("clear", "compact"):
            # The context that held earlier recalls is gone: they may be recalled again.
            self.injected.forget(session_id)
        project = await self.project_for(cwd)
        shown: list[Recalled] = []

        async def vet(memories: Sequence[R]) -> tuple[list[R], dict[int, str]]:
            kept, drift = await self.trees.checked(cwd, memories)
            shown.extend(kept)
            return kept, drift

        room = await self._room(session_id, self.start_tokens)
        context = await self.service.startup_context(
            project or cwd or None, vet=vet, max_chars=room
        )
        if room < MIN_CONTEXT_CHARS:  # the budget is spent: say nothing rather than a title
            context = replace(context, markdown="")
        receipt = Injection(
            "session_start",
            session_id,
            context.project or "",
            len(context.markdown),
            memory_ids=memory_ids_in(context.markdown),
        )
        if session_id and receipt.memory_ids:
            # Already in the agent's context: prompt recall does not repeat them.
            self.injected.add(session_id, receipt.memory_ids)
        check = self._left_to_the_hook(cwd, shown) if context.markdown else []
        await self._keep(receipt)  # before the answer: the session's next hook counts it
        return StartAnswer(context, check)

    async def prompt(
        self, session_id: str, cwd: str, prompt: str, prompt_id: str = ""
    ) -> PromptAnswer:
        """Context for one prompt and the ids of the memories in it (empty if none fit), the
        prompt journaled with its receipt: one read of the service, one write."""
        query = without_hook_context(prompt).strip()[:MAX_QUERY_CHARS]
        if len(query) < MIN_PROMPT_CHARS:
            if _journaled(session_id, prompt_id, prompt):
                project = await self.project_for(cwd)
                await self._record_turn(None, _entry(session_id, prompt_id, prompt, project))
            return PromptAnswer("", [], [])
        gate = self.rerank_min_score
        # A prompt about a thing no memory mentions asks for a closer match (prompt_names.py).
        named_unknown = max(self.threshold, UNKNOWN_NAME_THRESHOLD)

        def floor(with_words: float) -> float:
            # Down to the lowest similarity that can count: a hit below the cut-off may hold
            # the prompt's words where the word index does not see them (inside an
            # identifier). A reranker gating the hook judges hits the bundled model scores
            # lower still.
            return with_words if gate is None else min(with_words, self.rerank_floor)

        facts = await self.service.prompt_recall(
            PromptRead(
                query,
                cwd,
                session_id,
                limit=min(self.max_hits * CANDIDATES_PER_HIT, 100),
                floor=floor(self.threshold_with_words),
                floor_unknown=floor(named_unknown),
            )
        )
        project, unknown = facts.project, facts.unknown
        result, evidence = facts.result, facts.evidence
        threshold = named_unknown if unknown else self.threshold
        with_words = threshold if unknown else self.threshold_with_words
        seen = self.injected.of(session_id) if session_id else frozenset()
        # Hits already injected too: one that counts still brings the version that replaced it.
        hits = learned_order(result.hits, evidence.use_factors)
        shares = evidence.term_shares
        # A prompt whose words another project's memories hold far better is about that
        # project: its words lend this project's near misses no support.
        elsewhere = asked_elsewhere(evidence.words_here, evidence.words_elsewhere)
        if elsewhere:
            with_words = threshold
        # When the reranker scored the candidates in time, its score alone decides; when it
        # was late or down, the similarity rules do.
        judge = gate if result.reranked_by is not None else None

        def counts(hit: SearchHit) -> bool:
            if judge is not None:
                return judged_relevant(hit, judge)
            needed = words_needed(hit.similarity or 0.0, threshold, with_words)
            return needed is not None and shares.get(hit.id, 0.0) >= needed

        def new_here(hit: SearchHit) -> bool:
            return hit.id not in seen and not (
                session_id and hit.kind == "raw" and hit.session_id == session_id
            )

        relevant = [hit for hit in current_versions(hits, counts) if new_here(hit)]
        # The index: the next candidates, not listed before in this session, an earlier
        # version of a fact too (labelled as replaced: a question about how things were is
        # answered by it); none for a prompt about another project (its near misses here are
        # noise, as for the cut-off).
        listed_before = self.injected.listed_of(session_id) if session_id else frozenset()
        taken = {hit.id for hit in relevant}
        candidates = (
            []
            if elsewhere or not self.index_lines
            else [
                hit
                for rank, hit in enumerate(hits)
                if hit.id not in taken and hit.id not in listed_before and new_here(hit)
                if worth_listing(
                    hit.similarity or 0.0,
                    shares.get(hit.id, 0.0),
                    self.index_floor,
                    rank=rank,
                    something_counts=bool(relevant),
                )
            ]
        )
        wanted = relevant[: self.room_hits] + candidates[: 2 * self.index_lines]
        vetted, drift = await self.trees.checked(cwd, wanted)
        kept = {hit.id for hit in vetted}
        checked = [hit for hit in vetted if hit.id in taken]
        room = self._room_left(session_id, self.prompt_tokens, facts.spent_tokens) if vetted else 0
        viewer = current_viewer()
        told = prompt_markdown(
            checked,
            [hit for hit in candidates if hit.id in kept],
            min(self.max_chars, room),
            drift,
            query,
            viewer.name if viewer else None,
            PromptLayout(self.statements, self.max_hits, self.index_lines),
            evidence.statements,
        )
        text, shown, listed = told.markdown, told.shown, told.listed
        check = self._left_to_the_hook(cwd, [hit for hit in checked if hit.id in set(shown)])
        if session_id and shown:
            self.injected.add(session_id, shown)
        if session_id and listed:
            self.injected.add_listed(session_id, listed)
        logger.info(
            "prompt recall: %d of %d hits injected, %d listed, in %.0f ms%s%s",
            len(shown),
            len(result.hits),
            len(listed),
            result.took_ms,
            f" (unknown to memory: {', '.join(unknown)})" if unknown else "",
            f" (the reranker's score decided, at {judge})"
            if judge is not None
            else " (about another project: similarity alone counts)"
            if elsewhere
            else "",
        )
        similarity = {hit.id: hit.similarity or 0.0 for hit in checked}
        receipt = Injection(
            "prompt",
            session_id,
            project or "",
            len(text),
            memory_ids=shown,
            scores=[round(similarity[i], 4) for i in shown],
            cutoff=None if judge is not None else threshold,
            prompt_id=prompt_id,
            listed_ids=listed,
        )
        entry = (
            _entry(session_id, prompt_id, prompt, project)
            if _journaled(session_id, prompt_id, prompt)
            else None
        )
        # Before the answer: the session's next hook counts the receipt.
        await self._record_turn(receipt if text else None, entry)
        return PromptAnswer(text, shown, check, listed)

    def _left_to_the_hook(self, cwd: str, shown: Sequence[Recalled]) -> list[Any]:
        """The check items of what is shown when this server could not check it against the
        tree of `cwd` (a team's server, or a folder not on this machine); else none."""
        if not cwd.strip() or self.trees.checks_here(cwd):
            return []
        return hook_check_items(shown)

    async def _record_turn(self, receipt: Injection | None, entry: JournalPrompt | None) -> None:
        """Record what a prompt left (its receipt, its journal entry) in one write; a failure is
        logged: neither costs the user their recall."""
        try:
            await self.service.record_prompt_turn(receipt, entry)
        except Exception:
            session = receipt.session_id if receipt else entry.session_id if entry else ""
            logger.exception("could not record a prompt of session %s", session)

    async def lessons_before(
        self, session_id: str, cwd: str, tool: str, tool_input: Any
    ) -> LessonsAnswer:
        """The active lessons that apply to a call about to run in the project of `cwd`."""
        project = await self.project_for(cwd)
        lessons = await self.service.lessons_for_call(tool, tool_input, project)
        if not lessons:
            return LessonsAnswer([], "")
        viewer = current_viewer()
        name = viewer.name if viewer else None
        text = reminder(lessons, name)
        strict = [lesson for lesson in lessons if lesson.strictness == "ask"]
        # A lesson has no budget of its own: only what the session has left cuts it.
        room = await self._room(session_id, estimated_tokens(len(text)))
        if len(text) > room:
            text = text[: room - 1].rstrip() + "…" if room >= MIN_CONTEXT_CHARS else ""
        receipt = Injection(
            "lessons", session_id, project or "", len(text), lesson_ids=[x.id for x in lessons]
        )
        await self._keep(receipt)
        return LessonsAnswer(lessons, text, reason(strict[0], name) if strict else "")

    async def _room(self, session_id: str, tokens: int) -> int:
        """Characters a hook may inject: `tokens` of its own budget, within what the session
        has left of CLAUDE_MEMORY_CONTEXT_SESSION_TOKENS by its receipts (a session without an
        id, or with receipts off, has only the hook's own budget)."""
        spent = await self.service.injected_tokens(session_id)
        return self._room_left(session_id, tokens, spent)

    def _room_left(self, session_id: str, tokens: int, spent: int) -> int:
        """`_room` once the session's `spent` tokens are known."""
        if session_id:
            tokens = min(tokens, self.session_tokens - spent)
        return max(tokens, 0) * CHARS_PER_TOKEN

    async def _keep(self, receipt: Injection) -> None:
        """Record what a hook injected, before its answer goes out, so the session's next hook
        counts it against the budget; a failure is logged and costs the user nothing else."""
        try:
            await self.service.record_injection(receipt)
        except Exception:
            logger.exception("could not record a receipt of session %s", receipt.session_id)

    async def record_call(self, payload: dict[str, Any]) -> bool:
        """Journal one PostToolUse / PostToolUseFailure call; False when it names no call."""
        project = await self.project_for(str(payload.get("cwd") or "")) or ""
        call = call_from_hook(payload, project=project, at=datetime.now(UTC))
        if call is None or not call.session_id:
            return False
        await self.service.record_calls([call])
        opened = _opened_memory(payload) if call.success else None
        if opened is not None:  # an index line the agent opened counts as used
            await self.service.open_listed(call.session_id, opened, call.tool)
        return True

    async def project_for(self, cwd: str) -> str | None:
        """The known project whose path is `cwd` or a parent of it, longest path first."""
        return await self.service.project_at_folder(cwd)


def _opened_memory(payload: dict[str, Any]) -> int | None:
    """The memory id a `get_memory` call (any agent's MCP name for it) fetched; else None."""
    tool = str(payload.get("tool_name") or "")
    given = payload.get("tool_input")
    if not tool.endswith(FETCH_TOOLS) or not isinstance(given, dict):
        return None
    memory_id = given.get("memory_id")
    if isinstance(memory_id, str) and memory_id.isdigit():
        memory_id = int(memory_id)
    return memory_id if isinstance(memory_id, int) and not isinstance(memory_id, bool) else None


def _journaled(session_id: str, prompt_id: str, prompt: str) -> bool:
    """Whether a prompt the hook saw goes in the journal: keyed by Claude Code's prompt id.
    Without one (Claude Code before 2.1.196) it is left to the import of the transcript, which
    keys it the same way, so it is never stored twice."""
    return bool(session_id and prompt_id and prompt.strip())


def _entry(session_id: str, prompt_id: str, prompt: str, project: str | None) -> JournalPrompt:
    return JournalPrompt(session_id, prompt_id, prompt, datetime.now(UTC), project or "")
