"""Lessons proposed from the journal: a user's correction of what the agent ran, as a reminder.

Pure rules over one session's journal (its prompts in order, each with the calls that followed
it); no LLM, no I/O. A prompt is read only when it corrects the turn before it
(`correction_cue` of corrections.py, with that turn's calls as context), and never when it is
the session's first. Two rules, tried in this order on each correction:

1. A corrected call (origin `journal:<session id>`): a call of the turn before failed, was
   rejected or was interrupted, and the correction names something of it in a sentence that
   instructs (a negation, "always", "from now on", "before every", or an opening imperative
   such as "use" or "run"): the call's program (`npm`) or its subcommand (`commit` of
   `git commit`), a path it touched (`src/generated/`, `.env`), or, in a negated clause, one of
   its arguments (`staging`). The lesson is for the failed call's tool.
2. A named command or path (origin `correction:<session id>`): a negated clause ("don't …",
   "never …", "stop using …", "avoid …", "…, not X", "instead of X") names something the
   session grounds: a program or subcommand its earlier calls ran, a path they touched, a
   backticked command line, or a deployment environment (`staging`, `prod`) named earlier in
   the session and here after "against", "on", "to" or "in". Environments get their own case
   because they live in commands' arguments (`--context prod`, a staging URL), where the
   command and path cases cannot see them, and a user's "never against staging" is exactly
   the kind of rule a reminder before the call is for.

What the user wants done instead ("use `pnpm db:up`") never becomes a pattern: rule 2 reads
only negated clauses, and rule 1 only what the failed call and the correction share.

Patterns are the named text escaped with `re.escape`, in RE2's syntax (lessons are matched
with RE2, which has no lookaround): words bounded by `\\b`, paths by `(?:^|[^\\w.-])` /
`(?:[^\\w.-]|$)` (so `.env` does not match `.env.example`). Arguments named in the same negated
clause narrow a command (`git push` + `main`: `\\bgit\\s+push\\b.*\\bmain\\b`). A pattern that
spells out a secret (a token pasted into a command) is dropped, never proposed. A
word shorter than three characters (programs excepted: `rm`, `gh`; flags only narrow) or a
stop word is never a pattern of its own, and no pattern may match a blank input. A clause
with a momentary marker ("again", "for now", "this time") teaches nothing for later, unless it
says "never"; a question is never an instruction. At most three lessons come from one prompt.

The message is the correction from the sentence that names the thing, lead-ins dropped ("no,",
"stop —", "in general:"), up to three sentences and 300 characters, stopping where the user
moves on: a sentence opening with "also", "btw" …, or one with a rule of its own about
something else ("… never run npm here. And don't key the limit by IP.").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from server.core.errors import InvalidInput
from server.core.models.journal import JournalCall, JournalEntry
from server.core.models.lessons import LessonDraft
from server.domain.lessons import checked_pattern, compiled, proposal_key
from server.learning.aggregates import command_verb, simple_commands
from server.learning.corrections import correction_cue

CORRECTED_CALL = "journal"  # origin prefix of rule 1
NAMED_IN_CORRECTION = "correction"  # origin prefix of rule 2
MAX_PER_PROMPT = 3
MESSAGE_CHARS = 300
MESSAGE_SENTENCES = 3
MIN_WORD_CHARS = 3
MAX_CODE_WORDS = 6  # a longer backticked command is an example, not a rule's subject
MAX_NARROWING = 2

_PLAIN = str.maketrans("\u2019\u2018\u02bc\u201c\u201d\u2014\u2013", "'''\"\"--")  # same length
_CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]*`", re.S)
_NOT_SPACE = re.compile(r"\S")
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)|\n+")
_TOKEN = re.compile(r"--?[a-z0-9][\w-]*|[\w.~/@][\w./:@+~-]*")
_FILE_NAME = re.compile(r"\.?[\w-]+(?:\.[\w-]+)*\.[a-z][a-z0-9]{0,9}|\.[a-z][\w-]*")
_NEGATOR = re.compile(
    r"\b(?:(?:don't|dont|do not|never)(?!\s+(?:worry|know|think|care|mind|need|see|understand"
    r"|get|remember|have|had|been|seen|heard|want)\b)"
    r"|avoid|no longer|instead of|rather than|(?:stop|quit)(?=\s+\w+ing\b)"
    r"|not(?!\s+(?:sure|yet|bad|a problem|only|just|even|really|quite|at all|much|now|always"
    r"|all|everything|working|needed|necessary|exactly|too)\b))\b"
)
_CLAUSE_BREAK = re.compile(
    r"[,;:()\[\]]|\s-+\s|\b(?:but|and then|because|since|so|as|instead|without|unless|until"
    r"|then|which|it's|its|we|they|you'll|i'll)\b"
)
_MOMENTARY = re.compile(r"\b(?:again|yet|for now|right now|this time|today|until)\b")
_STANDING = re.compile(
    r"\b(?:always|never|in general|from now on|going forward|next time|every time|whenever"
    r"|as a rule|before (?:every|each|any|you))\b"
)
_INSTRUCTION = re.compile(
    r"\b(?:don't|dont|do not|never|avoid|always|not|no longer|instead|rather than|make sure"
    r"|remember to|only)\b"
)
_IMPERATIVE_OPENING = re.compile(r"(?:use|run|pass|call|prefer|add|put|set|keep|do|try)\b")
_LEAD_IN = re.compile(
    r"(?:(?:no+|nope|nah|yes|yeah|yep|ok|okay|sure|right|great|thanks|hmm+|oh|ah|well|so|and"
    r"|but|also|please|pls|actually)\b[\s,.!:;-]*"
    r"|(?:stop|wait|hold on|hang on)(?=\s*[,.!:;-])[\s,.!:;-]*"
    r"|(?:in general|generally|as a rule|from now on|going forward|one more thing|one thing)\b"
    r"[\s,:;-]*)+"
)
_NEW_TOPIC = re.compile(
    r"(?:also|btw|by the way|one more thing|another thing|plus|p\.?s\.?|oh and|and also"
    r"|separately)\b"
)
_ENVIRONMENT = re.compile(
    r"\b(?:against|on|to|in|into|at)\s+(?:the\s+)?"
    r"(?P<env>staging|stage|prod|production|preprod|pre-prod|uat)\b"
)


def _vocabulary(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Subcommands that group others (`npm run build`): naming them names nothing.
_GROUP_WORDS = frozenset({"run", "exec", "x", "dlx", "compose", "-m"})
_STOPWORDS = _vocabulary(
    "the a an and or but it its this that these those here there with without for from into "
    "onto over under any anything everything all some file files code repo thing things stuff "
    "use using run running just only also not never don't dont please then when what which "
    "your you our we they them me my mine one ones way"
)
_PATHLESS_TOOLS = frozenset({"Bash", "Grep", "Glob", "WebFetch", "WebSearch"})


@dataclass(frozen=True, slots=True)
class ProposedLesson:
    """A lesson drafted from a correction, with where it came from."""

    draft: LessonDraft
    session_id: str
    prompt_key: str | None
    rule: str  # CORRECTED_CALL or NAMED_IN_CORRECTION
    named: str  # what the correction named: a command, path, argument or environment

    @property
    def key(self) -> str:
        return proposal_key(self.draft.tool, self.draft.pattern, self.draft.project)


@dataclass(frozen=True, slots=True)
class _Command:
    """One simple command of a Bash call: its verb (`git push`) and its other words, in order."""

    verb: tuple[str, ...]
    args: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Sentence:
    start: int
    end: int
    scan: str  # lower case, code spans masked: where negations and cues are looked for
    words: list[str]  # its tokens, code spans' text included


@dataclass(frozen=True, slots=True)
class _Clause:
    sentence: int
    words: list[str]
    scan: str
    codes: list[str]  # backticked text inside the clause


@dataclass(frozen=True, slots=True)
class _Correction:
    """A correction's text, read once: its sentences and negated clauses."""

    original: str
    sentences: list[_Sentence]
    clauses: list[_Clause]

    def instructing(self) -> list[int]:
        """Sentences that instruct (not questions, not momentary unless "never")."""
        return [i for i, s in enumerate(self.sentences) if _instructs(s)]


