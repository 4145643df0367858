"""What a backup may hold before `restore` runs any of it, and who runs it (issue #54).

A backup is a file someone may have handed over, and `pg_restore` runs whatever SQL its table
of contents carries: a crafted one made a materialized view whose refresh ran
`COPY ... TO PROGRAM`, and replaced the visibility function with `SELECT true`. So:

1. before any of its SQL runs, every schema object in the archive must be one our migrations
   create, with exactly the definition they give it (compared with a scratch database migrated
   to the archive's own migration versions, dumped by the same pg_dump), and its data may only
   fill our tables and set our sequences;
2. the archive is loaded by a role made for the load that is not a superuser, so it cannot run
   programs or read and write the server's files even through something the check missed;
3. before the loaded database replaces the live one, its schema is compared again, so SQL that
   slipped in through the data section cannot leave a changed function or an extra object.

A backup's `users` rows are tokens (hashed) someone else may know: one row turns a single-user
store into a team store whose token the backup's maker holds (#65). So the users a backup
holds are read from it first (as text, nothing run) and named; users the store does not hold
are restored only when asked for (`restore --with-users`), and the loaded database's users are
compared with the store's again before the swap, whatever the archive's listing said.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from server.core.errors import StartupError
from server.db import admin
from server.db.admin import StoredUser
from server.db.migrate import VECTOR_TABLES, apply_migrations, discover_migrations

# One schema object: (type, schema, name) as pg_dump's header comment names it.
ObjectKey = tuple[str, str, str]

DATA_KINDS = ("TABLE DATA", "SEQUENCE SET")
# Entries pg_restore writes for the archive itself, not objects of ours.
ARCHIVE_KINDS = ("ENCODING", "STDSTRINGS", "SEARCHPATH")
# What the loading role cannot do and a superuser creates first: the extensions.
EXTENSION_KINDS = ("EXTENSION",)

_HEADER = re.compile(r"^-- (?:Data for )?Name: (.*); Type: (.*); Schema: (.*); Owner: .*$")
_VECTOR_INDEXES = {index for _, index in VECTOR_TABLES}
_HNSW_INDEX = re.compile(
    r"CREATE INDEX \w+ ON public\.\w+ USING hnsw \(embedding public\.vector_cosine_ops\)"
    r" WITH \(m='?\d+'?, ef_construction='?\d+'?\);"
)
# With or without the dimension: migrations leave it open, the server sets the model's.
_VECTOR_TYPE = re.compile(r"public\.vector(\(\d+\))?(?!\w)")
# `COPY public.users (id, name, ...) FROM stdin;`, and the escapes of COPY's text format.
_USERS_COPY = re.compile(r"^COPY public\.users \((.*)\) FROM stdin;$")
_COPY_ESCAPE = re.compile(r"\\(.)")
_COPY_CHARS = {"t": "\t", "n": "\n", "r": "\r", "b": "\b", "f": "\f", "v": "\v"}
_PLAIN_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
# `pg_restore --list` lines: "215; 1259 16390 TABLE public memories owner".
_LIST_LINE = re.compile(r"^\d+; \d+ \d+ (.+)$")


class UnsafeBackup(StartupError):
    """A backup that holds something our migrations do not create: nothing was run."""


def run_tool(command: list[str]) -> str:
    """Run a PostgreSQL tool; its stdout, or StartupError with its last line of error."""
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise StartupError(
            f"{Path(command[0]).name} failed: {detail[-1] if detail else 'no output'}"
        )
    return result.stdout


def schema_blocks(dump_sql: str) -> dict[ObjectKey, str]:
    """Each schema object's SQL in a pg_dump text, keyed by type, schema and name."""
    blocks: dict[ObjectKey, list[str]] = {}
    # What comes before the first object (SET lines, the search path) runs too.
    current = blocks.setdefault(("PREAMBLE", "", ""), [])
    for line in dump_sql.splitlines():
        match = _HEADER.match(line)
        if match:
            name, kind, schema = match.group(1), match.group(2), match.group(3)
            current = blocks.setdefault((kind, schema, name), [])
            continue
        # Comments carry nothing that runs; `\restrict` keys are random per dump.
        if line.strip() and not line.startswith(("--", "\\restrict", "\\unrestrict")):
            current.append(line.rstrip())
    return {key: "\n".join(lines) for key, lines in blocks.items()}


def archive_versions(pg_restore: str, file: Path) -> set[int]:
    """The migration versions a backup records (read as text: nothing is run)."""
    text = run_tool([pg_restore, "--data-only", "--table=schema_migrations", "-f", "-", str(file)])
    versions: set[int] = set()
    in_copy = False
    for line in text.splitlines():
        if line.startswith("COPY ") and "schema_migrations" in line:
            in_copy = True
            continue
        if in_copy:
            if line == "\\.":
                in_copy = False
                continue
            first = line.split("\t", 1)[0]
            if not first.isdigit():
                raise UnsafeBackup(f"the backup's schema_migrations holds {first[:40]!r}")
            versions.add(int(first))
    return versions


