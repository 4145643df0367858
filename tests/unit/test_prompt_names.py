"""Which words of a prompt are names whose presence in memory can be checked."""

from __future__ import annotations

import pytest

from server.domain.prompt_names import named_things


@pytest.mark.parametrize(
    ("prompt", "names"),
    [
        ("how many partitions does the Kafka topic have?", ["Kafka"]),
        ("did we pick GraphQL or gRPC?", ["GraphQL", "gRPC"]),
        ("What is the minimum iOS version?", ["iOS"]),
        ("where is the Terraform module for the EKS cluster?", ["Terraform", "EKS"]),
        ("what is p99 now and where is user_id set?", ["p99", "user_id"]),
        ("is the Kafka-based queue or the Redis-backed one older?", ["Kafka", "Redis"]),
        ("which gpt-4o-mini prompt did we keep?", ["gpt-4o"]),
    ],
)
def test_names_are_capitalised_mixed_or_identifier_words(prompt: str, names: list[str]) -> None:
    assert named_things(prompt) == names


@pytest.mark.parametrize(
    "prompt",
    [
        "add rate limiting to the public endpoints",
        "What did we decide about pagination?",  # a capital that starts the sentence
        "what did we use back in February, or in mid-March?",  # the calendar
        "where does PayoutTable.tsx read src/api/v2 from, since 1.2.3?",  # paths and versions
        "Ok. Thanks, please go ahead. I agree.",
        "what did we ship on 8th December and on the 1st?",  # days of the month
    ],
)
def test_no_names_in_plain_prompts_dates_and_paths(prompt: str) -> None:
    assert named_things(prompt) == []


def test_each_name_once_and_at_most_eight() -> None:
    prompt = "Kafka and Kafka " + " ".join(f"Tool{i}x" for i in range(12))

    names = named_things(prompt)

    assert names[0] == "Kafka" and names.count("Kafka") == 1
    assert len(names) == 8
