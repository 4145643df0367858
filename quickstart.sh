#!/usr/bin/env bash
# Set up claude-memory on this machine and start it on http://127.0.0.1:3333.
#
# With a working Docker engine it runs the Compose stack (docker-compose.yml). Otherwise, or
# with --native, it creates .venv, installs the server (CPU-only torch) and the `claude-memory`
# command (a launcher in ~/.local/bin), builds the web UI when Node is present, applies
# migrations, imports ~/.claude/projects when it exists, offers the Claude Code plugin when the
# `claude` CLI is there (one connection: MCP, hooks and skill) and says how to connect the other
# agents it finds, offers the hourly schedule, and starts the server. Safe to re-run: it reuses
# the venv, the build and the data.
#
# Usage: ./quickstart.sh [--native] [--detach] [--no-import] [--plugin] [--schedule] [--yes]
#   --native     do not use Docker even if it is available
#   --detach     run the server in the background (stop it with: claude-memory stop)
#   --no-import  skip importing ~/.claude/projects
#   --plugin     install the Claude Code plugin without asking
#   --schedule   install the hourly import/learning schedule without asking
#   --yes        answer yes to every question (plugin and schedule included)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"

NATIVE=0 DETACH=0 IMPORT=1 PLUGIN=ask SCHEDULE=ask
for arg in "$@"; do
    case "$arg" in
        --native) NATIVE=1 ;;
        --detach) DETACH=1 ;;
        --no-import) IMPORT=0 ;;
        --plugin) PLUGIN=yes ;;
        --schedule) SCHEDULE=yes ;;
        --yes) PLUGIN=yes SCHEDULE=yes ;;
        -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "unknown option: $arg (see --help)" >&2; exit 2 ;;
    esac
done

say() { printf '==> %s\n' "$*"; }

# Ask a yes/no question on a terminal; without one, the answer is no (say so).
confirm() {
    local question="$1" preset="$2"
    if [ "$preset" = yes ]; then return 0; fi
    if [ ! -t 0 ]; then
        say "$question: skipped (not a terminal; re-run with the flag to do it)"
        return 1
    fi
    read -r -p "==> $question [y/N] " answer
    [[ "$answer" =~ ^[Yy] ]]
}

HOST="${CLAUDE_MEMORY_HOST:-127.0.0.1}"
PORT="${CLAUDE_MEMORY_PORT:-3333}"

print_urls() {
    cat <<URLS

claude-memory:
  Health:     http://$HOST:$PORT/health
  Web UI:     http://$HOST:$PORT/ui/
  MCP (SSE):  http://$HOST:$PORT/sse
  MCP (HTTP): http://$HOST:$PORT/mcp
URLS
}

if [ "$NATIVE" -eq 0 ] && command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1 \
    && docker compose version >/dev/null 2>&1; then
    say "Docker engine found: starting the Compose stack (use --native to run without Docker)"
    if [ ! -f .env ]; then
        cp .env.example .env
        say "created .env from .env.example: set POSTGRES_PASSWORD in it, then re-run"
        exit 1
    fi
    docker compose up -d --build --wait
    print_urls
    echo "  Stop it with: docker compose down"
    exit 0
fi

scripts/setup-venv.sh
CLI="$ROOT/.venv/bin/claude-memory"

# The README's commands say `claude-memory`: a launcher in the user's bin folder, as pipx and
# uv tool install theirs. A file of that name that is not ours is left alone.
BIN_DIR="${XDG_BIN_HOME:-$HOME/.local/bin}"
LAUNCHER="$BIN_DIR/claude-memory"
LAUNCHER_MARK="# claude-memory launcher, written by quickstart.sh"
if [ -e "$LAUNCHER" ] && ! grep -qF "$LAUNCHER_MARK" "$LAUNCHER" 2>/dev/null; then
    say "$LAUNCHER is not ours: leaving it (this checkout's command is $CLI)"
