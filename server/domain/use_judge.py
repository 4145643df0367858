"""Did the agent use a memory the hooks injected? A judge by rules a reader can check (#38).

After a prompt, the agent acts: tool calls (commands, edits, searches) and its own words. A
memory it used leaves traces there: the memory's distinctive terms, the things only it said
("pnpm-lock.yaml", `sendProblem()`, `HTTP_TIMEOUT=30s`, "Kafka and Debezium"). The judge:

- **terms**: a memory's *strong* terms are its anchors (paths and their file names, symbols,
  setting keys and values, packages and versions: server/domain/anchors.py) and its code-like
  tokens (`user_id`, `p99`, `camelCase`, `pgx.Pool`, `--frozen-lockfile`, numbers of four
  digits or more). Its *plain* terms are the other words of four letters or more that are
  not everyday English or everyday coding talk (COMMON_WORDS), and names ("Debezium").
- **not evidence**: a term the prompt itself says (the agent would use it anyway), and a term
  another memory injected with it names too (`apart`: a project's shared names say the agent
  worked on the project, not which memory it followed).
- **used** when one strong term, or three different plain ones, appear in what the agent did
  after the injection (matched whole, ignoring case), or when the agent fetched the memory
  (`get_memory` with its id).
- **contradicted** when it was used and the user's next prompt reads as a correction of the
  agent (server/learning/corrections.py's cue, the same the signals job uses).
- otherwise **unused**.

Where it guesses: a term can appear for another reason (the agent would have run `pnpm` in a
pnpm repository anyway), so "used" means "acted in line with it", not "needed it"; a memory
whose advice the agent followed in other words ("the lockfile" for "pnpm-lock.yaml") is
judged unused; a correction may be about something else the agent did in the same turn.
Pure functions; the service chooses the actions and prompts (server/service/uses.py) and
reads a turn's actions once (`read_actions`) for all the memories judged on it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from server.core.models.journal import AgentAction
from server.core.models.receipts import Verdict
from server.domain.anchors import anchors_of

MIN_PLAIN_CHARS = 4
PLAIN_TERMS_NEEDED = 3
MAX_EVIDENCE_TERMS = 5
FETCH_TOOLS = ("get_memory",)  # an agent's MCP tool name ends with one of these

# Words too common in English or in talk about code to say which memory the agent followed
# (and the pieces a contraction leaves: "doesn" of "doesn't").
_COMMON = """
    about above across actually added adding after again against agent ahead allow allowed
    allows almost alone along already also although always among another answer anyone
    anything anyway appear apply around asked asking assume available avoid away back based
    basic because become been before began begin behind being believe below best better
    between both break bring broke broken build builds built call called calling calls came
    cannot case cases cause caused causes change changed changes check checked checking checks
    clean clear close code come comes coming command commands comment config confirm context
    could create created creates current data default defaults does doing done down during
    each early easy edit edits either else empty enough entry error errors even ever every
    everything exact example except exist existing exists expect expected explain fact fail
    failed failing fails false fine first five following found four from full function further
    gave gets give given gives going gone good great half handle happen happens hard have
    having help here high however idea important include included includes including info
    inside instead into issue issues itself just keep keeps kept kind know known large last
    later least left less like likely line lines list little live load local long longer look
    looking looks lost made main make makes making many maybe mean means might missing mode
    more most move much must name named names need needed needs never next none note nothing
    number numbers often okay once only open order other others ours over part pass passed
    passes passing path place please point possible probably problem problems project
    projects proper put quite rather read reads ready real really reason recent right rule
    rules same save second seems seen sense sent separate serve server service set sets
    setting settings setup should show shows side simple since single small some something
    sometimes soon sorry start started state still stop such suggest support sure take taken
    takes tell test tested testing tests than thank thanks that their them then there these
    they thing things think this those though three through time times today together told
    took true trying turn turns type types under until update updated updates upon used
    useful user users uses using usual value values version versions very wait want wanted
    wants well went were what when where whether which while whole will wish with within
    without work worked working works would write writes writing written wrong year years
    your yours
    aren couldn didn doesn hasn haven isn shouldn wasn weren won wouldn
    bytes byte chars class column columns commit commits committed copy deploy directory
    field fields file files folder folders import imports lint method module modules object
    python release request requests response return returns rows script scripts string
    strings struct table tables task tasks