@dataclass(slots=True)
class _Seen:
    """What the session's calls so far ran and touched, and the words its prompts used."""

    commands: list[_Command] = field(default_factory=list)
    paths: dict[str, tuple[str, str]] = field(default_factory=dict)  # lower -> (path, tool)
    text: list[str] = field(default_factory=list)

    def add(self, entry: JournalEntry) -> None:
        if entry.prompt:
            self.text.append(entry.prompt.lower())
        for call in entry.calls:
            if call.target:
                self.text.append(call.target.lower())
            if call.tool == "Bash" and call.target:
                self.commands.extend(_bash_commands(call.target))
            elif (path := _call_path(call)) is not None:
                self.paths.pop(path.lower(), None)  # keep the order of last use
                self.paths[path.lower()] = (path, call.tool)

    def programs(self) -> dict[str, _Command]:
        """Each program run so far, with the last command that ran it."""
        return {command.verb[0]: command for command in self.commands}

    def mentions(self, word: str) -> bool:
        pattern = re.compile(rf"\b{re.escape(word)}\b")
        return any(pattern.search(text) for text in self.text)


def propose(entries: Sequence[JournalEntry]) -> list[ProposedLesson]:
    """The lessons one session's journal proposes, in session order, without duplicates.

    `entries` are the session's prompts in order, each with the calls that followed it (oldest
    first); an entry without a prompt (calls before the first known prompt) only grounds.
    """
    found: dict[str, ProposedLesson] = {}
    seen = _Seen()
    previous: JournalEntry | None = None
    for entry in entries:
        if entry.prompt and previous is not None and previous.prompt is not None:
            for proposal in _from_prompt(entry, previous, seen):
                found.setdefault(proposal.key, proposal)
        seen.add(entry)
        if entry.prompt is not None:
            previous = entry
    return list(found.values())


