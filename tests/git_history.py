"""A git repository with a scripted history, for the checks of memories against the code.

`acme_repository(folder)` commits a small Go and TypeScript project on 2026-02-20, then, on
2026-03-02 (after memories written on 2026-03-01), bumps Go from 1.22 to 1.23, changes
HTTP_TIMEOUT from 30s to 45s, renames internal/auth/jwt.go to tokens.go and deletes
docs/runbook.md; src/errors.ts, LOG_LEVEL and pnpm@9.12.0 stay as they were.
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

MEMORIES_WRITTEN = datetime(2026, 3, 1, tzinfo=UTC)


def git(repo: Path, *args: str, when: str | datetime = "2026-03-02T10:00:00+00:00") -> None:
    """Run git in `repo` as a fixed author, at `when`, with nothing of the user's config."""
    stamp = when.isoformat() if isinstance(when, datetime) else when
    env = {
        "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_DATE": stamp,
        "GIT_AUTHOR_NAME": "Dev",
        "GIT_AUTHOR_EMAIL": "dev@example.com",
        "GIT_COMMITTER_NAME": "Dev",
        "GIT_COMMITTER_EMAIL": "dev@example.com",
        "PATH": "/usr/bin:/bin",
        "HOME": str(repo),
    }
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def write(repo: Path, name: str, text: str) -> None:
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def acme_repository(repo: Path) -> Path:
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    write(repo, "go.mod", "module example.com/acme\n\ngo 1.22\n")
    write(repo, ".env.example", "HTTP_TIMEOUT=30s\nLOG_LEVEL=info\n")
    write(repo, "internal/auth/jwt.go", "package auth\n\nfunc VerifyToken() {}\n")
    write(repo, "docs/runbook.md", "# Runbook\n")
    write(repo, "src/errors.ts", "export function sendProblem() {}\n")
    write(repo, "package.json", json.dumps({"packageManager": "pnpm@9.12.0"}))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start", when="2026-02-20T10:00:00+00:00")
    write(repo, "go.mod", "module example.com/acme\n\ngo 1.23\n")
    write(repo, ".env.example", "HTTP_TIMEOUT=45s\nLOG_LEVEL=info\n")
    git(repo, "mv", "internal/auth/jwt.go", "internal/auth/tokens.go")
    git(repo, "rm", "-q", "docs/runbook.md")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "changes")
    return repo