else
    mkdir -p "$BIN_DIR"
    printf '#!/bin/sh\n%s (%s)\nexec "%s" "$@"\n' "$LAUNCHER_MARK" "$ROOT" "$CLI" >"$LAUNCHER.tmp"
    chmod 755 "$LAUNCHER.tmp"
    mv "$LAUNCHER.tmp" "$LAUNCHER"
    case ":$PATH:" in
        *":$BIN_DIR:"*) say "installed the claude-memory command: $LAUNCHER" ;;
        *) say "installed the claude-memory command in $BIN_DIR, which is not on your PATH; add it:"
           echo "    export PATH=\"$BIN_DIR:\$PATH\"    # in ~/.bashrc or ~/.zshrc too" ;;
    esac
fi

ui_is_built() {
    [ -f ui/dist/index.html ] && [ -z "$(find ui/src ui/index.html ui/package.json \
        ui/package-lock.json -newer ui/dist/index.html -print -quit 2>/dev/null)" ]
}
build_ui() {
    # One build at a time: a second quickstart (or test) waits for the first, then finds the
    # UI built instead of emptying node_modules under it.
    exec 9>ui/.build.lock
    command -v flock >/dev/null 2>&1 && flock 9
    if ui_is_built; then
        say "the web UI is built and up to date"
    else
        say "building the web UI"
        (cd ui && npm ci --no-audit --no-fund --loglevel=error && npm run build --silent)
    fi
    exec 9>&-
}
if [ -f ui/package.json ]; then
    if ui_is_built; then
        say "the web UI is built and up to date"
    elif command -v npm >/dev/null 2>&1; then
        build_ui
    else
        say "Node.js/npm not found: skipping the web UI build (the API and MCP still work)"
    fi
fi

say "applying database migrations"
"$CLI" migrate --plain

PROJECTS="${CLAUDE_CONFIG_DIR:-$HOME/.claude}/projects"
if [ "$IMPORT" -eq 1 ] && [ -d "$PROJECTS" ]; then
    say "importing your Claude Code sessions from $PROJECTS"
    "$CLI" import --claude-code "$PROJECTS" || say "import reported problems (see above); going on"
fi

# One connection per agent: the plugin for Claude Code (its MCP server, hooks, skill and
# commands together); `connect` for the others, which the user runs when they want it.
if command -v claude >/dev/null 2>&1; then
    if confirm "install the Claude Code plugin (memory at session start and with each prompt)" "$PLUGIN"; then
        plugin_config=()
        [ "$PORT" = 3333 ] || plugin_config=(--config "url=http://$HOST:$PORT")
        if claude plugin marketplace add "$ROOT" >/dev/null \
            && claude plugin install memories@claude-memory ${plugin_config[@]+"${plugin_config[@]}"}; then
            # Takes out what an older quickstart added (a user-scope entry, install-hooks'
            # hooks), so the plugin is the only connection.
            "$CLI" connect claude-code --no-check --plain || true
        else
            say "could not install the plugin; see the README's 'Connect an agent'"
        fi
    fi
else
    say "Claude Code CLI not found; when it is installed, see the README's 'Connect an agent'"
fi
for agent in codex gemini opencode copilot; do
    if command -v "$agent" >/dev/null 2>&1; then
        say "$agent found: connect it with: claude-memory connect $agent"
    fi
done
# An agent's own model can distil your sessions: offered here, turned on only by you.
"$CLI" llm offers 2>/dev/null | while IFS= read -r offer; do say "$offer"; done || true

if confirm "run import and learning every hour" "$SCHEDULE"; then
    case "$(uname -s)" in
        Darwin) scripts/setup-launchagent.sh ;;
        *) scripts/setup-systemd.sh ;;
    esac
fi

if [ "$DETACH" -eq 1 ]; then
    say "starting the server in the background"
    "$CLI" serve --detach
    print_urls
    echo "  Logs: the data dir's logs/server.log. Stop it with: claude-memory stop"
    exit 0
fi

print_urls
echo "  First start loads the embedding model (a few seconds). Press Ctrl+C to stop."
exec "$CLI" serve
