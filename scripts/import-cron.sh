#!/usr/bin/env bash
# The learning pipeline, meant to run every hour: import new agent sessions (those of Claude
# Code, Codex CLI, Gemini CLI and OpenCode on this machine), distill them (LLM), mine corrections and
# habits, propose lessons from corrected tool calls, learn working style (LLM), rewrite the
# profile. A running server sees what the pipeline wrote at once (its read cache follows the
# database's commits).
#
# Usage: scripts/import-cron.sh [--compose]
#
#   --compose   run each step in the server image of docker-compose.yml
#               (`docker compose run --rm server claude-memory ...`) instead of .venv
#   -h, --help  show this help
#
# One run at a time: a run that finds another one still going logs that and exits 0. A step
# that fails (e.g. distill when the LLM is down) is logged and the later steps still run; the
# exit code is 1 when any step failed. Everything goes to $CLAUDE_MEMORY_HOME/logs/pipeline.log
# (readable by you only), and to the terminal as well when there is one.
# Settings come from the environment, then from $CLAUDE_MEMORY_HOME/config.env, like the server's.
# Installed as a schedule by scripts/setup-systemd.sh (Linux) or scripts/setup-launchagent.sh
# (macOS).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
umask 077

say() { printf '%s ==> %s\n' "$(date '+%Y-%m-%dT%H:%M:%S%z')" "$*"; }
die() { printf 'import-cron: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; }

COMPOSE=0
while [ $# -gt 0 ]; do
    case "$1" in
        --compose) COMPOSE=1 ;;
        -h | --help) usage; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
    shift
done

default_home() {
    if [ "$(id -u)" -eq 0 ]; then
        printf '/var/lib/claude-memory'
    else
        printf '%s/claude-memory' "${XDG_DATA_HOME:-$HOME/.local/share}"
    fi
}

DATA="${CLAUDE_MEMORY_HOME:-}"  # the data dir comes from the environment only
DATA="${DATA:-$(default_home)}"
DATA="${DATA/#\~/$HOME}"
LOG_DIR="$DATA/logs"
LOG="$LOG_DIR/pipeline.log"
mkdir -p "$LOG_DIR"
chmod 700 "$LOG_DIR"

# Keep one previous log; an hourly run adds a few lines, so this triggers rarely.
if [ -f "$LOG" ] && [ "$(wc -c < "$LOG")" -gt 5000000 ]; then
    mv -f "$LOG" "$LOG.1"
fi
touch "$LOG"
chmod 600 "$LOG"
if [ -t 1 ]; then
    exec > >(tee -a "$LOG") 2>&1
else
    exec >> "$LOG" 2>&1
fi

# --- one run at a time ---------------------------------------------------------------------
LOCK="$DATA/pipeline.lock"
if command -v flock > /dev/null 2>&1; then
    exec 9> "$LOCK"
    if ! flock -n 9; then
        say "another pipeline run is still going; skipping this one"
        exit 0
    fi
else
    # No flock (macOS): a lock directory holding the owner's pid; a dead owner's lock is taken over.
    LOCK_DIR="$LOCK.d"
    holder_alive() {
        local pid
        pid="$(cat "$LOCK_DIR/pid" 2> /dev/null || true)"
        if [ -z "$pid" ]; then
            # Just created, pid not written yet; unless that was long ago and its owner died.
            [ -z "$(find "$LOCK_DIR" -maxdepth 0 -mmin +10 2> /dev/null)" ]
            return
        fi
        kill -0 "$pid" 2> /dev/null && ps -p "$pid" -o command= 2> /dev/null | grep -q import-cron
    }
    if ! mkdir "$LOCK_DIR" 2> /dev/null; then
        if holder_alive; then
            say "another pipeline run is still going (pid $(cat "$LOCK_DIR/pid" 2> /dev/null || echo '?')); skipping this one"
            exit 0
        fi
        say "taking over a stale lock left by pid $(cat "$LOCK_DIR/pid" 2> /dev/null || echo '?')"
        stale="$LOCK_DIR.stale.$$"
        mv "$LOCK_DIR" "$stale" 2> /dev/null && rm -rf "$stale"
        if ! mkdir "$LOCK_DIR" 2> /dev/null; then
            say "another run took the lock first; skipping this one"
            exit 0
        fi
    fi
    echo "$$" > "$LOCK_DIR/pid"
    trap 'rm -rf "$LOCK_DIR"' EXIT
fi

