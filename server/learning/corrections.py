"""Corrections: user turns that reject or redirect what the assistant just did, found by rules.

No LLM: a few readable rules over the user's words. Only a user turn that answers the assistant
counts (an assistant turn or a tool call since the previous user turn, in the same session), so
a session's first prompt never does. The message is read in lower case with code spans masked
(`` `npm install` `` cannot trigger a rule) and curly quotes and dashes made plain.

The rules, in the order they are tried:

0. Lead-ins are skipped: acknowledgements and fillers ("yes.", "ok,", "thanks!", "hmm", "and",
   "but", "please", "one more thing:"), so the cue of "yes. and in general: always …" is found.
   "actually", "wait", "hold on", "hang on" are skipped too but remembered as soft cues.
1. Exclusions, checked first at the opening: look-alikes that start like a correction but agree,
   decline an offer or close the session ("no problem", "no worries", "no idea", "no thanks",
   "no need", "never mind", "don't worry", "not bad", "not sure", "stop for today", "that's all",
   "that's fine/correct/perfect", "looks great", "you're right"). Only a following "but …" is
   still read ("no worries, but don't push to main").
2. rejection: the opening is "no", "nope", "nah", "wrong", "not quite/really/exactly" set off by
   punctuation (or followed by "don't", "that's", "it should", "I meant" …), or "not" + a phrase
   ("not per IP, per key"; never "not sure/yet/bad"), then at least two words that are not an
   exclusion themselves: a bare "no" answers a question, it teaches nothing.
3. imperative: the opening is a negative or standing imperative: "don't …", "do not …",
   "please don't …", "never …", "avoid …", "always …", "let's not …", or "stop"/"quit" used as
   an interruption ("stop —", "stop using …", "stop it"), never "stop the server".
4. undo: the opening asks to take the last step back ("undo that", "revert …", "roll it back").
5. error: the opening sentence says the assistant got it wrong ("that's wrong", "that's not what
   I asked", "wrong file", "you forgot …", "I said …", "I meant …").
6. redirect: after a soft cue, a negation ("actually, per key not per IP", "wait, that doesn't
   look right") or a change of course ("actually, let's …", "actually, use …"); not additions
   ("actually, also add …") and not praise ("actually that looks great").
7. contrast: the opening sentence contrasts ("not X but Y", "Y, not X", "Y not X", "use Y
   instead", "rather than X"). A "not X" contrast is grounded: a word of X must echo the
   assistant's last words or its tool calls since the user spoke, so a fresh request ("cursors,
   not offsets") is not read as the correction of something that never happened. After a soft
   cue, or with "instead"/"rather", no grounding is needed.
8. standing_rule, in any sentence: a rule for the future ("in general: always …", "from now on,
   …", "going forward …", "next time …", "whenever you commit, …") followed by an imperative, not
   by "we", "it", "looks" …; such rules are what a user gives after a mistake.

A rule needs three words after the lead-ins ("stop!" alone teaches nothing). `corrected` names
the failed or rejected tool call the user answered, else the end of the assistant's last words.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from server.core.models.output import preview
from server.learning.aggregates import SignalEvent

QUOTE_CHARS = 300
CORRECTED_CHARS = 160
MIN_REST_WORDS = 2  # after "no,": "no, use pnpm" teaches something, "no." does not

_PLAIN = str.maketrans("\u2019\u2018\u02bc\u201c\u201d\u2014\u2013", "'''\"\"--")  # same length
_CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]*`", re.S)
_NOT_SPACE = re.compile(r"\S")
_BOUNDARY = re.compile(r"[.!?]+(?=\s|$)|\n")
_PUNCT = r"[\s,.!:;-]*"


def _vocabulary(words: str) -> frozenset[str]:
    return frozenset(words.split())


_LEAD_IN = re.compile(
    r"(?:yes|yeah|yep|yup|ok|okay|sure|right|alright|all right|thanks|thank you|great|good|"
    r"cool|fine|nice|perfect|got it|i see|hmm+|hm+|oh|ah|uh|um+|so|well|and|but|also|please|"
    r"pls|one more thing|one thing|another thing|one other thing)\b" + _PUNCT
)
_SOFT = re.compile(r"(?:actually|wait|hold on|hang on)\b" + _PUNCT)
_POSITIVE = (
    r"(?:(?:that|this|it)(?:'s| is| was| looks| seems| sounds)?|looks|seems|sounds|you're|you are)?"
    r"\s*(?:(?:totally|all|really|perfectly|absolutely|exactly|pretty|very|so) )?"
    r"(?:fine|good|great|perfect|correct|right|ok|okay|awesome|nice|excellent|lgtm|spot on"
    r"|intentional|as intended|what i wanted|exactly|works|makes sense)"
)
_EXCLUDED = re.compile(
    r"(?:no (?:problem|worries|worry|idea|clue|thanks|thank you|rush|hurry|need|biggie|big deal"
    r"|luck|pressure|more questions)|never ?mind|nvm|(?:don't|dont|do not) worry|not bad"
    r"|not a problem|not sure|not yet|not now|not for now|all good"
    r"|stop (?:for (?:today|now|the day)|here|there)|(?:i think )?that's (?:all|it|everything)\b"
    r"|that is all|go ahead|go for it|proceed|carry on|keep going|please do"
    r"|" + _POSITIVE + r")\b"
)
_BUT = re.compile(r"(?:but|though|however|although)\b" + _PUNCT)
_NOT_FOLLOWERS = (
    r"(?:sure|yet|bad|a problem|a big deal|at all|really|quite|too|that|only|just|even|much|now"
    r"|today|necessarily|exactly|necessary|needed|important|urgent|worth|so|very|entirely"
    r"|always|all|everything|anymore|working|enough|possible|for now)\b"
)
_REJECTION = re.compile(
    r"(?:no+|nope|nah|wrong|incorrect|not quite|not really|not exactly|not like that)"
    r"(?:\s*[,.!:;-]+\s*|\s+(?=(?:don't|dont|do not|not|never|stop|that's|that is|this is|it's"
    r"|it is|it should|we|you|i (?:said|meant|want|wanted|asked|told)|just|only|instead|use"
    r"|the other|leave|keep|revert|undo)\b)|$)"
    r"|not\s+(?!" + _NOT_FOLLOWERS + r")"
)
_IMPERATIVE = re.compile(
    r"(?:please |pls )?(?:(?:don't|dont|do not|never|avoid|always|let's not|let us not)\s+"
    r"(?!(?:worry|know|care|mind|understand|remember|think so|see why|get it|seen|heard|used|had"
    r"|been|thought|knew|worked|done|tried)\b)\S"
    r"|(?:stop|quit)(?:\s*[,.!:;-]|\s+(?:it|that|this|right|now|\w+ing)\b|$))"
)
_UNDO = re.compile(
    r"(?:undo|revert|roll (?:it |that |this |them |everything )?back"
    r"|(?:put|change) (?:it|that|this|them) back)\b"
)
_ERROR = re.compile(
    r"\b(?:(?:that|this|it)(?:'s| is| was) (?:(?:all|completely|totally|just|still) )?"
    r"(?:wrong|incorrect|not (?:right|correct|it|how|what))"
    r"|(?:that|this|it) (?:doesn't|does not) (?:look|seem|sound) right"
    r"|not what i (?:asked|meant|wanted|said)|you(?:'re| are) wrong"
    r"|wrong (?:file|files|branch|dir|directory|folder|repo|command|approach|place|version|path"
    r"|table|endpoint|function|method|project|way|one|package|tool)"
    r"|i (?:said|told you|asked you|asked for|meant)"
    r"|you (?:forgot|missed|broke|ignored|deleted|removed|skipped|didn't|did not|shouldn't have"
    r"|should not have|should have|were supposed to|misunderstood))\b"
)
_REJECTED = r"(?!" + _NOT_FOLLOWERS + r")(?P<rejected>[^,;:.!?()]{1,60}?)"
_NOT_BUT = re.compile(r"\bnot\s+" + _REJECTED + r"\s*,?\s+but\s")
_COMMA_NOT = re.compile(r"(?:,|\s-|\()\s*not\s+" + _REJECTED + r"(?=[,;:.!?()]|\s-|$)")
_WORD_NOT = re.compile(r"\b(?P<before>[\w']+)\s+not\s+" + _REJECTED + r"(?=[,;:.!?()]|\s-|$)")
# Words before "not" that make it plain negation ("is not", "why not"), not a contrast.
_NEGATION_HOSTS = _vocabulary(
    "is are was were be been do does did can could will would shall should may might must have "
    "has had am s re m ll d ve why if or whether and but course certainly definitely probably "
    "maybe perhaps still really hopefully better i you we they it this that them me us let's "
    "or"
)
_INSTEAD = re.compile(r"\b(?:instead|rather than|(?:i'd|i would|we'd|we would) rather)\b")
_SUGGESTION = re.compile(r"(?:can|could) (?:we|you)|why not|how about|what about")
_REDIRECT = re.compile(
    r"(?:let's|let us|use|make (?:it|that|this)|change (?:it|that|this)|switch|go with"
    r"|(?:it|that|we|you) should|should be|i meant|i want|i'd prefer|i prefer|better)\b"
)
_ADDITION = re.compile(r"\b(?:also|too|as well|another|one more|in addition)\b")
_NEGATION = re.compile(
    r"\b(?:not|no|never|don't|dont|do not|doesn't|isn't|aren't|shouldn't|won't|can't|wrong)\b"
)
_STANDING = re.compile(
    r"\b(?:in general|generally|as a (?:general )?rule|from now on|going forward|moving forward"
    r"|from here on(?: out)?|in (?:the )?future|next time|for future reference|every time you"
    r"|whenever you|each time you)\b[\s,:;-]*"
    r"(?:(?:you (?:should|must|need to|have to)|please|just|make sure(?: to| you)?)\s+)?"
    r"(?P<verb>[\w']+)"
)
# A word right after "from now on" that shows a statement, not an instruction.
_NOT_IMPERATIVE = _vocabulary(
    "i i'm i've i'd i'll we we'll we're we've you you're you'll it it's its they they'll this "
    "that that's these those the a an there there's he she my our your their is are was were be "
    "will would can could looks seems sounds good great fine nice works if when what how why as "
    "so and but or for to of in on at with all most some not yes no ok okay maybe perhaps "
    "probably speaking once after before then"
)
_STOPWORDS = _vocabulary(
    "the a an per to of in on for with by from at as and or it this that is be use using just "
    "only all any one we you i me my our"
)


@dataclass(frozen=True, slots=True)
class SignalTurn:
    """One prose turn as the signals see it: who spoke, what, and when, in session order."""

    memory_id: int | None
    session_id: str
    project: str
    role: str
    text: str
    at: datetime | None
    record_uuid: str | None


@dataclass(frozen=True, slots=True)
class Correction:
    """A user turn that rejected or redirected the assistant, with what it was answering."""

    session_id: str
    project: str
    quote: str  # the user's words, whitespace collapsed, cut at a sentence to <= 300 chars
    corrected: str  # `Tool: target` of the failed call, else the end of the assistant's reply
    at: datetime | None
    record_uuid: str | None
    memory_id: int | None
    cue: str  # the rule that matched: rejection, imperative, undo, error, redirect, ...
    corrected_is_reply: bool = False  # `corrected` previews the reply rather than a tool call


@dataclass(slots=True)
class _Text:
    """A message on one line per paragraph, with a lower-case copy of the same length to match
    against (code masked), and the spans of its sentences."""

    flat: str
    scan: str
    sentences: list[tuple[int, int]] = field(default_factory=list)

    def sentence_at(self, pos: int) -> int:
        return next((i for i, (_, end) in enumerate(self.sentences) if pos < end), -1)


def _prepare(text: str) -> _Text:
    plain = text.translate(_PLAIN)
    masked = _CODE.sub(lambda m: _NOT_SPACE.sub("x", m.group()), plain)
    lowered = "".join(c.lower() if len(c.lower()) == 1 else c for c in masked)

    def collapse(value: str) -> str:
        return re.sub(r"\s+", lambda m: "\n" if "\n" in m.group() else " ", value).strip()

    scan = collapse(lowered)
    result = _Text(collapse(text).replace("\n", " "), scan)
    start = 0
    for match in [*_BOUNDARY.finditer(scan), None]:
        end = match.end() if match else len(scan)
        while start < end and scan[start].isspace():
            start += 1
        if start < end:
            result.sentences.append((start, end))
        start = end
    return result


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) > 1 and w not in _STOPWORDS}


def _skip_lead_ins(scan: str, pos: int) -> tuple[int, bool]:
    """Position after acknowledgements and fillers, and whether a soft cue was among them."""
    soft = False
    while True:
        match = _LEAD_IN.match(scan, pos) or _SOFT.match(scan, pos)
        if match is None or match.end() == pos:
            return pos, soft
        soft = soft or match.re is _SOFT
        pos = match.end()


def _past_exclusion(scan: str, pos: int) -> int | None:
    """`pos` when no exclusion starts there; after one, where its "but …" goes on, or None."""
    match = _EXCLUDED.match(scan, pos)
    if match is None:
        return pos
    after = re.compile(_PUNCT).match(scan, match.end())
    but = _BUT.match(scan, after.end() if after else match.end())
    return but.end() if but else None


def _word_count(text: str) -> int:
    return len(re.findall(r"[\w']+", text))


def _contrast(segment: str, flat: str, offset: int, context: set[str], grounded: bool) -> bool:
    """Whether the sentence contrasts what to do with what not to do (rule 7)."""
    for pattern in (_NOT_BUT, _COMMA_NOT, _WORD_NOT):
        for match in pattern.finditer(segment):
            if pattern is _WORD_NOT and match["before"] in _NEGATION_HOSTS:
                continue
            rejected = flat[offset + match.start("rejected") : offset + match.end("rejected")]
            if not grounded or _words(rejected) & context:
                return True
    if _INSTEAD.search(segment):
        return not segment.rstrip().endswith("?") or bool(_SUGGESTION.search(segment))
    return False


def _negated(segment: str) -> bool:
    """A negation in the sentence that is not part of a look-alike ("not bad", "no worries")."""
    for match in _NEGATION.finditer(segment):
        if _EXCLUDED.match(segment, match.start()):
            continue
        if match.group() == "not" and re.match(_NOT_FOLLOWERS, segment[match.end() :].lstrip()):
            continue
        return True
    return False


def _opening_cue(text: _Text, context: set[str]) -> tuple[str, int] | None:
    """Rules 1-7 at the start of the message: (cue, position of the match) or None."""
    scan = text.scan
    pos, soft = _skip_lead_ins(scan, 0)
    start = _past_exclusion(scan, pos)
    if start is None:
        return None
    if start != pos:
        pos, soft = start, False
    if (match := _REJECTION.match(scan, pos)) is not None:
        rest = _past_exclusion(scan, match.end())
        index = text.sentence_at(match.end())
        if rest == match.end() and index >= 0:
            end = text.sentences[index][1]
            if _word_count(scan[rest:end]) >= MIN_REST_WORDS:
                return "rejection", match.end()
        if rest is None or rest == match.end():
            return None
        pos = rest  # "no, that's fine, but …": read what follows the "but"
    index = text.sentence_at(pos)
    if index < 0 or _word_count(scan[pos:]) < 3:
        return None
    end = text.sentences[index][1]
    segment = scan[pos : min(end, pos + QUOTE_CHARS)]  # a cue sits near the start
    for cue, pattern in (("imperative", _IMPERATIVE), ("undo", _UNDO)):
        if pattern.match(scan, pos):
            return cue, pos
    if _ERROR.search(segment):
        return "error", pos
    if soft and (_negated(segment) or _REDIRECT.match(segment)) and not _ADDITION.search(segment):
        return "redirect", pos
    if _contrast(segment, text.flat, pos, context, grounded=not soft):
        return "contrast", pos
    return None


def _standing_rule(text: _Text) -> int | None:
    """Rule 8: position of a rule for the future given in any sentence, or None."""
    for start, end in text.sentences:
        sentence = text.scan[start:end]
        if sentence.endswith("?"):
            continue
        for match in _STANDING.finditer(sentence):
            if match["verb"] not in _NOT_IMPERATIVE:
                return start + match.start()
    return None


def _quote(text: _Text, index: int) -> str:
    """Whole sentences up to QUOTE_CHARS, from the start if the cue's sentence fits in them."""
    cue_start, cue_end = text.sentences[index]
    begin = 0 if cue_end <= QUOTE_CHARS else cue_start
    end = begin
    for _, sentence_end in text.sentences:
        if sentence_end > begin and sentence_end - begin <= QUOTE_CHARS:
            end = sentence_end
    if end > begin:
        return text.flat[begin:end].strip()
    cut = text.flat[begin : begin + QUOTE_CHARS - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip() + "…"


def correction_cue(text: str, context: str = "") -> tuple[str, str] | None:
    """(cue, quote) when `text` reads as a correction, else None.

    `context` is what the assistant just said or ran; the grounded contrast rule needs it.
    """
    prepared = _prepare(text)
    if not prepared.sentences:
        return None
    found = _opening_cue(prepared, _words(context))
    if found is None and (rule_at := _standing_rule(prepared)) is not None:
        found = ("standing_rule", rule_at)
    if found is None:
        return None
    cue, pos = found
    index = prepared.sentence_at(pos)
    return cue, _quote(prepared, index if index >= 0 else len(prepared.sentences) - 1)


def _ending(reply: str) -> str:
    """The last sentences of a reply, up to CORRECTED_CHARS: what the user is answering.

    A reply ends with its proposal or question ("I'll run the load test against staging",
    "is per-IP really what you want?"), so its end says more about what was corrected than its
    start does.
    """
    flat = " ".join(reply.split())
    if len(flat) <= CORRECTED_CHARS:
        return flat
    kept = ""
    for sentence in reversed(re.split(r"(?<=[.!?])\s+", flat)):
        candidate = f"{sentence} {kept}".strip()
        if len(candidate) > CORRECTED_CHARS - 1:
            break
        kept = candidate
    if not kept:
        cut = flat[-(CORRECTED_CHARS - 1) :]
        kept = cut.split(" ", 1)[1] if " " in cut else cut
    return "…" + kept


def _describe(event: SignalEvent) -> str:
    call = f"{event.tool}: {event.target}" if event.target else event.tool
    return preview(call, CORRECTED_CHARS)


def _corrected(
    replied: SignalTurn | None, since_user: list[SignalEvent], after_reply: list[SignalEvent]
) -> tuple[str, bool]:
    """What the user was correcting, and whether it is the reply's text rather than a call.

    In order: the last failed or rejected call after the assistant's last words; the reply's
    last call if it failed (the words after it explain the failure, like a rejected commit);
    the end of the assistant's last words; the last call.
    """
    failed = [event for event in after_reply if event.success is False]
    if failed:
        return _describe(failed[-1]), False
    if since_user and since_user[-1].success is False:
        return _describe(since_user[-1]), False
    if replied is not None:
        return _ending(replied.text), True
    return (_describe(since_user[-1]) if since_user else ""), False


@dataclass(slots=True)
class _Session:
    """Where a session stands while its turns are walked in order."""

    events: list[SignalEvent]
    times: list[datetime]
    last_user: SignalTurn | None = None
    reply: SignalTurn | None = None  # the assistant's last turn since `last_user`
    seen_turn: bool = False

    def between(
        self, after: datetime | None, until: datetime, inclusive: bool
    ) -> list[SignalEvent]:
        lo = 0 if after is None else (bisect_left if inclusive else bisect_right)(self.times, after)
        return self.events[lo : bisect_right(self.times, until)]


def _sessions(events: Sequence[SignalEvent]) -> dict[str, _Session]:
    timed: dict[str, list[tuple[datetime, SignalEvent]]] = {}
    for event in events:
        if event.at is not None:
            timed.setdefault(event.session_id, []).append((event.at, event))
    sessions = {}
    for session_id, items in timed.items():
        items.sort(key=lambda item: item[0])
        sessions[session_id] = _Session([event for _, event in items], [at for at, _ in items])
    return sessions


def find_corrections(
    turns: Sequence[SignalTurn], events: Sequence[SignalEvent]
) -> list[Correction]:
    """User turns that correct the assistant's last reply or tool call, in turn order.

    `turns` are the prose turns in session order (main conversation only); `events` the tool
    calls of the same sessions, placed between the turns by time.
    """
    sessions = _sessions(events)
    found: list[Correction] = []
    for turn in turns:
        state = sessions.setdefault(turn.session_id, _Session([], []))
        if turn.role != "user":
            if turn.role == "assistant":
                state.reply = turn
            state.seen_turn = True
            continue
        replied = state.reply
        since_user: list[SignalEvent] = []
        after_reply: list[SignalEvent] = []
        if turn.at is not None:
            last_at = state.last_user.at if state.last_user else None
            since_user = state.between(last_at, turn.at, inclusive=False)
            after_reply = (
                state.between(replied.at, turn.at, inclusive=True)
                if replied is not None and replied.at is not None
                else since_user
            )
        answers = state.seen_turn and (replied is not None or bool(since_user))
        state.last_user, state.reply, state.seen_turn = turn, None, True
        if not answers:
            continue
        context = " ".join([replied.text if replied else ""] + [e.target or "" for e in since_user])
        matched = correction_cue(turn.text, context)
        if matched is None:
            continue
        corrected, is_reply = _corrected(replied, since_user, after_reply)
        found.append(
            Correction(
                session_id=turn.session_id,
                project=turn.project,
                quote=matched[1],
                corrected=corrected,
                at=turn.at,
                record_uuid=turn.record_uuid,
                memory_id=turn.memory_id,
                cue=matched[0],
                corrected_is_reply=is_reply,
            )
        )
    return found


def correction_memory(correction: Correction) -> str:
    """The preference text stored for a correction: self-contained, quoting the user."""
    where = f"In {correction.project} the user" if correction.project else "The user"
    text = f'{where} corrected the assistant: "{correction.quote}"'
    if correction.corrected_is_reply:
        return f'{text} (after the assistant said: "{correction.corrected}")'
    if correction.corrected:
        return f"{text} (after: {correction.corrected})"
    return text
