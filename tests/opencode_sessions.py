"""OpenCode sessions for the tests: the fixtures' exports loaded into a database as OpenCode
keeps it, without OpenCode.

tests/fixtures/opencode/sessions/ holds sessions in the shape `opencode export` writes and
`opencode import` reads; schema.sql holds the tables OpenCode 1.18.33 creates. `load_exports`
writes the rows the way `opencode import` does (a message's and a part's JSON without their
ids), so the unit tests run without npm; the integration test imports the same files with the
real CLI and checks that both databases read the same.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "opencode"
EXPORTS = sorted((FIXTURES / "sessions").glob("*.json"))
MAIN_SESSION = "ses_2a0c1f7e3ffeQx4Rk8LmTz2Vb1"
SUBAGENT_SESSION = "ses_2a0c2b91dffeJ7pNw3HsYc6Ue5"
IMPORTED_AT = 1_795_600_000_000  # what `opencode import` records as a part's time: its own now


def load_exports(db: Path, exports: list[Path] = EXPORTS, directory: str | None = None) -> Path:
    """A database at `db` with OpenCode's tables, holding the sessions of `exports`.

    `opencode import` files a session under the folder it runs in, not the export's
    `directory`; `directory` does the same here.
    """
    db.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(db) as connection:
        connection.executescript((FIXTURES / "schema.sql").read_text())
        for export in exports:
            _insert(connection, json.loads(export.read_text()), directory)
    return db


def _insert(connection: sqlite3.Connection, export: dict[str, Any], directory: str | None) -> None:
    info = {**export["info"], "directory": directory or export["info"]["directory"]}
    connection.execute(
        "INSERT OR IGNORE INTO project (id, worktree, time_created, time_updated, sandboxes)"
        " VALUES (?, ?, ?, ?, '[]')",
        (info["projectID"], info["directory"], IMPORTED_AT, IMPORTED_AT),
    )
    connection.execute(
        "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version,"
        " time_created, time_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            info["id"], info["projectID"], info.get("parentID"), info["slug"],
            info["directory"], info["title"], info["version"],
            info["time"]["created"], info["time"]["updated"],
        ),
    )  # fmt: skip
    for message in export["messages"]:
        fields = {k: v for k, v in message["info"].items() if k not in ("id", "sessionID")}
        connection.execute(
            "INSERT INTO message (id, session_id, time_created, time_updated, data)"
            " VALUES (?, ?, ?, ?, ?)",
            (
                message["info"]["id"], info["id"], fields["time"]["created"], IMPORTED_AT,
                json.dumps(fields, separators=(",", ":")),
            ),
        )  # fmt: skip
        for part in message["parts"]:
            data = {k: v for k, v in part.items() if k not in ("id", "sessionID", "messageID")}
            set_part(connection, part["id"], part["messageID"], info["id"], data)


def set_part(
    connection: sqlite3.Connection, part_id: str, message_id: str, session_id: str, data: Any
) -> None:
    """Write a part's row as OpenCode does, or overwrite it (a streaming part's next state)."""
    connection.execute(
        "INSERT OR REPLACE INTO part (id, message_id, session_id, time_created, time_updated,"
        " data) VALUES (?, ?, ?, ?, ?, ?)",
        (
            part_id, message_id, session_id, IMPORTED_AT, IMPORTED_AT,
            data if isinstance(data, str) else json.dumps(data, separators=(",", ":")),
        ),
    )  # fmt: skip