def archive_users(pg_restore: str, file: Path) -> list[tuple[str, str]]:
    """The (name, token hash) of each `users` row a backup holds (read as text: nothing is
    run)."""
    text = run_tool([pg_restore, "--data-only", "--table=users", "-f", "-", str(file)])
    held: list[tuple[str, str]] = []
    columns: list[str] | None = None
    for line in text.splitlines():
        header = _USERS_COPY.match(line)
        if header:
            columns = [c.strip().strip('"') for c in header.group(1).split(",")]
            continue
        if columns is None:
            continue
        if line == "\\.":
            columns = None
            continue
        fields = dict(zip(columns, line.split("\t"), strict=False))
        held.append((_copy_text(fields.get("name", "")), _copy_text(fields.get("token_hash", ""))))
    return held


def new_users(held: Iterable[tuple[str, str]], store: Iterable[StoredUser]) -> list[str]:
    """The names of the users in `held` that the store does not hold with the same token."""
    known = {(user.name, user.token_hash) for user in store}
    return sorted({name for name, token in held if (name, token) not in known})


def changed_users(loaded: set[StoredUser], store: set[StoredUser]) -> list[str]:
    """The names of the users a loaded database holds that the store does not hold as they
    are (a new user, another token, other projects, a revoked one active again)."""
    return sorted({user.name for user in loaded - store})


def named(names: Iterable[str]) -> str:
    """User names for one line of output: anything but a plain name is quoted and escaped."""
    return ", ".join(n if _PLAIN_NAME.fullmatch(n) else ascii(n) for n in names)


def _copy_text(field: str) -> str:
    """A field of COPY's text format as the value it stands for (\\N: none, so "")."""
    if field == "\\N":
        return ""
    return _COPY_ESCAPE.sub(lambda m: _COPY_CHARS.get(m.group(1), m.group(1)), field)


def reference_schema(url: str, versions: set[int], pg_dump: str) -> dict[ObjectKey, str]:
    """Our migrations' schema at `versions`: a scratch database migrated, dumped, dropped."""
    known = {m.version: m for m in discover_migrations()}
    unknown = sorted(versions - set(known))
    if unknown:
        raise UnsafeBackup(
            f"the backup records migration {unknown[0]}, which this version of claude-memory "
            "does not have: upgrade claude-memory first"
        )
    scratch = f"{admin.database_name(url)}_reference_{secrets.token_hex(4)}"
    admin.create_database(url, scratch)
    try:
        with tempfile.TemporaryDirectory(prefix="claude-memory-migrations-") as folder:
            for version in versions:
                migration = known[version]
                (Path(folder) / migration.path.name).symlink_to(migration.path)
            asyncio.run(apply_migrations(admin.with_database(url, scratch), Path(folder)))
        dumped = run_tool(
            [
                pg_dump,
                "--schema-only",
                "--no-owner",
                "--no-privileges",
                f"--dbname={admin.with_database(url, scratch)}",
            ]
        )
    finally:
        admin.drop_database(url, scratch)
    return schema_blocks(dumped)


def check_archive(url: str, file: Path, pg_restore: str, pg_dump: str) -> dict[ObjectKey, str]:
    """Refuse a backup that holds anything our migrations would not make; return the schema
    it must have once loaded. Runs none of the backup's SQL."""
    entries = [
        match.group(1)
        for line in run_tool([pg_restore, "--list", str(file)]).splitlines()
        if (match := _LIST_LINE.match(line))
    ]
    reference = reference_schema(url, archive_versions(pg_restore, file), pg_dump)
    tables = {name for kind, _, name in reference if kind == "TABLE"}
    sequences = {name for kind, _, name in reference if kind == "SEQUENCE"}
    for entry in entries:
        kind = next((k for k in DATA_KINDS if entry.startswith(k + " ")), None)
        if kind is None:
            continue
        parts = entry[len(kind) + 1 :].split(" ")
        allowed = tables if kind == "TABLE DATA" else sequences
        if len(parts) < 2 or parts[0] != "public" or parts[1] not in allowed:
            raise UnsafeBackup(f"the backup fills {kind} {' '.join(parts[:2])}, not one of ours")
    archived = schema_blocks(
        run_tool(
            [pg_restore, "--schema-only", "--no-owner", "--no-privileges", "-f", "-", str(file)]
        )
    )
    compare_schemas(without_runtime_parts(archived), without_runtime_parts(reference), "the backup")
    return reference


def round_tripped(blocks: dict[ObjectKey, str]) -> dict[ObjectKey, str]:
    """Blocks without parentheses and spaces: PostgreSQL deparses a function body it loaded
    from a dump with other parentheses than the one its migration created, and nothing but
    the loaded database is there to compare after the load."""
    return {key: re.sub(r"[\s()]", "", text) for key, text in blocks.items()}


