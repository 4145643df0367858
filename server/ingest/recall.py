"""What the agents' hooks ask of the server (routes in server/adapters/hook_routes.py).

- Session start: the startup context of the project the session runs in.
- Prompt recall: a hybrid search with the prompt inside that project (all projects when the
  folder is not a known project). Only hits whose cosine similarity reaches
  CLAUDE_MEMORY_RECALL_THRESHOLD (by default the cut-off measured for the embedding model,
  server/service/cutoffs.py) count, or a little less similar ones that hold enough of the
  prompt's words (`words_needed`), at most CLAUDE_MEMORY_RECALL_MAX_HITS of them, cut to fit
  CLAUDE_MEMORY_RECALL_MAX_CHARS; nothing relevant gives an empty
  answer, so the hook stays silent. Each fact is shown in its current version only
  (a hit another relevant hit superseded is left out), marked "(updated DATE, replaces #id)"
  when the change is recent. When the server shares the machine (single-user mode), the
  memories picked are checked against the session's working tree first
  (server/ingest/recall_check.py): orphaned ones are left out, drifted ones go last and say
  what changed. When the server cannot (a team's server, or the folder is not on its
  machine), the answer carries their anchors and the hook process checks them
  (server/worktree/context_check.py). Raw turns of the same session are skipped (the
  model still has them in context), and a memory reaches a session at most once: the ids
  already injected are kept per user and session in an in-memory map (`InjectedMemories`, 24 h
  per session), so a teammate who sends another user's session id neither holds back that
  user's recalls nor learns what they were shown. The map is lost when the server restarts; a
  memory may then be injected once more.
- Turn and session end: the session's files are imported at once, in the background, for
  every agent alike (server/ingest/session_imports.py).

The project of a session is found from its `cwd`: the known project whose path is the folder or
contains it, so a session started in a sub-folder of a repository still finds its memories.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from cachetools import TTLCache

from server.core.access import current_viewer, viewer_key
from server.core.config import Settings
from server.core.models.journal import JournalPrompt
from server.core.models.lessons import Lesson
from server.core.models.memories import MemoryFilter
from server.core.models.receipts import CHARS_PER_TOKEN, Injection, estimated_tokens
from server.core.models.search import SearchHit
from server.core.models.views import StartupContext
from server.domain.context import HEADER, author, changed_note, flat
from server.domain.lessons import reason, reminder
from server.domain.statement_versions import topic_words
from server.domain.statements import statement_spans
from server.ingest.gemini_messages import without_hook_context
from server.ingest.recall_check import WORKING_TREES, R, Recalled, hook_check_items
from server.ingest.tool_calls import call_from_hook
from server.service.face import MemoryApi
from server.worktree.context_check import memory_ids_in

logger = logging.getLogger(__name__)

MIN_PROMPT_CHARS = 4  # "ok", "y": nothing to search for
MAX_QUERY_CHARS = 1_000  # the model reads ~256 word pieces; a pasted log adds only noise
CANDIDATES_PER_HIT = 4  # fetched per wanted hit, so already-injected ones can be passed over
# The cut-off for a prompt that names something no memory mentions ("which Sentry project...?"
# with nothing ever said about Sentry): only a close match is worth injecting then.
UNKNOWN_NAME_THRESHOLD = 0.6
# Words are evidence beside similarity (docs/BENCHMARKS.md, "Prompt recall: words weighed
# both ways"): sessions written in another voice than the prompt score lower on the model, not
# on the words, and a near hit holding none of the prompt's words is most often noise. A hit at
# the cut-off counts on similarity alone; below it, down to the model's `recall_with_words`
# (server/service/cutoffs.py), it must also hold a share of the prompt's rarity-weighted words
# that grows as its similarity falls, to this share at that floor.
RECALL_WORDS_AT_FLOOR = 0.7
# A long hit cut to its share of the budget starts at the statement (of its first forty) that
# names most of the prompt's words, when that statement would not be shown from the start.
MAX_FOCUS_STARTS = 40
MIN_FOCUS_CHARS = 40
# With `recall_statements`, a long memory's first statement up to this long is shown before
# the statements that answer, as its subject or title.
MAX_SUBJECT_CHARS = 120
SESSION_TTL_SECONDS = 24 * 3600.0
MAX_SESSIONS = 10_000
RECALL_TITLE = "# Memory recall for this prompt"
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

    def of(self, session_id: str) -> frozenset[int]:
        return self._sessions.get((viewer_key(), session_id), frozenset())

    def add(self, session_id: str, ids: Sequence[int]) -> None:
        self._sessions[(viewer_key(), session_id)] = self.of(session_id) | frozenset(ids)

    def forget(self, session_id: str) -> None:
        self._sessions.pop((viewer_key(), session_id), None)


@dataclass(frozen=True, slots=True)
class PromptAnswer:
    """Prompt recall's context, the ids of the memories in it, and `check`: the items the
    hook process checks against the session's tree when this server could not
    (server/worktree/context_check.py)."""

    markdown: str
    memory_ids: list[int]
    check: list[Any]
    receipt: Injection | None = None  # what to record of it (server/service/receipts.py)


@dataclass(frozen=True, slots=True)
class StartAnswer:
    """The session-start context, its `check` items as in PromptAnswer, and its receipt."""

    context: StartupContext
    check: list[Any]
    receipt: Injection | None = None


@dataclass(frozen=True, slots=True)
class LessonsAnswer:
    """The lessons that apply to a call, their reminder text, its receipt, and the reason a
    strict one gives for stopping the call (the first strict lesson, labelled; else "")."""

    lessons: list[Lesson]
    text: str
    receipt: Injection | None = None
    reason: str = ""


class HookRecall:
    """The hooks' server side over the service's face; one per app."""

    def __init__(self, service: MemoryApi, settings: Settings) -> None:
        self.service = service
        self.threshold = (
            settings.recall_threshold
            if settings.recall_threshold is not None
            else service.cutoffs.recall
        )
        self.threshold_with_words = min(self.threshold, service.cutoffs.recall_with_words)
        self.max_hits = settings.recall_max_hits
        self.max_chars = settings.recall_max_chars
        self.statements = settings.recall_statements
        # Hits past max_hits fill the room statements leave (0 or statements off: none).
        self.room_hits = (
            max(settings.recall_room_hits, self.max_hits) if self.statements else self.max_hits
        )
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
        return StartAnswer(context, check, receipt)

    async def prompt(
        self, session_id: str, cwd: str, prompt: str, prompt_id: str = ""
    ) -> PromptAnswer:
        """Context for one prompt and the ids of the memories in it; empty if none fit."""
        query = without_hook_context(prompt).strip()[:MAX_QUERY_CHARS]
        if len(query) < MIN_PROMPT_CHARS:
            return PromptAnswer("", [], [])
        project = await self.project_for(cwd)
        # A prompt about a thing no memory mentions asks for a closer match (prompt_names.py).
        unknown = await self.service.unknown_names(query)
        threshold = max(self.threshold, UNKNOWN_NAME_THRESHOLD) if unknown else self.threshold
        with_words = threshold if unknown else self.threshold_with_words
        # Down to the lowest similarity that can count: a hit below the cut-off may hold the
        # prompt's words where the word index does not see them (inside an identifier).
        result = await self.service.search_hybrid(
            query,
            limit=min(self.max_hits * CANDIDATES_PER_HIT, 100),
            min_similarity=with_words,
            where=MemoryFilter(project=project, with_general=True),
            hook=True,
        )
        seen = self.injected.of(session_id) if session_id else frozenset()
        hits = learned_order(result.hits, await self.service.use_factors(_ids(result.hits)))
        # Hits already injected too: one that counts still brings the version that replaced it.
        below = [hit.id for hit in hits if with_words <= (hit.similarity or 0.0) < threshold]
        shares = await self.service.term_shares(query, below) if below else {}

        def counts(hit: SearchHit) -> bool:
            needed = words_needed(hit.similarity or 0.0, threshold, with_words)
            return needed is not None and shares.get(hit.id, 0.0) >= needed

        relevant = [
            hit
            for hit in current_versions(hits, counts)
            if hit.id not in seen
            and not (session_id and hit.kind == "raw" and hit.session_id == session_id)
        ]
        checked, drift = await self.trees.checked(cwd, relevant[: self.room_hits])
        room = await self._room(session_id, self.prompt_tokens) if checked else 0
        viewer = current_viewer()
        text, shown = recall_markdown(
            checked,
            min(self.max_chars, room),
            drift,
            query,
            viewer.name if viewer else None,
            statements=self.statements,
            first=self.max_hits,
        )
        check = self._left_to_the_hook(cwd, [hit for hit in checked if hit.id in set(shown)])
        if session_id and shown:
            self.injected.add(session_id, shown)
        logger.info(
            "prompt recall: %d of %d hits injected in %.0f ms%s",
            len(shown),
            len(result.hits),
            result.took_ms,
            f" (unknown to memory: {', '.join(unknown)})" if unknown else "",
        )
        similarity = {hit.id: hit.similarity or 0.0 for hit in checked}
        receipt = Injection(
            "prompt",
            session_id,
            project or "",
            len(text),
            memory_ids=shown,
            scores=[round(similarity[i], 4) for i in shown],
            cutoff=threshold,
            prompt_id=prompt_id,
        )
        return PromptAnswer(text, shown, check, receipt if shown else None)

    def _left_to_the_hook(self, cwd: str, shown: Sequence[Recalled]) -> list[Any]:
        """The check items of what is shown when this server could not check it against the
        tree of `cwd` (a team's server, or a folder not on this machine); else none."""
        if not cwd.strip() or self.trees.checks_here(cwd):
            return []
        return hook_check_items(shown)

    async def record_prompt(self, session_id: str, cwd: str, prompt_id: str, prompt: str) -> None:
        """Journal a prompt the UserPromptSubmit hook saw, keyed by Claude Code's prompt id.

        Without a prompt id (Claude Code before 2.1.196) the prompt is left to the import of
        the transcript, which keys it the same way, so it is never stored twice. A failure is
        logged: journaling never costs the user their recall.
        """
        if not (session_id and prompt_id and prompt.strip()):
            return
        try:
            project = await self.project_for(cwd) or ""
            entry = JournalPrompt(session_id, prompt_id, prompt, datetime.now(UTC), project)
            await self.service.record_prompts([entry])
        except Exception:
            logger.exception("could not journal a prompt of session %s", session_id)

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
        return LessonsAnswer(lessons, text, receipt, reason(strict[0], name) if strict else "")

    async def _room(self, session_id: str, tokens: int) -> int:
        """Characters a hook may inject: `tokens` of its own budget, within what the session
        has left of CLAUDE_MEMORY_CONTEXT_SESSION_TOKENS by its receipts (a session without an
        id, or with receipts off, has only the hook's own budget)."""
        if session_id:
            try:
                spent = await self.service.injected_tokens(session_id)
            except Exception:  # never cost the user their context over a receipt read
                logger.exception("could not read what session %s was given", session_id)
                spent = 0
            tokens = min(tokens, self.session_tokens - spent)
        return max(tokens, 0) * CHARS_PER_TOKEN

    async def keep_receipt(self, receipt: Injection | None) -> None:
        """Record what a hook injected, before its answer goes out, so the session's next hook
        counts it against the budget; a failure is logged and costs the user nothing else."""
        if receipt is None:
            return
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
        return True

    async def project_for(self, cwd: str) -> str | None:
        """The known project whose path is `cwd` or a parent of it, longest path first."""
        return await self.service.project_at_folder(cwd)


def learned_order(hits: Sequence[SearchHit], factors: Mapping[int, float]) -> list[SearchHit]:
    """The hits with each one's similarity and score multiplied by what recall learned of it
    (server/service/uses.py: below 1 when it was injected and not used, above when used),
    ordered by the new score; as they were when nothing was learned. A factor can sink a hit
    under the cut-off; it cannot lift one search did not return."""
    if not factors:
        return list(hits)
    moved = [
        replace(
            hit,
            similarity=None if hit.similarity is None else hit.similarity * factors[hit.id],
            score=hit.score * factors[hit.id],
        )
        if hit.id in factors
        else hit
        for hit in hits
    ]
    return sorted(moved, key=lambda hit: -hit.score)


def _ids(hits: Sequence[SearchHit]) -> list[int]:
    return [hit.id for hit in hits]


def current_versions(
    hits: Sequence[SearchHit], is_relevant: Callable[[SearchHit], bool]
) -> list[SearchHit]:
    """The relevant hits, each fact in its current version only.

    The version that replaced a relevant hit is relevant with it (search lifted it to that
    hit's place), and a hit whose successor is in the list is left out: the agent is told the
    current fact, not last month's.
    """
    relevant = {hit.id for hit in hits if is_relevant(hit)}
    for hit in hits:
        if hit.id in relevant and hit.superseded_by is not None:
            relevant.add(hit.superseded_by)
    return [
        hit
        for hit in hits
        if hit.id in relevant and (hit.superseded_by is None or hit.superseded_by not in relevant)
    ]


def recall_markdown(
    hits: Sequence[SearchHit],
    max_chars: int,
    drift: Mapping[int, str] | None = None,
    prompt: str = "",
    viewer: str | None = None,
    statements: bool = False,
    first: int | None = None,
) -> tuple[str, list[int]]:
    """The hits as Markdown within `max_chars`, labelled as recalled data; and their ids.

    Each hit's label says who wrote it (`author`, as `viewer` sees it), and its text is put on
    one line, so a memory cannot open a section or pass for another's bullet.

    Each hit gets an equal share of the budget and is cut to it, so the first long one cannot
    crowd out the rest; a hit cut short shows the part that names most of the `prompt`'s words
    (`focused`), or with `statements`, only its statements that name them (`answering`). A
    hit the working tree no longer agrees with carries its `drift` note
    ("drifted: go is now 1.23 (was 1.22)") before its text.

    Only the `first` hits (default: all) share the budget; the ones after them come in rank
    order in the room those left, each its equal share of what is left, while that holds at
    least twice MIN_FOCUS_CHARS.
    """
    asked = topic_words(prompt)
    drift = drift or {}
    if not hits:
        return "", []
    head = f"{RECALL_TITLE}\n\n_{HEADER}_\n"
    first = len(hits) if first is None else max(1, min(first, len(hits)))
    budget = max_chars - len(head)
    share = budget // first
    lines: list[str] = []
    for at, hit in enumerate(hits):
        if at >= first:  # past the first: an equal share of the room left
            share = (budget - sum(len(line) + 1 for line in lines)) // (len(hits) - at)
        project = f", {flat(hit.project).replace(']', ')')}" if hit.project else ""
        by = author(hit.owner, viewer, hit.source, hit.session_id)
        label = (
            f"- {hit.created_at.date().isoformat()} [{hit.kind} #{hit.id}{project}, "
            f"similarity {hit.similarity or 0:.2f}, {by}] "
        )
        room = share - len(label) - 1
        if room < (40 if at < first else 2 * MIN_FOCUS_CHARS):
            break
        checked = f"({drift[hit.id]}) " if hit.id in drift else ""
        notes = checked + changed_note(hit.supersedes, hit.created_at)
        if room - len(notes) < MIN_FOCUS_CHARS:  # the notes fill the room: cut them and all
            text = notes + flat(hit.content)
            lines.append(label + text[: room - 1].rstrip() + "…")
            continue
        fit = answering if statements else focused
        lines.append(label + notes + fit(hit.content, room - len(notes), asked))
    if not lines:
        return "", []
    return head + "\n" + "\n".join(lines), [hit.id for hit in hits[: len(lines)]]


def words_needed(
    similarity: float, threshold: float, floor: float, at_floor: float = RECALL_WORDS_AT_FLOOR
) -> float | None:
    """The share of the prompt's weighted words a hit this similar must hold to be injected:
    none at `threshold` or above, rising in a straight line to `at_floor` at `floor`; None
    below `floor`, where no words make a hit count."""
    if similarity >= threshold:
        return 0.0
    if similarity < floor:
        return None
    return at_floor * (threshold - similarity) / (threshold - floor)


def focused(content: str, room: int, asked: frozenset[str]) -> str:
    """`content` on one line, cut to `room` characters: from its start, or, when the statement
    that names the most of the `asked` words would not be shown whole, from that statement (a
    handbook chunk whose answer is its tenth line). A cut is marked "…" at either end."""
    whole = flat(content)
    if len(whole) <= room:
        return whole
    spans = statement_spans(content)[:MAX_FOCUS_STARTS]
    named = [len(topic_words(content[span.start : span.end]) & asked) for span in spans]
    start = 0
    if named and max(named) > 0:
        best = spans[named.index(max(named))]
        if len(" ".join(content[: best.end].split())) > room - 1:
            start = best.start
    lead = "…" if start else ""
    # Collapsing whitespace only shortens, so twice the room is enough to fill it.
    body = flat(content[start : start + 2 * room])
    return lead + body[: room - len(lead) - 1].rstrip() + "…"


def answering(content: str, room: int, asked: frozenset[str]) -> str:
    """`content` on one line within `room` characters: whole if it fits; else its statements
    that name the most of the `asked` words (at least half as many as the best one does), the
    best first while they fit, shown in their order with "…" where text is left out, after
    the memory's first statement (its subject or title) when that is short. A memory none of
    whose statements names an asked word is `focused` (cut from its start)."""
    whole = flat(content)
    if len(whole) <= room:
        return whole
    spans = statement_spans(content)[:MAX_FOCUS_STARTS]
    named = [len(topic_words(content[span.start : span.end]) & asked) for span in spans]
    best = max(named, default=0)
    if best == 0:
        return focused(content, room, asked)
    ranked = sorted(
        (at for at, count in enumerate(named) if 2 * count >= best),
        key=lambda at: (-named[at], at),
    )
    chosen: list[int] = []
    used = 0
    for at in ranked:
        size = len(flat(content[spans[at].start : spans[at].end])) + 3
        if used + size > room - 2:
            if not chosen:  # the best statement alone is longer than the room: cut it
                lead = "…" if at else ""
                return lead + focused(content[spans[at].start :], room - len(lead), asked)
            continue
        chosen.append(at)
        used += size
    if 0 not in chosen:
        subject = len(flat(content[spans[0].start : spans[0].end])) + 3
        if subject <= MAX_SUBJECT_CHARS and used + subject <= room - 2:
            chosen.append(0)
    chosen.sort()
    parts: list[str] = []
    for place, at in enumerate(chosen):
        gap = at > 0 if place == 0 else at > chosen[place - 1] + 1
        if gap:
            parts.append("…")
        parts.append(flat(content[spans[at].start : spans[at].end]))
    if chosen[-1] < len(spans) - 1 or spans[chosen[-1]].end < len(content.rstrip()):
        parts.append("…")
    return " ".join(parts)
