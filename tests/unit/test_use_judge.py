"""The judge of whether the agent used an injected memory (server/domain/use_judge.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from server.core.models.journal import AgentAction
from server.domain.use_judge import (
    Judged,
    MemoryTerms,
    apart,
    judge_use,
    memory_terms,
    read_actions,
)
from server.ingest.tool_calls import action_text

AT = datetime(2026, 5, 1, tzinfo=UTC)


def call(tool: str, **tool_input: object) -> AgentAction:
    return AgentAction("p1", AT, tool, action_text(tool_input, 20_000))


def judge(
    memory_id: int,
    terms: MemoryTerms,
    prompt: str,
    actions: list[AgentAction],
    correction: str | None = None,
) -> Judged:
    return judge_use(memory_id, terms, prompt, read_actions(actions), correction)


def said(text: str) -> AgentAction:
    return AgentAction("p1", AT, None, text)


def test_strong_terms_are_anchors_and_code_like_tokens_and_plain_ones_the_rarer_words() -> None:
    terms = memory_terms(
        "Set HTTP_TIMEOUT=30s in .env.example and call sendProblem() for every error; the"
        " gateway publishes to JetStream with go 1.22, p99 under 450ms, port 8080."
    )

    assert terms.strong == (
        "http_timeout", "30s", ".env.example", "sendproblem", "1.22", "jetstream", "p99",
        "450ms", "8080",
    )  # fmt: skip
    assert "gateway" in terms.plain and "publishes" in terms.plain
    assert "every" not in terms.plain and "error" not in terms.plain, "everyday words"
    assert "go" not in terms.strong, "a two-letter package name is not evidence"


def test_a_file_name_and_a_folder_count_as_written_in_commands() -> None:
    terms = memory_terms("Migrations live in db/migrate/ and the lockfile is pnpm-lock.yaml.")

    assert {"db/migrate", "pnpm-lock.yaml"} <= set(terms.strong)
    assert "lock" not in terms.plain and "yaml" not in terms.plain
    used = judge(1, terms, "", [call("Bash", command="ls db/migrate | wc -l")])
    assert (used.verdict, used.evidence) == ("used", "db/migrate in Bash call")


def test_one_strong_term_or_three_plain_ones_make_a_use() -> None:
    terms = memory_terms("Orders are paginated with an opaque cursor, fifty per page.")

    two = judge(1, terms, "", [said("It returns an opaque cursor.")])
    three = judge(1, terms, "", [said("It returns fifty rows and an opaque cursor.")])

    assert two.verdict == "unused", "two plain words can be chance"
    assert (three.verdict, three.evidence) == ("used", "opaque, cursor, fifty in its reply")


def test_what_the_prompt_already_says_is_no_evidence() -> None:
    terms = memory_terms("Deploys go through `make release` and the ArgoCD app tallyhook-prod.")
    action = [call("Bash", command="argocd app sync tallyhook-prod")]

    asked = judge(1, terms, "sync tallyhook-prod in ArgoCD please", action)
    unasked = judge(1, terms, "ship it", action)

    assert asked.verdict == "unused"
    assert unasked.verdict == "used" and "argocd" in unasked.evidence.lower()


def test_fetching_the_memory_is_a_use_and_a_correction_after_a_use_contradicts_it() -> None:
    terms = memory_terms("The staging database is pg-staging-2.")
    fetch = call("mcp__claude-memory__get_memory", memory_id=42)

    fetched = judge(42, terms, "", [fetch])
    other = judge(7, terms, "", [fetch])
    corrected = judge(42, terms, "", [fetch], correction='"No, it moved."')
    ignored = judge(7, terms, "", [said("Done.")], correction='"No, it moved."')

    assert (fetched.verdict, fetched.evidence) == (
        "used",
        "fetched with mcp__claude-memory__get_memory",
    )
    assert other.verdict == "unused", "another memory's id"
    assert corrected.verdict == "contradicted" and corrected.evidence.endswith('"No, it moved."')
    assert ignored.verdict == "unused", "a correction of what the agent did without it"


def test_a_tool_input_is_read_as_key_value_lines_of_its_values() -> None:
    text = action_text(
        {"file_path": "a.py", "edits": [{"old_string": "x", "new_string": "y"}], "n": 2, "f": True},
        200,
    )

    assert text == "file_path: a.py\nold_string: x\nnew_string: y\nn: 2"


def test_names_two_memories_injected_together_share_are_no_evidence_for_either() -> None:
    sink = memory_terms("RabbitMQ sink in internal/export/writer.go batches 1500 rows per INSERT.")
    consumer = memory_terms("The RabbitMQ consumer tallyhook-export acks after the INSERT commits.")

    apart_sink, apart_consumer = apart([sink, consumer])
    action = [said("I checked the RabbitMQ dashboards.")]

    assert "rabbitmq" in sink.strong and "rabbitmq" not in apart_sink.strong
    assert "1500" in apart_sink.strong and "internal/export/writer.go" in apart_sink.strong
    assert judge(1, apart_sink, "", action).verdict == "unused"
    assert judge(1, sink, "", action).verdict == "used", "alone, the name would count"
    assert "tallyhook-export" in apart_consumer.plain or "tallyhook" in apart_consumer.plain


def test_units_and_round_numbers_are_not_strong_terms() -> None:
    terms = memory_terms("Channel 0 reads 1187 mA; the batch holds 500 rows, v2 of the format.")

    assert "1187" in terms.strong
    assert not {"ma", "500", "v2"} & set(terms.strong)
