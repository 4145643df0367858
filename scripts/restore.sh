#!/usr/bin/env bash
# Replace the memory database with a backup, with `claude-memory restore`.
#
# Usage: scripts/restore.sh [--compose] [--yes] [--with-users] FILE
#
#   FILE         a file written by scripts/backup.sh or `claude-memory backup`
#   --yes        do not ask for confirmation (needed when there is no terminal)
#   --with-users also restore users (tokens) the store does not hold; without it a backup
#                holding such users is refused, naming them
#   --compose    restore into the Docker Compose stack: FILE on this machine is streamed into
#                the server container's volume first; a path under /data/ names a backup
#                already in that volume
#   -h, --help   show this help
#
# The backup is checked and restored into a new database first; only when that worked does it
# replace the live one, so a bad file changes nothing. A running server keeps running and
# reconnects to the restored database.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
umask 077

say() { printf '==> %s\n' "$*"; }
die() { printf 'restore: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; }

COMPOSE=0
YES=0
USERS=""  # "--with-users" or nothing, unquoted below on purpose
FILE=""
while [ $# -gt 0 ]; do
    case "$1" in
        --compose) COMPOSE=1 ;;
        --yes | -y) YES=1 ;;
        --with-users) USERS="--with-users" ;;
        -h | --help) usage; exit 0 ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) [ -z "$FILE" ] || die "one backup file at a time"; FILE="$1" ;;
    esac
    shift
done
[ -n "$FILE" ] || die "say which backup to restore (see --help)"

if [ "$COMPOSE" -eq 0 ]; then
    # Resolve the file before changing directory, so a relative path still means what you typed.
    [ -f "$FILE" ] || die "no backup file at $FILE"
    FILE="$(cd "$(dirname "$FILE")" && pwd)/$(basename "$FILE")"
    cd "$ROOT"
    if [ -x "$ROOT/.venv/bin/claude-memory" ]; then
        CLI="$ROOT/.venv/bin/claude-memory"
    else
        CLI="$(command -v claude-memory)" || die "claude-memory not found: run ./quickstart.sh first"
    fi
    if [ "$YES" -eq 1 ]; then
        exec "$CLI" restore "$FILE" --yes $USERS
    fi
    exec "$CLI" restore "$FILE" $USERS
fi

# --- the Docker Compose stack --------------------------------------------------------------
command -v docker > /dev/null 2>&1 || die "docker not found"
compose() { docker compose --project-directory "$ROOT" -f "$ROOT/docker-compose.yml" "$@"; }
in_server() {
    if [ -n "$(compose ps --status running --quiet server 2> /dev/null)" ]; then
        compose exec -T server "$@"
    else
        compose run --rm -T server "$@"
    fi
}

UPLOAD=/data/restore/upload.dump
if [ -f "$FILE" ]; then
    SOURCE="this machine's $FILE"
elif [ "${FILE#/data/}" != "$FILE" ]; then
    SOURCE="the server volume's $FILE"
else
    die "no backup file at $FILE (a file on this machine, or a path under /data/ in the server volume)"
fi

if [ "$YES" -eq 0 ]; then
    [ -t 0 ] || die "restore replaces every memory: add --yes to confirm"
    printf 'Replace every memory in the Docker stack with %s? [y/N] ' "$SOURCE"
    read -r answer
    case "$answer" in
        y | Y | yes | YES) ;;
        *) say "nothing changed"; exit 1 ;;
    esac
fi

target="$FILE"
if [ -f "$FILE" ]; then
    say "copying $FILE into the server volume"
    in_server sh -c "umask 077 && mkdir -p /data/restore && cat > $UPLOAD" < "$FILE"
    target="$UPLOAD"
    trap 'in_server rm -f "$UPLOAD" > /dev/null 2>&1 || true' EXIT
fi

say "restoring $target"
in_server claude-memory restore "$target" --yes $USERS
say "restored; the server reconnects to the restored database by itself"