def _from_prompt(entry: JournalEntry, previous: JournalEntry, seen: _Seen) -> list[ProposedLesson]:
    assert entry.prompt is not None
    context = " ".join(call.target or "" for call in previous.calls)
    if correction_cue(entry.prompt, context) is None:
        return []
    correction = _read(entry.prompt)
    failed = [call for call in reversed(previous.calls) if call.success is False]
    named = [
        (CORRECTED_CALL, item) for call in failed for item in _corrected_call(correction, call)
    ]
    named += [(NAMED_IN_CORRECTION, item) for item in _named_in_clauses(correction, seen)]
    proposals: dict[str, ProposedLesson] = {}
    for rule, (tool, pattern, what, sentence) in named:
        message = _message(correction, sentence, what)
        if not message or not _safe(pattern) or _less_specific(what, [i[2] for _, i in named]):
            continue
        draft = LessonDraft(
            pattern=pattern,
            message=message,
            tool=tool,
            project=entry.project,
            strictness="warn",
            origin=f"{rule}:{entry.session_id}",
        )
        proposal = ProposedLesson(draft, entry.session_id, entry.prompt_key, rule, what)
        proposals.setdefault(proposal.key, proposal)
    return list(proposals.values())[:MAX_PER_PROMPT]


def _less_specific(what: str, named: Sequence[str]) -> bool:
    """`docker` when `docker compose down` was named too: the longer command says what to avoid."""
    return any(other.startswith(f"{what} ") for other in named)


# --- reading the correction ----------------------------------------------------------------


def _read(text: str) -> _Correction:
    plain = text.translate(_PLAIN)
    code_spans = [match.span() for match in _CODE.finditer(plain)]
    masked = _CODE.sub(lambda match: _NOT_SPACE.sub("x", match.group()), plain)
    scan = _lower(masked)
    words_text = _lower(plain.replace("`", " "))
    sentences: list[_Sentence] = []
    start = 0
    for match in [*_SENTENCE_END.finditer(scan), None]:
        end = match.end() if match else len(scan)
        if scan[start:end].strip():
            sentences.append(_Sentence(start, end, scan[start:end], _tokens(words_text[start:end])))
        start = end
    clauses: list[_Clause] = []
    for index, sentence in enumerate(sentences):
        if sentence.scan.rstrip().endswith("?"):
            continue
        for negator in _NEGATOR.finditer(sentence.scan):
            begin = negator.end()
            stop = _CLAUSE_BREAK.search(sentence.scan, begin)
            end = stop.start() if stop else len(sentence.scan)
            clause_scan = sentence.scan[begin:end]
            if _MOMENTARY.search(clause_scan) and not negator.group().startswith("never"):
                continue
            absolute = (sentence.start + begin, sentence.start + end)
            codes = [
                plain[a + 1 : b - 1].strip("`").strip()
                for a, b in code_spans
                if a >= absolute[0] and b <= absolute[1]
            ]
            clauses.append(
                _Clause(
                    index,
                    _tokens(words_text[absolute[0] : absolute[1]]),
                    clause_scan,
                    [code for code in codes if code],
                )
            )
    return _Correction(text, sentences, clauses)


