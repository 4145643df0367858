#!/usr/bin/env bash
# Set up everything the tests need and run all of them: lint, types, the docs site build, the web
# UI's unit tests, and every pytest group (unit, integration, reliability, security, browser).
#
# Usage: scripts/test.sh [--quick] [pytest arguments]
#
#   --quick   the developer's loop: ruff, then the unit tests and the integration tests that
#             run in pytest's own process (no CLI, server or agent started: marker `processes`,
#             set by tests/process_marks.py, and `agent_clis`); it says what it leaves
#             out (the UI, mypy, the docs build, security, reliability, the browser tests, the
#             agent-CLI tests and the Compose stack), which the full run (and CI) still runs.
# Needs nothing running: the tests start their own embedded PostgreSQL, model, servers and
# browser. What is missing is installed: Python packages into .venv, the UI's npm packages,
# Debian's chromium for the browser tests and pgbouncer for the pooler test (apt-get, as root or
# through sudo). With CI=true it then builds the Docker image and runs the Compose stack too
# (scripts/test-compose.sh); the run fails if either fails.
#
# pytest runs in TEST_WORKERS parallel workers (pytest-xdist, default 3; 0 runs in this process),
# whole files to a worker (--dist loadfile), each worker with its own embedded PostgreSQL, model,
# temp dirs and free ports: the tests mostly wait on subprocesses, CLIs and servers, so 3 workers
# on 2 cores finish in about half the time of one (issue #66). `-n 0` after the script's name
# (or TEST_WORKERS=0) runs them in one process, as a debugger wants.
# The tests marked `alone` then run by themselves, in one process. pytest exits 5 when it
# collected nothing, and that fails the run: in the quick loop, in a full run if either pass
# finds nothing, with a selection of yours (a path, -k) if both do. A `-m` of yours replaces
# the split: one run of what you chose, in the workers.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Each step says when it starts, in seconds since the run began: the time per step, every run.
say() { printf '==> [%5d s] %s\n' "$SECONDS" "$*"; }
# Whether the pytest arguments given choose markers of their own (-m EXPR).
picks_markers() {
    local arg
    for arg in "$@"; do
        case "$arg" in -m*) return 0 ;; esac
    done
    return 1
}

QUICK=0
WORKERS=(-p xdist -n "${TEST_WORKERS:-3}" --dist loadfile)
if [ "${1:-}" = "--quick" ]; then
    QUICK=1
    shift
fi

scripts/setup-venv.sh dev
# shellcheck disable=SC1091
source .venv/bin/activate

apt_install() {
    local runner=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || { echo "need root or sudo to install $*" >&2; exit 1; }
        runner=(sudo)
    fi
    "${runner[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${runner[@]}" apt-get install -y -qq "$@" >/dev/null
}

if [ "$QUICK" = 0 ] && ! command -v chromium >/dev/null 2>&1; then
    say "installing Debian's chromium for the browser tests"
    apt_install chromium
fi
if ! command -v pgbouncer >/dev/null 2>&1 && [ ! -x /usr/sbin/pgbouncer ]; then
    say "installing Debian's pgbouncer (the tests run the server through it)"
    apt_install pgbouncer
fi
if [ "$QUICK" = 1 ]; then
    say "quick loop: ruff, the unit tests, the integration tests that start no process"
    say "left out (the full run has them): the web UI build and tests, mypy, the docs build," \
        "tests/security, tests/reliability, tests/e2e (a browser), the integration tests that" \
        "start a CLI, a server or an agent (markers processes, agent_clis), the Compose stack"
    ruff check server tests bench
    ruff format --check server tests bench
    status=0
    python -m pytest "${WORKERS[@]}" tests/unit tests/integration \
        -m "not agent_clis and not (integration and processes)" "$@" || status=$?
    if [ "$status" -eq 5 ]; then
        echo "pytest collected no tests: treating that as a failure" >&2
        exit 1
    fi
    exit "$status"
fi

if ! command -v npm >/dev/null 2>&1; then
    say "installing Node.js and npm for the web UI"
    apt_install nodejs npm
fi

say "web UI: install, type-check and build, unit tests"
(
    cd ui
    npm ci --no-audit --no-fund --loglevel=error
    npm run build --silent
    npm test --silent
)

say "ruff"
ruff check server tests bench
ruff format --check server tests bench
say "mypy"
mypy server
say "docs: mkdocs build --strict (a broken link or anchor fails)"
docs_site="$(mktemp -d)"
# Not --quiet: it hides the warnings that --strict counts, and a broken link would pass.
NO_MKDOCS_2_WARNING=1 mkdocs build --strict --site-dir "$docs_site"
rm -rf "$docs_site"

say "pytest"
set +e
if [ "${TEST_WORKERS:-3}" = 0 ]; then
    python -m pytest "$@"
    status=$?
elif picks_markers "$@"; then
    # The caller's own -m replaces ours (pytest keeps the last): one run, in the workers, so
    # no test runs twice.
    python -m pytest "${WORKERS[@]}" "$@"
    status=$?
else
    # The tests marked `alone` measure the server under a load they make themselves (fifty
    # writers while /health is polled): they run after the others, in one process, so the
    # other workers' load is not added to theirs.
    python -m pytest "${WORKERS[@]}" -m "not alone" "$@"
    parallel=$?
    say "pytest: the tests that run alone"
    python -m pytest -m alone "$@"
    alone=$?
    # A failure is the run's status. Else: with no arguments each run must find tests; with a
    # selection of the caller's, one may find none (`tests/unit` holds no `alone` test), not both.
    if [ "$parallel" -ne 0 ] && [ "$parallel" -ne 5 ]; then
        status=$parallel
    elif [ "$alone" -ne 0 ] && [ "$alone" -ne 5 ]; then
        status=$alone
    elif [ "$parallel" -eq 5 ] && { [ $# -eq 0 ] || [ "$alone" -eq 5 ]; }; then
        status=5
    elif [ "$alone" -eq 5 ] && [ $# -eq 0 ]; then
        status=5
    else
        status=0
    fi
fi
set -e
if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests: treating that as a failure" >&2
    exit 1
fi
if [ "${CI:-}" = "true" ]; then
    say "the Docker image and the Compose stack (CI=true): scripts/test-compose.sh"
    scripts/test-compose.sh || status=1
fi
say "done, exit $status"
exit "$status"
