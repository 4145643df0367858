#!/usr/bin/env bash
# Set up claude-memory on this machine and start it on http://127.0.0.1:3333.
#
# With a working Docker engine it runs the Compose stack (docker-compose.yml). Otherwise, or
# with --native, it creates .venv, installs the server (CPU-only torch), builds the web UI when
# Node is present, applies migrations, imports ~/.claude/projects when it exists, registers the
# MCP server with Claude Code when the `claude` CLI is there, offers the hooks and the hourly
# schedule, and starts the server. Safe to re-run: it reuses the venv, the build and the data.
#
# Usage: ./quickstart.sh [--native] [--detach] [--no-import] [--hooks] [--schedule] [--yes]
#   --native     do not use Docker even if it is available
#   --detach     run the server in the background (stop it with: .venv/bin/claude-memory stop)
#   --no-import  skip importing ~/.claude/projects
#   --hooks      install the Claude Code hooks without asking
#   --schedule   install the hourly import/learning schedule without asking
#   --yes        answer yes to every question (hooks and schedule included)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"

NATIVE=0 DETACH=0 IMPORT=1 HOOKS=ask SCHEDULE=ask
for arg in "$@"; do
    case "$arg" in
        --native) NATIVE=1 ;;
        --detach) DETACH=1 ;;
        --no-import) IMPORT=0 ;;
        --hooks) HOOKS=yes ;;
        --schedule) SCHEDULE=yes ;;
        --yes) HOOKS=yes SCHEDULE=yes ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

if [ -f ui/package.json ]; then
    if command -v npm >/dev/null 2>&1; then
        say "building the web UI"
        (cd ui && npm ci --no-audit --no-fund --loglevel=error && npm run build --silent)
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

if command -v claude >/dev/null 2>&1; then
    if claude mcp get claude-memory >/dev/null 2>&1; then
        say "Claude Code already knows the claude-memory MCP server"
    else
        say "registering the MCP server with Claude Code"
        claude mcp add --scope user --transport sse claude-memory "http://localhost:$PORT/sse" \
            || say "could not register it; run: claude mcp add --scope user --transport sse claude-memory http://localhost:$PORT/sse"
    fi
else
    say "Claude Code CLI not found; register later with:"
    echo "    claude mcp add --scope user --transport sse claude-memory http://localhost:$PORT/sse"
fi

if confirm "install the Claude Code hooks (memory at session start and with each prompt)" "$HOOKS"; then
    "$CLI" install-hooks --no-check  # the server may start only below
fi

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
    echo "  Logs: the data dir's logs/server.log. Stop it with: .venv/bin/claude-memory stop"
    exit 0
fi

print_urls
echo "  First start loads the embedding model (a few seconds). Press Ctrl+C to stop."
exec "$CLI" serve