def _lower(text: str) -> str:
    """Lower case without changing the length (a few characters lower-case to two)."""
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def _tokens(text: str) -> list[str]:
    words = (token.rstrip(".:") for token in _TOKEN.findall(text))
    return [word for word in words if any(c.isalnum() for c in word)]


def _instructs(sentence: _Sentence) -> bool:
    scan = sentence.scan.strip()
    if scan.endswith("?"):
        return False
    lead = _LEAD_IN.match(scan)
    opening = scan[lead.end() if lead else 0 :]
    standing = _STANDING.search(scan) is not None
    if _MOMENTARY.search(scan) and not standing:
        return False
    return standing or bool(_INSTRUCTION.search(scan)) or bool(_IMPERATIVE_OPENING.match(opening))


def _names(words: Sequence[str], word: str) -> bool:
    return word in words or f"{word}s" in words


# --- rule 1: a failed call the correction names ----------------------------------------------

Named = tuple[str, str, str, int]  # tool, pattern, what was named, sentence of the message


def _corrected_call(correction: _Correction, call: JournalCall) -> list[Named]:
    if not call.target:
        return []
    instructing = correction.instructing()
    if call.tool == "Bash":
        named: list[Named] = []
        for command in _bash_commands(call.target):
            found = _named_command(correction, instructing, command)
            if found is not None:
                named.append((call.tool, *found))
        if named:
            return named
        return [(call.tool, *found) for found in _named_arguments(correction, call.target)][:1]
    path = _call_path(call)
    if path is None:
        return []
    for index in instructing:
        for word in correction.sentences[index].words:
            if (named_path := _path_named(path, word)) is not None:
                return [(call.tool, _path_pattern(named_path), named_path, index)]
    return []


def _named_command(
    correction: _Correction, instructing: list[int], command: _Command
) -> tuple[str, str, int] | None:
    """The pattern for `command` when an instructing sentence names its program or action."""
    program, action = command.verb[0], command.verb[-1]
    for index in instructing:
        words = correction.sentences[index].words
        says_program = program not in _STOPWORDS and _names(words, program)
        says_action = _nameable_action(command) and _names(words, action)
        if not (says_program or says_action):
            continue
        base = command.verb if says_action else command.verb[:1]
        narrowing = _narrowing(correction, index, command.args)
        return _command_pattern(base, narrowing), " ".join(base), index
    return None


def _named_arguments(correction: _Correction, command_line: str) -> list[tuple[str, str, int]]:
    """Arguments of the failed command named in a negated clause (`staging` of `--env staging`)."""
    args = [arg for command in _bash_commands(command_line) for arg in command.args]
    for clause in correction.clauses:
        for arg in args:
            if _is_argument(arg) and _names(clause.words, arg):
                return [(_token_pattern(arg), arg, clause.sentence)]
    return []


# --- rule 2: a negated clause names something the session grounds ---------------------------


def _named_in_clauses(correction: _Correction, seen: _Seen) -> list[Named]:
    named: list[Named] = []
    for clause in correction.clauses:
        found = (
            _named_code(clause, seen)
            or _named_program(clause, seen)
            or _named_path(clause, seen)
            or _named_environment(clause, seen)
        )
        if found is not None:
            named.append(found)
    return named


def _named_code(clause: _Clause, seen: _Seen) -> Named | None:
    """A backticked command line (`rm -rf`, `git push --force`) or a path the session touched."""
    programs = seen.programs()
    for code in clause.codes:
        if (path := _seen_path(code, seen)) is not None:
            return path[1], _path_pattern(path[0]), path[0], clause.sentence
        words = code.split()
        commands = _bash_commands(code)
        if not commands or len(words) > MAX_CODE_WORDS or _is_path(words[0]):
            continue
        if commands[0].verb[0] in programs or len(words) >= 2:
            return "Bash", _word_pattern(words), code, clause.sentence
    return None


