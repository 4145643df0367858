#!/usr/bin/env bash
# Set up claude-memory on this machine and start the server on 127.0.0.1:3333.
#
# Creates .venv, installs the server (CPU-only torch), builds the web UI when Node is present,
# applies database migrations and starts the server on the embedded PostgreSQL (or on
# DATABASE_URL when set). Safe to re-run: it reuses the venv, the build and the data.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"

say() { printf '==> %s\n' "$*"; }

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

HOST="${HOST:-127.0.0.1}"
PORT="${PORT:-3333}"
cat <<URLS

claude-memory is starting (first start loads the embedding model: a few seconds).
  Health:    http://$HOST:$PORT/health
  Web UI:    http://$HOST:$PORT/ui/
  MCP (SSE): http://$HOST:$PORT/sse
  MCP (HTTP): http://$HOST:$PORT/mcp
  Register with Claude Code:
    claude mcp add --scope user --transport sse claude-memory http://localhost:$PORT/sse
Press Ctrl+C to stop.

URLS
exec "$CLI" serve
