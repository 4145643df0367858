"""Receipts for what memory injects into an agent's context (issue #38)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Literal

from server.core.models.journal import AgentAction

InjectionHook = Literal["session_start", "prompt", "lessons"]
Verdict = Literal["unused", "used", "contradicted"]
VERDICTS: tuple[Verdict, ...] = ("unused", "used", "contradicted")  # each outranks the one before
INJECTION_HOOKS: tuple[InjectionHook, ...] = ("session_start", "prompt", "lessons")

# Characters per token for the estimate: English prose and code average about four characters
# a token in the tokenizers agents use. An estimate (no tokenizer ships with the server), so a
# receipt says "tokens" of this rule, not of any one model.
CHARS_PER_TOKEN = 4


def estimated_tokens(chars: int) -> int:
    """Tokens of `chars` characters by the CHARS_PER_TOKEN rule, rounded up."""
    return -(-max(chars, 0) // CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class Injection:
    """What one hook call added to the context: recorded as a receipt.

    `memory_ids` in the order the text shows them; `scores` (prompt recall) their similarity to
    the prompt, in the same order, and `cutoff` the similarity at which a memory counts on
    similarity alone (one below it was let in by the prompt's words it holds); None when a
    reranker's score decided (CLAUDE_MEMORY_RERANK_HOOK_MIN_SCORE). `listed_ids`: the
    candidates prompt recall listed one line each beneath them, for the agent to open."""

    hook: InjectionHook
    session_id: str
    project: str
    chars: int
    memory_ids: list[int] = field(default_factory=list)
    lesson_ids: list[int] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    cutoff: float | None = None
    prompt_id: str = ""
    listed_ids: list[int] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return estimated_tokens(self.chars)


@dataclass(frozen=True, slots=True)
class Receipt:
    """One stored injection."""

    id: int
    at: datetime
    hook: str
    session_id: str
    prompt_id: str
    project: str
    memory_ids: list[int]
    lesson_ids: list[int]
    scores: list[float]
    cutoff: float | None
    chars: int
    tokens: int
    listed_ids: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ReceiptFilter:
    """Which receipts to read; None means any."""

    session_id: str | None = None
    project: str | None = None
    hook: str | None = None
    since: datetime | None = None
    before: datetime | None = None


@dataclass(frozen=True, slots=True)
class ReceiptTotals:
    """Sums over every receipt a filter matches (not only the page shown)."""

    injections: int
    memories: int  # memory ids injected, counting repeats
    chars: int
    tokens: int
    # of those memories, how many were judged (their session imported) and judged used, or
    # used and then corrected by the user
    judged: int = 0
    used: int = 0
    contradicted: int = 0


@dataclass(frozen=True, slots=True)
class ContextDay:
    """What the hooks injected on one day (UTC) into one project's sessions."""

    day: date
    project: str
    injections: int
    memories: int
    tokens: int
    judged: int = 0
    used: int = 0


@dataclass(frozen=True, slots=True)
class InjectedMemory:
    """A memory the hooks injected, how often, and its start (for the report's top list)."""

    id: int
    injections: int
    preview: str


@dataclass(frozen=True, slots=True)
class JudgedMemory:
    """A memory the hooks injected: how many of its injections were judged, how many of them
    the way its list says (used, unused or contradicted), and its start."""

    id: int
    judged: int
    count: int
    preview: str


@dataclass(frozen=True, slots=True)
class ContextReport:
    """`claude-memory stats --context` and the UI's Context panel: per day and project,
    totals, the most injected, and by their verdicts the memories never used (to retire or
    edit), the most used, and those the user corrected after the agent used them (to review).
    """

    since: datetime
    project: str | None
    totals: ReceiptTotals
    days: list[ContextDay]
    most_injected: list[InjectedMemory]
    never_used: list[JudgedMemory] = field(default_factory=list)
    most_used: list[JudgedMemory] = field(default_factory=list)
    contradicted: list[JudgedMemory] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class UseJudgement:
    """Whether the agent used one memory one receipt injected, and why it is judged so."""

    receipt_id: int
    memory_id: int
    at: datetime  # the receipt's
    verdict: Verdict
    evidence: str


@dataclass(frozen=True, slots=True)
class UseCounts:
    """How a memory fared after injection: judged uses, decayed by age (learning's input)."""

    used: float
    unused: float
    contradicted: float


@dataclass(frozen=True, slots=True)
class SessionWork:
    """What an import read the agent do in one session: the input to judging its receipts."""

    session_id: str
    actions: list[AgentAction]
    # prompt key -> the quote of a prompt that reads as a correction of the agent
    corrections: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ReceiptPage:
    """The newest receipts that match, the totals over all that match, and the verdicts on
    the memories of the receipts shown (once their session was imported)."""

    receipts: list[Receipt]
    totals: ReceiptTotals
    uses: list[UseJudgement] = field(default_factory=list)
