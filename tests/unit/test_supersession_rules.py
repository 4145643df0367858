"""The rules that decide whether a newer memory changes the fact an older one states.

Similarities are passed in: the integration tests (tests/integration/test_supersession.py) run
the same rules on the real model's vectors. Negative pairs get a high similarity on purpose, so
it is the rules, not the gate, that keep them apart.
"""

from __future__ import annotations

import pytest

from server.domain.supersession_rules import read_statement, redundant_near_copy, replacement_reason

CHANGES = [
    (
        "The minimum Node version for the build is 20.",
        "We bumped the minimum Node version to 22.",
    ),
    (
        "Retry failed webhook deliveries 5 times with exponential backoff.",
        "Webhook deliveries now retry 3 times with exponential backoff.",
    ),
    (
        "Terraform state lock lives in a DynamoDB table.",
        "Moved the Terraform state lock from DynamoDB to a lockfile in the repo.",
    ),
    (
        "The dependency audit runs every Monday.",
        "The dependency audit now runs on the first of the month instead of Mondays.",
    ),
    ("The CLI is called `acmectl`.", "Renamed the CLI from `acmectl` to `acme`."),
    (
        "Plan: rate limit POST /invoices per IP address, 30 requests a minute.",
        "No, per API key (`x-api-key`), not per IP: 30 a minute per key, anonymous 10.",
    ),
    ("We use npm for installs in this repo.", "Use pnpm, not npm, for installs in this repo."),
    ("We use npm for installs in this repo.", "We switched to pnpm for installs in this repo."),
    ("We use npm for installs in this repo.", "We prefer pnpm over npm for installs in this repo."),
    ("Session tokens expire after 24 hours.", "Session tokens now expire after 12 hours."),
    ("The worker pool size is 8.", "Worker pool size reduced to 4 after the memory spikes."),
    (
        "Use Jest for unit tests in the web app.",
        "We moved the web app unit tests from Jest to Vitest.",
    ),
    # The changed values are the only words that differ: the schedule words are not strays.
    (
        "The ETL job runs nightly at 02:00 UTC via Airflow.",
        "The ETL job runs every Monday at 06:00 UTC via Airflow.",
    ),
]

NOT_CHANGES = [
    (
        "The minimum Node version for the build is 20.",
        "The build runs on Node 20 in CI with pnpm caching.",
    ),
    (
        "Rate limit the login endpoint to 5 attempts a minute.",
        "Rate limit the invoices endpoint to 30 requests a minute.",
    ),
    ("Run the migrations after the deploy.", "Do not run the migrations on Fridays."),
    (
        "Fixed the flaky checkout test by waiting for the network to be idle.",
        "Fixed the flaky login test by mocking the clock.",
    ),
    ("Session tokens expire after 24 hours.", "Refresh tokens expire after 30 days."),
    (
        "The API listens on port 8080 in development.",
        "The admin UI listens on port 5173 in development.",
    ),
    ("Deployed to staging on 2026-05-04.", "Deployed to staging on 2026-05-11."),
    ("Fix for #412: guard the null customer.", "Fix for #415: guard the null customer."),
    ("The retry count is 5.", "Is the retry count still 5 or is it 3 now?"),
    # Both name npm as what is not used: a restatement, not a change.
    (
        "This repo uses pnpm, not npm: run pnpm install and pnpm test.",
        "Use pnpm for this repository (not npm); install with pnpm install, test with pnpm test.",
    ),
    ("The user prefers tabs over spaces in Go, not spaces.", "In Go files use tabs, not spaces."),
    (
        "The user prefers tabs over spaces in Go files.",
        "User likes tabs rather than spaces for indentation in Go code.",
    ),
    # Different schedules of two different jobs.
    ("The ETL job runs nightly via Airflow.", "The backup job runs every Monday via cron."),
    # Conversation, not facts: who is spoken to, a "not" that contrasts nothing, prose "from X
    # to Y", small talk "now".
    ("Caroline: Thanks, Melanie! Your kind words mean a lot.", "Melanie: Thanks, Caroline!"),
    (
        "Nate: The turtles are small. I really recommend them for times of stress.",
        "Nate: No, not really. Just keep their area clean and feed them properly.",
    ),
    (
        "Dave: I love taking something broken and making it work again.",
        "Calvin: Seeing something go from broken to whole is incredible.",
    ),
    ("Nate: Bye Joanna! Good luck!", "Joanna: Sure thing! Bye for now, Nate!"),
    (
        "Joanna: I found an awesome hiking trail in my hometown yesterday!",
        "Nate: I'm not really into hiking but I'm curious to see the trail!",
    ),
]


@pytest.mark.parametrize(("older", "newer"), CHANGES)
def test_a_changed_fact_is_found(older: str, newer: str) -> None:
    reason = replacement_reason(read_statement(newer), read_statement(older), 0.7)
    assert reason is not None


@pytest.mark.parametrize(("older", "newer"), NOT_CHANGES)
def test_two_different_facts_or_the_same_value_are_not_a_change(older: str, newer: str) -> None:
    assert replacement_reason(read_statement(newer), read_statement(older), 0.9) is None


@pytest.mark.parametrize(("older", "newer"), CHANGES)
def test_the_older_text_never_replaces_the_newer(older: str, newer: str) -> None:
    """Direction matters for the cue rules: the old text names nothing of the new as previous."""
    reason = replacement_reason(read_statement(older), read_statement(newer), 0.7)
    assert reason is None or "previous" not in reason


def test_the_reason_names_the_values() -> None:
    reason = replacement_reason(
        read_statement("The minimum Node version is now 22."),
        read_statement("The minimum Node version is 20."),
        0.9,
    )
    assert reason == "number 20 -> 22"


def test_a_named_previous_value_is_the_reason() -> None:
    reason = replacement_reason(
        read_statement("Install dependencies with pnpm instead of npm in this repo."),
        read_statement("Install dependencies with npm in this repo."),
        0.6,
    )
    assert reason == "names npm as the previous value"


def test_unrelated_texts_below_the_similarity_gate_are_not_linked() -> None:
    reason = replacement_reason(
        read_statement("The minimum Node version is 22."),
        read_statement("The minimum Node version is 20."),
        0.2,
    )
    assert reason is None


def test_the_write_guard_keeps_a_changed_near_copy_and_drops_a_restatement() -> None:
    old = "The minimum Node version for the build is 20."
    assert not redundant_near_copy("The minimum Node version for the build is 22.", old, 0.95, 0.92)
    assert redundant_near_copy("The minimum Node version for the build is 20!", old, 0.95, 0.92)
    assert not redundant_near_copy("The minimum Node version for the build is 20!", old, 0.9, 0.92)


def test_values_are_read_by_kind() -> None:
    statement = read_statement(
        "Since 2026-04-02 the `deploy.sh` job runs on Fridays at 10:30 with 3 retries on v1.4.2"
    )
    assert statement.values["version"] == {"1.4.2"}
    assert statement.values["number"] == {"3"}
    assert statement.values["schedule"] == {"friday"}
    assert "deploy.sh" in statement.values["identifier"]
    assert "2026" not in " ".join(statement.words)  # dates are not values


def test_code_blocks_are_not_read() -> None:
    statement = read_statement("Pin the port.\n```\nPORT=1234 npm start --port 99\n```")
    assert "number" not in statement.values
