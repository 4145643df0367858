#!/usr/bin/env bash
# Set up everything the tests need and run all of them: lint, types, unit and integration.
#
# Usage: scripts/test.sh [pytest arguments]
# Needs nothing running: the tests start their own embedded PostgreSQL, model and servers.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

scripts/setup-venv.sh dev
# shellcheck disable=SC1091
source .venv/bin/activate

echo "==> ruff"
ruff check server tests
ruff format --check server tests
echo "==> mypy"
mypy server

echo "==> pytest"
set +e
python -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests: treating that as a failure" >&2
    exit 1
fi
exit "$status"