def without_runtime_parts(blocks: dict[ObjectKey, str]) -> dict[ObjectKey, str]:
    """The schema less what the server sets at run time rather than by migration: the vector
    columns' dimension (the model's) and the HNSW indexes, which are left out when they have
    exactly the shape the server builds (any other definition under their names stays, and
    is refused)."""
    kept = {}
    for key, text in blocks.items():
        kind, _, name = key
        if kind == "INDEX" and name in _VECTOR_INDEXES and _HNSW_INDEX.fullmatch(text):
            continue
        kept[key] = _VECTOR_TYPE.sub("public.vector(D)", text)
    return kept


def compare_schemas(
    found: dict[ObjectKey, str], reference: dict[ObjectKey, str], what: str
) -> None:
    """UnsafeBackup naming the first object that is not ours or not as our migrations make it."""
    for key in sorted(found):
        kind, schema, name = key
        if key not in reference:
            raise UnsafeBackup(
                f"{what} holds {kind} {schema}.{name}, which claude-memory's migrations do not "
                "create; nothing was restored"
            )
        if found[key] != reference[key]:
            raise UnsafeBackup(
                f"{what} defines {kind} {schema}.{name} differently from claude-memory's "
                "migrations; nothing was restored"
            )
    missing = sorted(set(reference) - set(found))
    if missing:
        kind, schema, name = missing[0]
        raise UnsafeBackup(f"{what} lacks {kind} {schema}.{name}; nothing was restored")


def loadable_list(pg_restore: str, file: Path, folder: Path) -> Path:
    """The archive's list with the extensions left out: a superuser creates those first."""
    listed = run_tool([pg_restore, "--list", str(file)]).splitlines()
    kept = []
    for line in listed:
        match = _LIST_LINE.match(line)
        if match and (
            match.group(1).startswith(EXTENSION_KINDS)
            or match.group(1).startswith("COMMENT - EXTENSION")
        ):
            kept.append(";" + line)
        else:
            kept.append(line)
    path = folder / "restore.list"
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return path


@contextmanager
def loading_login(url: str, database: str) -> Iterator[tuple[str, dict[str, str]]]:
    """The URL the backup is loaded through, and the environment that carries its password
    (never on a command line other users can read): as a login role made for the load, which owns
    `database` meanwhile and is no superuser, so it cannot run programs or touch the server's
    files; it logs in itself (a `SET ROLE` the archive's SQL could `RESET`). When the
    connecting user is no superuser, its own URL (refused if it may run programs). Afterwards
    the loaded objects go back to the connecting user and the role is dropped."""
    target = admin.with_database(url, database)
    with psycopg.connect(target, autocommit=True) as conn:
        row = conn.execute(
            "SELECT rolsuper, pg_has_role(current_user, 'pg_execute_server_program', 'USAGE')"
            " FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        is_superuser, runs_programs = (bool(row[0]), bool(row[1])) if row else (False, False)
        if not is_superuser:
            if runs_programs:
                raise StartupError(
                    "restore refuses to load a backup as a user that may run programs "
                    "(pg_execute_server_program): use another database user"
                )
            yield target, {}
            return
        role, password = f"claude_memory_restore_{secrets.token_hex(4)}", secrets.token_hex(16)
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} NOSUPERUSER NOCREATEDB NOCREATEROLE").format(
                sql.Identifier(role), sql.Literal(password)
            )
        )
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(
                sql.SQL("ALTER DATABASE {} OWNER TO {}").format(
                    sql.Identifier(database), sql.Identifier(role)
                )
            )
            params = conninfo_to_dict(target)
            params.update(user=role)
            params.pop("password", None)
            yield make_conninfo("", **params), {"PGPASSWORD": password}
        finally:
            conn.execute(
                sql.SQL("ALTER DATABASE {} OWNER TO current_user").format(sql.Identifier(database))
            )
            conn.execute(
                sql.SQL("REASSIGN OWNED BY {} TO current_user").format(sql.Identifier(role))
            )
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)))
            # The load's own sessions may linger a moment after pg_restore exits.
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %(r)s",
                {"r": role},
            )
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


def check_loaded(url: str, database: str, reference: dict[ObjectKey, str], pg_dump: str) -> None:
    """The loaded database's schema is still exactly ours, and it carries no settings of its
    own (SQL in the data section could have tried either)."""
    target = admin.with_database(url, database)
    dumped = run_tool(
        [pg_dump, "--schema-only", "--no-owner", "--no-privileges", f"--dbname={target}"]
    )
    compare_schemas(
        round_tripped(without_runtime_parts(schema_blocks(dumped))),
        round_tripped(without_runtime_parts(reference)),
        "the restored database",
    )
    with psycopg.connect(target, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase"
            " WHERE d.datname = current_database()"
        ).fetchone()
    if row and int(row[0]) > 0:
        raise UnsafeBackup("the backup set options on its database; nothing was restored")
