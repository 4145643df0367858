"""Build small Claude Code transcripts (FORMATS.md §1) for the security tests, and read back
everything the database holds as plain strings.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from psycopg import sql

from server.store.tx import Pool

SESSION = "5ec0a1e2-7b3d-4c8e-9f10-a2b3c4d5e6f7"
CWD = "/home/dev/acme-vault"


def _record(kind: str, number: int, session: str, cwd: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "uuid": f"00000000-0000-4000-8000-{number:012d}",
        "parentUuid": None if number == 1 else f"00000000-0000-4000-8000-{number - 1:012d}",
        "isSidechain": False,
        "timestamp": f"2026-04-14T09:{number // 60:02d}:{number % 60:02d}.000Z",
        "sessionId": session,
        "cwd": cwd,
        "version": "2.1.104",
        **fields,
    }


def conversation(
    user_texts: Sequence[str],
    *,
    session: str = SESSION,
    cwd: str = CWD,
    commands: Sequence[str] = (),
    title: str | None = None,
) -> list[dict[str, Any]]:
    """Each user text followed by a short assistant reply; then one Bash call per command."""
    records: list[dict[str, Any]] = []
    number = 0
    for text in user_texts:
        number += 1
        message = {"role": "user", "content": text}
        records.append(_record("user", number, session, cwd, message=message))
        number += 1
        reply = {
            "id": f"msg_{number:08d}",
            "role": "assistant",
            "content": [{"type": "text", "text": f"Noted, point {number} is recorded for later."}],
        }
        records.append(_record("assistant", number, session, cwd, message=reply))
    for command in commands:
        number += 1
        call = {
            "id": f"msg_{number:08d}",
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": f"toolu_{number:08d}",
                    "name": "Bash",
                    "input": {"command": command},
                }
            ],
        }
        records.append(_record("assistant", number, session, cwd, message=call))
    if title is not None:
        records.append({"type": "custom-title", "customTitle": title, "sessionId": session})
    return records


def write_session(
    projects: Path, records: Sequence[dict[str, Any]], session: str = SESSION
) -> Path:
    """Write records as `<projects>/-home-dev-acme-vault/<session>.jsonl`; the file's path."""
    folder = projects / "-home-dev-acme-vault"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def strings_in(value: Any) -> Iterator[str]:
    """Every string inside a JSON-like value: keys, values, nested lists and objects."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


async def stored_strings(pool: Pool) -> list[tuple[str, str]]:
    """(table.column, string) for every string in every row of every table: what anyone with a
    copy of the data directory, or of a backup, could read."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
        )
        tables = [row[0] for row in await cur.fetchall()]
        found: list[tuple[str, str]] = []
        for table in tables:
            cur = await conn.execute(
                sql.SQL("SELECT to_jsonb(t) FROM {} AS t").format(sql.Identifier(table))
            )
            for (row,) in await cur.fetchall():
                for column, value in row.items():
                    found.extend((f"{table}.{column}", text) for text in strings_in(value))
    return found