def _named_program(clause: _Clause, seen: _Seen) -> Named | None:
    """A program or an action (the last word of `git commit`) the session's calls ran.

    The verb is the longest one of the session whose action the clause names too (`docker
    compose down`), else the program alone; arguments the clause names narrow it.
    """
    for word in clause.words:
        verbs = [c.verb for c in seen.commands if c.verb[0] == word and word not in _STOPWORDS]
        if not verbs:
            verbs = [c.verb for c in seen.commands if word == c.verb[-1] and _nameable_action(c)]
        if not verbs:
            continue
        named = [verb for verb in verbs if _names(clause.words, verb[-1])]
        base = max(named, key=len) if named else verbs[-1][:1]
        args = [arg for c in seen.commands if c.verb[0] == base[0] for arg in c.args]
        narrowing = [
            arg for arg in dict.fromkeys(args) if _narrows(arg) and _names(clause.words, arg)
        ]
        return "Bash", _command_pattern(base, narrowing), " ".join(base), clause.sentence
    return None


def _named_path(clause: _Clause, seen: _Seen) -> Named | None:
    for word in clause.words:
        if (path := _seen_path(word, seen)) is not None:
            return path[1], _path_pattern(path[0]), path[0], clause.sentence
    return None


def _named_environment(clause: _Clause, seen: _Seen) -> Named | None:
    match = _ENVIRONMENT.search(clause.scan)
    if match is None or not seen.mentions(match["env"]):
        return None
    return "Bash", _word_pattern([match["env"]]), match["env"], clause.sentence


def _seen_path(word: str, seen: _Seen) -> tuple[str, str] | None:
    """(the named part of a touched path, the tool of its last call), when `word` names one."""
    if not _is_path(word):
        return None
    for path, tool in reversed(list(seen.paths.values())):
        if (named := _path_named(path, word)) is not None:
            return named, tool
    return None


# --- calls ----------------------------------------------------------------------------------


def _bash_commands(command_line: str) -> list[_Command]:
    commands = []
    for words in simple_commands(command_line):
        verb = command_verb(words)
        if verb is None:
            continue
        verb_words = tuple(verb.lower().split())
        lowered = [word.lower() for word in words]
        args = tuple(
            word
            for word in dict.fromkeys(lowered)
            if word not in verb_words and PurePosixPath(word).name != verb_words[0]
        )
        commands.append(_Command(verb_words, args))
    return commands


def _call_path(call: JournalCall) -> str | None:
    """The file a call acted on, for tools whose input summary is a path."""
    target = call.target
    if call.tool in _PATHLESS_TOOLS or not target or "://" in target:
        return None
    if any(c in target for c in "*?[{\n ") or target.endswith("/"):
        return None
    return target


def _is_path(word: str) -> bool:
    return ("/" in word and any(c.isalnum() for c in word)) or bool(_FILE_NAME.fullmatch(word))


def _path_named(path: str, word: str) -> str | None:
    """The part of `path` that `word` names (the file, a tail of it, or a directory), or None."""
    if not _is_path(word) or len(word.strip("./")) < 2:
        return None
    lower, named = path.lower(), word.lower()
    if named.endswith("/"):
        at = ("/" + lower).find("/" + named)
        return path[at : at + len(named)] if at >= 0 else None
    if lower == named or lower.endswith("/" + named):
        return path[len(path) - len(named) :]
    at = ("/" + lower).find("/" + named + "/")
    return path[at : at + len(named) + 1] if at >= 0 else None


# --- patterns and messages -------------------------------------------------------------------


def _nameable_action(command: _Command) -> bool:
    """Whether naming the verb's last word names the command (`commit`, not `run` or `git`)."""
    action = command.verb[-1]
    return len(command.verb) > 1 and action not in _GROUP_WORDS and _usable_word(action)


def _usable_word(word: str) -> bool:
    return len(word) >= MIN_WORD_CHARS and word not in _STOPWORDS


def _is_argument(word: str) -> bool:
    """An argument worth a lesson of its own: a name, not a flag, a number or a short word."""
    return len(word) > MIN_WORD_CHARS and _narrows(word) and not word.startswith("-")


