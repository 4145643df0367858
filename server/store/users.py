"""SQL for `users`: the team members a shared server knows, by the hash of their token."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from psycopg.rows import class_row

from server.core.models.users import UserRow
from server.store.tx import Conn


@dataclass(frozen=True, slots=True)
class TokenCheck:
    """What one bearer token means: whose it is (if active) and whether users were ever added."""

    users_exist: bool
    user: UserRow | None


async def insert(
    conn: Conn, name: str, token_hash: str, projects: Sequence[str] | None
) -> UserRow | None:
    """A new user; None when the name is taken (revoked names stay taken: their memories
    still carry it)."""
    async with conn.cursor(row_factory=class_row(UserRow)) as cur:
        await cur.execute(
            "INSERT INTO users (name, token_hash, projects) VALUES (%(name)s, %(hash)s,"
            " %(projects)s) ON CONFLICT (name) DO NOTHING"
            " RETURNING id, name, projects, created_at, revoked_at",
            {"name": name, "hash": token_hash, "projects": list(projects) if projects else None},
        )
        return await cur.fetchone()


async def list_all(conn: Conn) -> list[UserRow]:
    """Every user, oldest first, with how many memories each owns."""
    async with conn.cursor(row_factory=class_row(UserRow)) as cur:
        await cur.execute(
            "SELECT u.id, u.name, u.projects, u.created_at, u.revoked_at,"
            " (SELECT count(*) FROM memories m WHERE m.owner_id = u.id)::int AS memories"
            " FROM users u ORDER BY u.id"
        )
        return await cur.fetchall()


async def by_id(conn: Conn, user_id: int) -> UserRow | None:
    async with conn.cursor(row_factory=class_row(UserRow)) as cur:
        await cur.execute(
            "SELECT id, name, projects, created_at, revoked_at FROM users WHERE id = %(id)s",
            {"id": user_id},
        )
        return await cur.fetchone()


async def active_by_name(conn: Conn, name: str) -> UserRow | None:
    async with conn.cursor(row_factory=class_row(UserRow)) as cur:
        await cur.execute(
            "SELECT id, name, projects, created_at, revoked_at FROM users"
            " WHERE name = %(name)s AND revoked_at IS NULL",
            {"name": name},
        )
        return await cur.fetchone()


async def revoke(conn: Conn, name: str) -> bool:
    """Refuse the user's token from now on; False when no active user has that name."""
    cur = await conn.execute(
        "UPDATE users SET revoked_at = now() WHERE name = %(name)s AND revoked_at IS NULL",
        {"name": name},
    )
    return cur.rowcount == 1


async def check_token(conn: Conn, token_hash: str | None) -> TokenCheck:
    """One round trip per request: the active user holding this token, and whether the
    server has users at all (none ever added: single-user mode). Revoking every user does not
    reopen the server: their memories stay theirs, and tokens stay required."""
    cur = await conn.execute(
        "SELECT EXISTS (SELECT 1 FROM users),"
        " u.id, u.name, u.projects, u.created_at"
        " FROM (SELECT 1) AS one LEFT JOIN users u"
        "   ON u.token_hash = %(hash)s AND u.revoked_at IS NULL",
        {"hash": token_hash},
    )
    row = await cur.fetchone()
    if row is None:
        return TokenCheck(users_exist=False, user=None)
    user = (
        UserRow(id=row[1], name=row[2], projects=row[3], created_at=row[4], revoked_at=None)
        if row[1] is not None
        else None
    )
    return TokenCheck(users_exist=bool(row[0]), user=user)


async def viewer_projects(conn: Conn) -> list[str]:
    """The projects the user this transaction acts for is a member of (none for nobody, or for
    a user of every project): known to them before any memory of theirs is stored there."""
    cur = await conn.execute(
        "SELECT DISTINCT unnest(projects) FROM users WHERE id = current_viewer() ORDER BY 1"
    )
    return [str(row[0]) for row in await cur.fetchall() if row[0]]


async def claim_unowned(conn: Conn, user_id: int) -> tuple[int, int]:
    """Give every ownerless memory and session, with its journal and read positions, to this
    user, as private memories: for the single-user store that becomes a team's. A memory,
    call, prompt, session or read position the user already has a row for (same content, call,
    prompt, session id or file), and journal rows of a session someone else owns, stay
    ownerless. Returns (memories, sessions) changed."""
    memories = await conn.execute(
        "UPDATE memories SET owner_id = %(id)s, visibility = 'private' WHERE owner_id IS NULL"
        " AND NOT EXISTS (SELECT 1 FROM memories AS own WHERE own.owner_id = %(id)s"
        "   AND own.content_hash = memories.content_hash)",
        {"id": user_id},
    )
    sessions = await conn.execute(
        "UPDATE imported_sessions SET owner_id = %(id)s WHERE owner_id IS NULL"
        " AND NOT EXISTS (SELECT 1 FROM imported_sessions AS own WHERE own.owner_id = %(id)s"
        "   AND own.session_id = imported_sessions.session_id)",
        {"id": user_id},
    )
    # The read positions go with the sessions: the user's next import goes on from them.
    await conn.execute(
        "UPDATE imported_files SET owner_id = %(id)s WHERE owner_id IS NULL"
        " AND NOT EXISTS (SELECT 1 FROM imported_files AS own WHERE own.owner_id = %(id)s"
        "   AND own.file_path = imported_files.file_path)",
        {"id": user_id},
    )
    await conn.execute(
        "UPDATE session_events SET owner_id = %(id)s WHERE owner_id IS NULL"
        " AND NOT EXISTS (SELECT 1 FROM imported_sessions AS i"
        "   WHERE i.session_id = session_events.session_id AND i.owner_id <> %(id)s)"
        " AND NOT EXISTS (SELECT 1 FROM session_events AS own WHERE own.owner_id = %(id)s"
        "   AND own.tool_use_id = session_events.tool_use_id)",
        {"id": user_id},
    )
    await conn.execute(
        "UPDATE journal_prompts SET owner_id = %(id)s WHERE owner_id IS NULL"
        " AND NOT EXISTS (SELECT 1 FROM imported_sessions AS i"
        "   WHERE i.session_id = journal_prompts.session_id AND i.owner_id <> %(id)s)"
        " AND NOT EXISTS (SELECT 1 FROM journal_prompts AS own WHERE own.owner_id = %(id)s"
        "   AND own.session_id = journal_prompts.session_id"
        "   AND own.prompt_key = journal_prompts.prompt_key)",
        {"id": user_id},
    )
    return memories.rowcount, sessions.rowcount
