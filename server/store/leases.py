"""SQL for `job_leases`: which runner works on which item of a batch job, until when."""

from __future__ import annotations

from server.store.tx import Conn


async def claim(conn: Conn, job: str, item: str, holder: str, seconds: float) -> bool:
    """Take the lease unless another holder's is still running; True when it is ours."""
    cur = await conn.execute(
        "INSERT INTO job_leases AS l (job, item, holder, expires_at)"
        " VALUES (%(job)s, %(item)s, %(holder)s, now() + make_interval(secs => %(secs)s))"
        " ON CONFLICT (job, item) DO UPDATE"
        " SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at"
        " WHERE l.expires_at < now() OR l.holder = EXCLUDED.holder"
        " RETURNING 1",
        {"job": job, "item": item, "holder": holder, "secs": seconds},
    )
    return await cur.fetchone() is not None


async def holder_of(conn: Conn, job: str, item: str) -> str | None:
    cur = await conn.execute(
        "SELECT holder FROM job_leases WHERE job = %(job)s AND item = %(item)s",
        {"job": job, "item": item},
    )
    row = await cur.fetchone()
    return str(row[0]) if row else None


async def take_over(
    conn: Conn, job: str, item: str, dead: str, holder: str, seconds: float
) -> bool:
    """Take a lease from a holder known to be gone; False if it changed hands meanwhile."""
    cur = await conn.execute(
        "UPDATE job_leases SET holder = %(holder)s,"
        " expires_at = now() + make_interval(secs => %(secs)s)"
        " WHERE job = %(job)s AND item = %(item)s AND holder = %(dead)s RETURNING 1",
        {"job": job, "item": item, "dead": dead, "holder": holder, "secs": seconds},
    )
    return await cur.fetchone() is not None


async def renew(conn: Conn, job: str, item: str, holder: str, seconds: float) -> bool:
    """Push our lease's expiry on; False when it is no longer ours."""
    cur = await conn.execute(
        "UPDATE job_leases SET expires_at = now() + make_interval(secs => %(secs)s)"
        " WHERE job = %(job)s AND item = %(item)s AND holder = %(holder)s RETURNING 1",
        {"job": job, "item": item, "holder": holder, "secs": seconds},
    )
    return await cur.fetchone() is not None


async def release(conn: Conn, job: str, item: str, holder: str) -> None:
    await conn.execute(
        "DELETE FROM job_leases WHERE job = %(job)s AND item = %(item)s AND holder = %(holder)s",
        {"job": job, "item": item, "holder": holder},
    )
