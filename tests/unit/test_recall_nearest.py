"""A long memory shown by prompt recall starts at the statement nearest the prompt in meaning
(its vector's pick, server/store/search.py `nearest_statements`) when no statement names
enough of the prompt's words: the answer often shares none of them."""

from __future__ import annotations

from server.core.models.vectors import Window
from server.domain.context import answering, index_markdown
from server.domain.statement_versions import topic_words
from tests.forecaster_notes import ANSWER, PROMPT, SUBJECT, filler
from tests.search_hits import note_hit

NAMED = "The forecaster looks back far enough to see two full billing cycles."
FILLER = filler(8)
CONTENT = "\n".join([SUBJECT, *FILLER[:4], ANSWER, *FILLER[4:]])
ASKED = topic_words(PROMPT)


def span_of(statement: str, content: str = CONTENT) -> Window:
    start = content.index(statement)
    return Window(start, start + len(statement))


def test_the_nearest_statement_comes_first_when_the_words_only_name_the_subject() -> None:
    without = answering(CONTENT, 200, ASKED)
    shown = answering(CONTENT, 200, ASKED, nearest=span_of(ANSWER))

    assert ANSWER not in without  # the words pick the subject line
    assert ANSWER in shown and SUBJECT in shown  # the subject still opens it when there is room
    assert FILLER[0] not in shown


def test_a_statement_naming_several_of_the_prompts_words_goes_before_the_nearest() -> None:
    content = "\n".join([SUBJECT, *FILLER[:4], ANSWER, *FILLER[4:], NAMED])

    shown = answering(content, 120, ASKED, nearest=span_of(ANSWER, content))

    assert NAMED in shown and ANSWER not in shown


def test_the_nearest_statement_is_not_shown_again_once_said() -> None:
    place = 5  # ANSWER's place among the statements
    shown = answering(CONTENT, 200, ASKED, {place}, span_of(ANSWER))

    assert ANSWER not in shown


def test_an_index_line_starts_at_the_nearest_statement_and_goes_on_after_it() -> None:
    hit = note_hit(4, CONTENT)

    text, ids = index_markdown(
        [hit], 1_000, PROMPT, None, set(), 5, titled=True, nearest={4: span_of(ANSWER)}
    )

    assert ids == [4]
    line = text.splitlines()[-1]
    assert ANSWER in line and "Section 5: the onboarding" in line  # the statement after it
