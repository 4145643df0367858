"""`one_read` (server/store/tx.py), on the real database: every transaction opened inside it,
by the task and by the tasks it starts, is a part of one read-only transaction on one
connection; a part's `SET LOCAL` ends with it; a part that fails leaves the read usable; and
nothing can be written inside."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from server.store.tx import Pool, one_read, transaction

pytestmark = pytest.mark.integration


async def backend_and_sort(pool: Pool, sort: str) -> tuple[int, str, str]:
    """In a transaction of its own: the server process, and `enable_sort` after setting it
    locally and after giving way to the other tasks."""
    async with transaction(pool) as conn:
        await conn.execute(f"SET LOCAL enable_sort = {sort}")
        await asyncio.sleep(0.01)  # another part would run here if parts could interleave
        cur = await conn.execute("SELECT pg_backend_pid(), current_setting('enable_sort')")
        row = await cur.fetchone()
    assert row is not None
    return int(row[0]), str(row[1]), sort


async def enable_sort(pool: Pool) -> str:
    async with transaction(pool) as conn:
        cur = await conn.execute("SELECT current_setting('enable_sort')")
        row = await cur.fetchone()
    assert row is not None
    return str(row[0])


async def test_parts_share_one_connection_one_at_a_time_and_leave_no_setting(pool: Pool) -> None:
    async with one_read(pool):
        found = await asyncio.gather(
            *(backend_and_sort(pool, sort) for sort in ("off", "on", "off", "on"))
        )
        after = await enable_sort(pool)

    assert len({backend for backend, _, _ in found}) == 1
    assert all(seen == sort for _, seen, sort in found)
    assert after == "on"


async def test_a_failed_part_leaves_the_read_usable(pool: Pool) -> None:
    async with one_read(pool):
        with pytest.raises(psycopg.errors.DivisionByZero):
            async with transaction(pool) as conn:
                await conn.execute("SELECT 1 / 0")
        assert await enable_sort(pool) == "on"


async def test_nothing_is_written_inside_a_read(pool: Pool) -> None:
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        async with one_read(pool), transaction(pool) as conn:
            await conn.execute("CREATE TEMPORARY TABLE written_in_a_read (id int)")
