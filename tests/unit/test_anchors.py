"""Anchors: the files, symbols, settings and versions a memory names (server/domain/anchors.py)."""

from __future__ import annotations

import pytest

from server.domain.anchors import MAX_ANCHORS, Anchor, anchors_of


def kinds(text: str) -> list[tuple[str, str, str | None]]:
    return [(a.kind, a.name, a.value) for a in anchors_of(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "the Go toolchain is pinned to go 1.22 in `go.mod`",
            [("version", "go", "1.22"), ("path", "go.mod", None)],
        ),
        (
            "`HTTP_TIMEOUT=30s` in `.env.example`",
            [("setting", "HTTP_TIMEOUT", "30s"), ("path", ".env.example", None)],
        ),
        ("the migrations live in `db/migrate/`", [("path", "db/migrate/", None)]),
        ("call `sendProblem()` for every error", [("symbol", "sendProblem", None)]),
        (
            "The limiter is invoiceLimiter() in src/middleware/rateLimit.ts.",
            [("symbol", "invoiceLimiter", None), ("path", "src/middleware/rateLimit.ts", None)],
        ),
        (
            "Pinned pnpm@9.12.0 and express-rate-limit 7.4.1; see package.json.",
            [
                ("version", "pnpm", "9.12.0"),
                ("version", "express-rate-limit", "7.4.1"),
                ("path", "package.json", None),
            ],
        ),
        ('bumped "react": "^18.2.0" last week', [("version", "react", "18.2.0")]),
        ("`max_connections = 200` in postgresql.conf", [
            ("setting", "max_connections", "200"), ("path", "postgresql.conf", None)
        ]),
        ("run it with `pytest --maxfail=1 -q`", [("setting", "--maxfail", "1")]),
        ("the `InvoiceService.create` method", [("symbol", "InvoiceService.create", None)]),
        ("We set NODE_OPTIONS=--max-old-space-size. It held.", [
            ("setting", "NODE_OPTIONS", "--max-old-space-size")
        ]),
        ("Build with the Dockerfile, then Makefile targets", [
            ("path", "Dockerfile", None), ("path", "Makefile", None)
        ]),
    ],
)  # fmt: skip
def test_what_a_memory_names_about_the_code(text: str, expected: list[object]) -> None:
    assert kinds(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "We moved CI/CD to GitHub Actions and TCP/IP stays as is.",
        "See https://docs.example.com/guide/setup.html for details.",
        "The service listens on port 8080 and Node 20 runs it.",
        "Latency went from 1.2 to 2.5 after the upgrade to 3.1.",
        "Use Node.js and Vue.js, e.g. for the admin UI.",
        "Ask api.example.com; it answers within seconds.",
        "`pnpm install --frozen-lockfile`",
        "dedup keeps a `.Seen` map and a .Seen field",
        "a plain sentence about nothing in particular",
    ],
)
def test_prose_that_names_no_code_gives_no_anchor(text: str) -> None:
    assert anchors_of(text) == []


def test_each_anchor_once_in_order_and_a_listing_is_cut() -> None:
    text = "`go.mod` and go.mod again; `go.mod`"
    assert anchors_of(text) == [Anchor("path", "go.mod")]
    listing = " ".join(f"src/file{i}.py" for i in range(MAX_ANCHORS + 10))
    assert len(anchors_of(listing)) == MAX_ANCHORS