"""
COMMON_WORDS = frozenset(_COMMON.split())

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CODE_TOKEN = re.compile(r"(?<![\w.-])-{0,2}[A-Za-z0-9_$][\w$.@/+-]*[\w$]")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
_DOTTED = re.compile(r"\w\.[A-Za-z_]")
_HAS_DIGIT_AND_LETTER = re.compile(r"^(?=.*\d)(?=.*[A-Za-z])")
_BIG_NUMBER = re.compile(r"^\d{4,}$")  # 8080, 1800; not 100 or 500, which any code has
_FLAG = re.compile(r"^--?[a-z][\w-]+$")


@dataclass(frozen=True, slots=True)
class MemoryTerms:
    """What would show that an agent followed a memory: its strong and its plain terms,
    lower-cased, each once, in order."""

    strong: tuple[str, ...]
    plain: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ReadAction:
    """An action as the judge reads it: where it happened, its text lower-cased and its
    words, each computed once for every memory judged against it."""

    tool: str | None
    where: str  # "Bash call", "its reply"
    text: str
    words: frozenset[str]


@dataclass(frozen=True, slots=True)
class Judged:
    """A verdict and what it rests on (for the receipt's reader)."""

    verdict: Verdict
    evidence: str


def memory_terms(text: str) -> MemoryTerms:
    """The terms of a memory's text that its use would leave in the agent's actions."""
    strong: dict[str, None] = {}
    for anchor in anchors_of(text):
        strong[anchor.name.lower()] = None
        if anchor.kind == "path":
            strong[anchor.name.rstrip("/").lower()] = None  # "db/migrate/" as "db/migrate"
            name = anchor.name.rstrip("/").rsplit("/", 1)[-1]
            if len(name) >= MIN_PLAIN_CHARS and "." in name:
                strong[name.lower()] = None
        if anchor.value and _distinctive_value(anchor.value):
            strong[anchor.value.lower()] = None
        if anchor.kind == "version" and (len(anchor.name) < 3 or anchor.name in COMMON_WORDS):
            del strong[anchor.name.lower()]  # "go 1.22", "Python 3.12": the version says it
    for match in _CODE_TOKEN.finditer(text):
        token = match.group(0).rstrip(".")
        if _code_like(token):
            strong[token.lower()] = None
    rest = text  # "lock" of pnpm-lock.yaml says nothing the file name does not
    for term in sorted(strong, key=len, reverse=True):
        rest = _whole(term).sub(" ", rest)
    plain: dict[str, None] = {}
    for match in _WORD.finditer(rest):
        word = match.group(0).lower()
        if len(word) >= MIN_PLAIN_CHARS and word not in COMMON_WORDS and word not in strong:
            plain[word] = None
    return MemoryTerms(tuple(strong), tuple(plain))


def apart(terms: Sequence[MemoryTerms]) -> list[MemoryTerms]:
    """Each memory's terms without those another of `terms` has too: memories injected
    together often share their project's names ("RabbitMQ", "tallyhook-export"), and a shared
    name says the agent worked on the project, not which of them it followed."""
    counts: dict[str, int] = {}
    for one in terms:
        for term in {*one.strong, *one.plain}:
            counts[term] = counts.get(term, 0) + 1
    return [
        MemoryTerms(
            tuple(t for t in one.strong if counts[t] == 1),
            tuple(t for t in one.plain if counts[t] == 1),
        )
        for one in terms
    ]


def read_actions(actions: Iterable[AgentAction]) -> list[ReadAction]:
    """The actions of a turn, read once for every memory judged against them."""
    return [
        ReadAction(
            action.tool,
            f"{action.tool} call" if action.tool else "its reply",
            action.text.lower(),
            _words(action.text),
        )
        for action in actions
    ]


def judge_use(
    memory_id: int,
    terms: MemoryTerms,
    prompt: str,
    actions: Sequence[ReadAction],
    correction: str | None = None,
) -> Judged:
    """Whether the agent used memory `memory_id` (with `terms`) in `actions` (`read_actions`),
    the things it did after the injection in answer to `prompt`; `correction` is the cue and
    quote of the user's next prompt when it reads as a correction of the agent."""
    fetched = fetched_with(memory_id, actions)
    said = _words(prompt)
    strong = [t for t in terms.strong if not _said(t, prompt, said)]
    plain = [t for t in terms.plain if t not in said]
    evidence = ""
    if fetched is not None:
        evidence = f"fetched with {fetched}"
    else:
        found_strong = _found(strong, actions, whole=True)
        found_plain = _found(plain, actions, whole=False)
        if found_strong or len(found_plain) >= PLAIN_TERMS_NEEDED:
            evidence = _describe(found_strong + found_plain)
    if not evidence:
        return Judged("unused", "")
    if correction:
        return Judged("contradicted", f"{evidence}; then the user corrected: {correction}")
    return Judged("used", evidence)


def _distinctive_value(value: str) -> bool:
    word = value.lower()
    if word in ("true", "false", "yes", "no", "on", "off", "none", "null"):
        return False
    if word.isdigit():
        return len(word) >= 3
    return len(word) >= 2 and word not in COMMON_WORDS


def _code_like(token: str) -> bool:
    bare = token.lstrip("-")
    if len(bare) < 3:
        return False
    if _FLAG.match(token) and token.startswith("--"):
        return True
    if _BIG_NUMBER.match(bare):
        return True
    if "_" in bare.strip("_") or _DOTTED.search(bare):
        return True
    if _CAMEL.search(bare) and len(bare) >= 5:  # JetStream, GraphQL; not units like mA, kSPS
        return True
    # p99, es2022, v2; "450ms" and "512Mi", but not "3rd" or "2x"
    return bool(_HAS_DIGIT_AND_LETTER.match(bare)) and (not bare[0].isdigit() or len(bare) >= 4)


def _words(text: str) -> frozenset[str]:
    return frozenset(match.group(0).lower() for match in _WORD.finditer(text))


def _said(term: str, text: str, words: frozenset[str]) -> bool:
    return term in words or _whole(term).search(text) is not None


def _whole(term: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(term)}(?![\w])", re.I)


def _found(
    terms: Iterable[str], actions: Sequence[ReadAction], *, whole: bool
) -> list[tuple[str, str]]:
    """(term, where) for each term some action names: the first action that does. A strong
    term is matched whole (a substring test first: most actions do not hold it at all), a
    plain one as a word."""
    found = []
    for term in terms:
        pattern = _whole(term) if whole else None
        for action in actions:
            if pattern is None:
                named = term in action.words
            else:
                named = term in action.text and pattern.search(action.text) is not None
            if named:
                found.append((term, action.where))
                break
    return found


def _describe(found: list[tuple[str, str]]) -> str:
    """`pnpm-lock.yaml in its reply; pnpm in Bash call`: each term where it was first seen
    (a file's name or a shorter path is not repeated beside its full path)."""
    terms = [term for term, _ in found]
    shown = [
        (term, where)
        for term, where in found
        if not any(other.endswith("/" + term) for other in terms)
    ]
    places: dict[str, list[str]] = {}
    for term, where in shown[:MAX_EVIDENCE_TERMS]:
        places.setdefault(where, []).append(term)
    return "; ".join(f"{', '.join(terms)} in {where}" for where, terms in places.items())


def fetched_with(memory_id: int, actions: Sequence[ReadAction]) -> str | None:
    """The tool the agent fetched memory `memory_id` with among `actions` (`get_memory`)."""
    wanted = re.compile(rf"(?:^|\n)(?:memory_id|id): {memory_id}(?:\n|$)")
    for action in actions:
        tool = action.tool or ""
        if tool.endswith(FETCH_TOOLS) and wanted.search(action.text):
            return tool
    return None
