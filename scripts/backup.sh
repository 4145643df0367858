#!/usr/bin/env bash
# Back up the memory database with `claude-memory backup` (pg_dump, custom format).
#
# Usage: scripts/backup.sh [--compose] [--out DIR] [--keep N]
#
#   --out DIR    where the backups go (default: $CLAUDE_MEMORY_HOME/backups)
#   --keep N     keep the newest N backups there, delete older ones (default 7)
#   --compose    back up the Docker Compose stack: the dump is made in the server container
#                (and kept, newest N, in its volume under /data/backups), then copied to DIR on
#                this machine
#   -h, --help   show this help
#
# Backups are readable by you only. Restore one with scripts/restore.sh. Copy them off this
# machine too: a backup on the same disk does not survive that disk.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
umask 077

say() { printf '==> %s\n' "$*"; }
die() { printf 'backup: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; }

COMPOSE=0
OUT=""
KEEP=""
while [ $# -gt 0 ]; do
    case "$1" in
        --compose) COMPOSE=1 ;;
        --out) [ $# -ge 2 ] || die "--out needs a folder"; OUT="$2"; shift ;;
        --out=*) OUT="${1#--out=}" ;;
        --keep) [ $# -ge 2 ] || die "--keep needs a number"; KEEP="$2"; shift ;;
        --keep=*) KEEP="${1#--keep=}" ;;
        -h | --help) usage; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
    shift
done
if [ -n "$KEEP" ]; then
    case "$KEEP" in *[!0-9]*) die "--keep must be a whole number of 1 or more" ;; esac
    [ "$KEEP" -ge 1 ] || die "--keep must be a whole number of 1 or more"
fi

if [ "$COMPOSE" -eq 0 ]; then
    if [ -x "$ROOT/.venv/bin/claude-memory" ]; then
        CLI="$ROOT/.venv/bin/claude-memory"
    else
        CLI="$(command -v claude-memory)" || die "claude-memory not found: run ./quickstart.sh first"
    fi
    args=(backup)
    [ -z "$OUT" ] || args+=(--out "$OUT")
    [ -z "$KEEP" ] || args+=(--keep "$KEEP")
    exec "$CLI" "${args[@]}"
fi

# --- the Docker Compose stack --------------------------------------------------------------
command -v docker > /dev/null 2>&1 || die "docker not found"
compose() { docker compose --project-directory "$ROOT" -f "$ROOT/docker-compose.yml" "$@"; }
# In the running server container, or in a one-off one (which starts the database if needed).
in_server() {
    if [ -n "$(compose ps --status running --quiet server 2> /dev/null)" ]; then
        compose exec -T server "$@"
    else
        compose run --rm -T server "$@"
    fi
}

# The host folder: --out, else the data dir a native install would use.
if [ -z "$OUT" ]; then
    if [ -n "${CLAUDE_MEMORY_HOME:-}" ]; then
        OUT="$CLAUDE_MEMORY_HOME/backups"
    else
        OUT="${XDG_DATA_HOME:-$HOME/.local/share}/claude-memory/backups"
    fi
fi

say "dumping the database in the server container"
summary="$(in_server claude-memory backup --json --keep "${KEEP:-7}")"
file="$(printf '%s\n' "$summary" | sed -n 's/.*"file": *"\([^"]*\)".*/\1/p')"
bytes="$(printf '%s\n' "$summary" | sed -n 's/.*"bytes": *\([0-9]*\).*/\1/p')"
[ -n "$file" ] || die "could not read the backup's name from: $summary"

mkdir -p "$OUT"
target="$OUT/$(basename "$file")"
say "copying $file to $target"
in_server cat "$file" > "$target.partial"
if [ -n "$bytes" ] && [ "$(wc -c < "$target.partial" | tr -d ' ')" != "$bytes" ]; then
    rm -f "$target.partial"
    die "the copy of $file is incomplete; the backup is still in the container's volume"
fi
mv -f "$target.partial" "$target"

# The newest N here too; names sort by time (claude-memory-YYYYmmdd-HHMMSS-ffffff.dump).
prune() {
    local keep="$1" excess
    shift
    [ -e "$1" ] || return 0
    excess=$(($# - keep))
    while [ "$excess" -gt 0 ]; do
        say "removing old backup $1"
        rm -f "$1"
        shift
        excess=$((excess - 1))
    done
}
prune "${KEEP:-7}" "$OUT"/claude-memory-*.dump
say "backup written: $target"