# --- how to run a command ------------------------------------------------------------------
if [ "$COMPOSE" -eq 1 ]; then
    command -v docker > /dev/null 2>&1 || die "docker not found on PATH ($PATH)"
    compose() { docker compose --project-directory "$ROOT" -f "$ROOT/docker-compose.yml" "$@"; }
    cli() { compose run --rm -T server claude-memory "$@"; }
else
    if [ -x "$ROOT/.venv/bin/claude-memory" ]; then
        CLI="$ROOT/.venv/bin/claude-memory"
    elif command -v claude-memory > /dev/null 2>&1; then
        CLI="$(command -v claude-memory)"
    else
        die "claude-memory not found: run ./quickstart.sh (or scripts/setup-venv.sh) first"
    fi
    cli() { "$CLI" "$@"; }
fi

CLAUDE_DIR="${CLAUDE_CONFIG_DIR:-$HOME/.claude}"
PROJECTS="$CLAUDE_DIR/projects"

CODEX_SESSIONS="${CODEX_HOME:-$HOME/.codex}/sessions"
GEMINI_DIR="${GEMINI_CLI_HOME:-$HOME}/.gemini"
OPENCODE_DATA="${XDG_DATA_HOME:-$HOME/.local/share}/opencode"

# Every agent whose sessions are on this machine: Claude Code, Codex CLI, Gemini CLI, OpenCode.
import_sessions() {
    if [ ! -d "$PROJECTS" ] && [ ! -d "$CODEX_SESSIONS" ] && [ ! -d "$GEMINI_DIR/tmp" ] \
        && [ ! -d "$OPENCODE_DATA" ]; then
        say "no agent sessions on this machine yet; nothing to import"
        return 0
    fi
    if [ "$COMPOSE" -eq 0 ]; then
        cli import --agents
        return
    fi
    # As your own uid, so the read-only mounts of your sessions are readable in the container.
    local mounts=() sources=()
    if [ -d "$PROJECTS" ]; then
        mounts+=(-v "$PROJECTS:/import/claude-projects:ro")
        sources+=(--claude-code /import/claude-projects)
    fi
    if [ -d "$CODEX_SESSIONS" ]; then
        mounts+=(-v "$CODEX_SESSIONS:/import/codex-sessions:ro")
        sources+=(--codex /import/codex-sessions)
    fi
    if [ -d "$GEMINI_DIR/tmp" ]; then
        # The whole folder: projects.json beside tmp/ names the projects' folders.
        mounts+=(-v "$GEMINI_DIR:/import/gemini:ro")
        sources+=(--gemini /import/gemini/tmp)
    fi
    if [ -d "$OPENCODE_DATA" ]; then
        # Read-only is enough: OpenCode leaves its -wal and -shm files beside the database.
        mounts+=(-v "$OPENCODE_DATA:/import/opencode:ro")
        sources+=(--opencode /import/opencode)
    fi
    compose run --rm -T --user "$(id -u):$(id -g)" -e HOME=/tmp "${mounts[@]}" \
        server claude-memory import "${sources[@]}"
}

write_profile() {
    if [ "$COMPOSE" -eq 0 ]; then
        cli profile
        return
    fi
    # The container writes the profile to its stdout; it lands in your ~/.claude/user.md.
    mkdir -p "$CLAUDE_DIR"
    local partial
    partial="$(mktemp "$CLAUDE_DIR/user.md.XXXXXX")"
    if compose run --rm -T server sh -c \
        'claude-memory profile --output /tmp/user.md >&2 && cat /tmp/user.md' > "$partial" \
        && [ -s "$partial" ]; then
        mv -f "$partial" "$CLAUDE_DIR/user.md"
        say "profile written to $CLAUDE_DIR/user.md"
    else
        rm -f "$partial"
        return 1
    fi
}

# --- the steps -----------------------------------------------------------------------------
FAILED=""
run_step() {
    local name="$1" started=$SECONDS status=0
    shift
    say "$name: starting"
    "$@" || status=$?
    if [ "$status" -eq 0 ]; then
        say "$name: done in $((SECONDS - started))s"
    else
        say "$name: FAILED (exit $status) after $((SECONDS - started))s; going on with the next step"
        FAILED="$FAILED $name"
    fi
}

say "pipeline starting (data dir $DATA$([ "$COMPOSE" -eq 1 ] && echo ', docker compose'))"
run_step import import_sessions
run_step distill cli distill
run_step signals cli signals
run_step lessons cli lessons propose
run_step behavior cli behavior
run_step profile write_profile

if [ -n "$FAILED" ]; then
    say "pipeline finished with failed steps:$FAILED (see above; docs/OPERATIONS.md has what to do)"
    exit 1
fi
say "pipeline finished"