def _narrows(word: str) -> bool:
    return word.startswith("-") or (_usable_word(word) and not word.isdigit())


def _narrowing(correction: _Correction, sentence: int, args: Sequence[str]) -> list[str]:
    """Arguments of the command that a negated clause of the same sentence names."""
    words = [w for c in correction.clauses if c.sentence == sentence for w in c.words]
    return [arg for arg in args if _narrows(arg) and _names(words, arg)]


def _word_pattern(words: Sequence[str]) -> str:
    body = r"\s+".join(re.escape(word) for word in words)
    start = r"\b" if _is_word_char(words[0][0]) else ""
    end = r"\b" if _is_word_char(words[-1][-1]) else ""
    return f"{start}{body}{end}"


# A path's boundaries: no name character (word, dot, dash) right before or after it. RE2 has
# no lookaround, so a boundary consumes that character, or meets the start or end of the input.
_PATH_START = r"(?:^|[^\w.-])"
_PATH_END = r"(?:[^\w.-]|$)"
# Next to the `.*` between the parts of a command, a boundary is a character of the same line
# (`.*` stays on one line); between two paths, one such character can end the first and start
# the second, and after a folder (`src/`) the next path may follow at once.
_SEPARATOR = r"[^\w.\n-]"


def _path_pattern(path: str) -> str:
    end = "" if path.endswith("/") else _PATH_END
    return f"{_PATH_START}{re.escape(path)}{end}"


def _token_pattern(word: str) -> str:
    return _path_pattern(word) if _is_path(word) else _word_pattern([word])


def _command_pattern(verb: Sequence[str], narrowing: Sequence[str]) -> str:
    pattern = _word_pattern(verb)
    for part in (_token_pattern(w) for w in narrowing[:MAX_NARROWING]):
        pattern = _joined(pattern, part)
    return pattern


def _joined(first: str, second: str) -> str:
    """`first`, then `second` later on the same line (`first.*second`, path boundaries kept)."""
    after_path = first.endswith(_PATH_END)
    before_path = second.startswith(_PATH_START)
    first, second = first.removesuffix(_PATH_END), second.removeprefix(_PATH_START)
    if after_path and before_path:
        gap = f"{_SEPARATOR}(?:.*{_SEPARATOR})?"
    elif after_path:
        gap = f"{_SEPARATOR}.*"
    elif before_path:
        gap = f"(?:.*{_SEPARATOR})?" if first.endswith("/") else f".*{_SEPARATOR}"
    else:
        gap = ".*"
    return first + gap + second


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _safe(pattern: str) -> bool:
    """A pattern fit to propose: one a user could write (short enough, RE2 can match it, no
    secret in it), and it cannot match an empty or blank input."""
    try:
        matcher = compiled(checked_pattern(pattern))
    except InvalidInput:
        return False
    return not any(matcher.search(probe.encode()) for probe in ("", " ", "\n", "a", "x y"))


def _message(correction: _Correction, first: int, named: str) -> str:
    """The correction from sentence `first`: lead-ins dropped, at most three sentences.

    It stops before a sentence that moves on: one opening with "also", "btw" …, or one with a
    rule of its own (a negated clause) that does not name what this lesson is about.
    """
    own_rules = {clause.sentence for clause in correction.clauses}
    named_words = named.lower().split()
    parts: list[str] = []
    for index in range(first, len(correction.sentences)):
        sentence = correction.sentences[index]
        text = correction.original[sentence.start : sentence.end]
        scan = sentence.scan
        offset = len(scan) - len(scan.lstrip())
        if index == first:
            lead = _LEAD_IN.match(scan, offset)
            offset = lead.end() if lead else offset
        elif _NEW_TOPIC.match(scan, offset) or (
            index in own_rules and not all(_names(sentence.words, w) for w in named_words)
        ):
            break
        piece = " ".join(text[offset:].split())
        if not piece:
            continue
        if parts and len(" ".join([*parts, piece])) > MESSAGE_CHARS:
            break
        parts.append(piece)
        if len(parts) == MESSAGE_SENTENCES:
            break
    message = " ".join(parts)
    if len(message) > MESSAGE_CHARS:
        cut = message[: MESSAGE_CHARS - 1]
        message = (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip() + "…"
    return message[:1].upper() + message[1:]
