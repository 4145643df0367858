"""Team members and their tokens: add, list, revoke, and who a bearer token belongs to.

Tokens are 256-bit random strings shown once when a user is added; only their SHA-256 is
stored. A token that random needs no slow password hash: nobody can guess one to test against
the digest, and the lookup stays one indexed equality per request.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from server.core.access import Viewer
from server.core.errors import Conflict, InvalidInput, NotFound
from server.core.models.users import UserRow
from server.store import users as user_store
from server.store.tx import Pool, transaction
from server.store.users import TokenCheck

TOKEN_PREFIX = "cmu_"
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class NewUser:
    user: UserRow
    token: str  # shown once; only its digest is kept


class UserDirectory:
    """The users of one database, for the CLI (add/list/revoke) and the HTTP guard."""

    def __init__(self, pool: Pool, default_visibility: str) -> None:
        self.pool = pool
        self.default_visibility = default_visibility

    async def add(
        self, name: str, projects: Sequence[str] = (), *, claim_unowned: bool = False
    ) -> tuple[NewUser, tuple[int, int]]:
        """A new user with a fresh token; with `claim_unowned`, the memories and sessions
        stored before users existed become theirs (private). Returns the user and what was
        claimed (memories, sessions)."""
        name = name.strip().lower()
        if not _NAME.fullmatch(name):
            raise InvalidInput(
                f"user names are 1-64 lowercase letters, digits, '.', '_' or '-', got {name!r}"
            )
        kept = sorted({p.strip() for p in projects if p.strip()})
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        async with transaction(self.pool) as conn:
            user = await user_store.insert(conn, name, token_digest(token), kept or None)
            if user is None:
                raise Conflict(f"a user named {name!r} exists already (revoked names stay taken)")
            claimed = await user_store.claim_unowned(conn, user.id) if claim_unowned else (0, 0)
        return NewUser(user=user, token=token), claimed

    async def list(self) -> list[UserRow]:
        async with transaction(self.pool) as conn:
            return await user_store.list_all(conn)

    async def revoke(self, name: str) -> None:
        async with transaction(self.pool) as conn:
            if not await user_store.revoke(conn, name.strip().lower()):
                raise NotFound(f"no active user named {name!r}")

    async def check(self, token: str | None) -> TokenCheck:
        """Whose this token is, and whether the server has users at all."""
        async with transaction(self.pool) as conn:
            return await user_store.check_token(conn, token_digest(token) if token else None)

    def viewer(self, user: UserRow) -> Viewer:
        return Viewer(
            user_id=user.id,
            name=user.name,
            projects=tuple(user.projects) if user.projects else None,
            default_visibility=self.default_visibility,
        )

    async def viewer_by_name(self, name: str) -> Viewer:
        """The viewer a command acts as for `--user NAME`: an active user of this database."""
        async with transaction(self.pool) as conn:
            user = await user_store.active_by_name(conn, name.strip().lower())
        if user is None:
            raise NotFound(f"no active user named {name!r} (see: claude-memory users list)")
        return self.viewer(user)

    async def viewer_by_id(self, user_id: int | None) -> Viewer | None:
        """The viewer a batch job acts as for work owned by `user_id` (None: nobody)."""
        if user_id is None:
            return None
        async with transaction(self.pool) as conn:
            user = await user_store.by_id(conn, user_id)
        return self.viewer(user) if user is not None else None
