"""What the model adaptation reads: every live memory, in conversation order."""

from __future__ import annotations

from server.domain.adaptation import SourceText
from server.store.tx import Conn


async def source_texts(conn: Conn) -> list[SourceText]:
    """Live memories by session, sub-agent and time (memories of no session last, by id), each
    with the text of the memory it supersedes."""
    cur = await conn.execute(
        """
        SELECT m.id, m.content, m.kind, m.role, m.session_id,
               coalesce(m.metadata->>'agent_id', ''), old.content
        FROM memories m
        LEFT JOIN memories old ON old.id = m.supersedes
        WHERE m.deleted_at IS NULL
        ORDER BY m.session_id NULLS LAST, coalesce(m.metadata->>'agent_id', ''),
                 m.created_at, m.id
        """
    )
    return [
        SourceText(
            id=int(row[0]),
            content=str(row[1]),
            kind=str(row[2]),
            role=row[3],
            session_id=row[4],
            agent_id=str(row[5]),
            supersedes_content=row[6],
        )
        for row in await cur.fetchall()
    ]
