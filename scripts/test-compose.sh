#!/usr/bin/env bash
# Build the Docker image, run the Compose stack for real, and use it the way a person would.
#
# Usage: scripts/test-compose.sh [--clean-images]
#
#   --clean-images   at the end, remove the images this script builds (the app image, the
#                    stand-ins) and the build cache; without it they stay, so the next run is warm
#   -h, --help       show this help
#
# In order, each step timed:
#   1. install what is missing: Debian's docker.io, curl and jq; the Compose v2 plugin (Debian
#      trixie's docker-compose package, unpacked into $DOCKER_CONFIG/cli-plugins)
#   2. start dockerd when no Docker engine answers; only that one is stopped at the end, by PID
#   3. pull the images the Dockerfile and docker-compose.yml name; a tag that cannot be pulled
#      is built here from scripts/compose-standins/ (offline build machines only, see its README)
#   4. docker compose build; docker compose up -d --wait
#   5. check: /health, the database's PostgreSQL and pgvector against the image tag, a save and
#      a search over REST, the MCP tools over /sse and /mcp, the web UI, a restart of the server,
#      down and up again (volumes kept), a backup and a restore (scripts/backup.sh, restore.sh)
#   6. --profile team: two replicas behind nginx; --profile llm when an Ollama image can be had
#   7. docker compose down -v
#
# It runs as Compose project claude-memory-test with throw-away credentials, so your own stack
# (project claude-memory, your .env) is never touched. Needs 127.0.0.1:3333 and :3334 free,
# root (or sudo) for what it installs, about 10 GB of disk, and 5-10 minutes cold.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export LC_NUMERIC=C

PLUGINS="${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
PROJECT=claude-memory-test
APP_IMAGE=claude-memory:local
BUILD_CACHE_KEEP="${BUILD_CACHE_KEEP:-6GB}"
PORT=3333
TEAM_PORT=3334
URL="http://127.0.0.1:$PORT"
TEAM_URL="http://127.0.0.1:$TEAM_PORT"

say() { printf '==> %s\n' "$*"; }
note() { printf '    %s\n' "$*"; }
die() { printf 'test-compose: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; }

CLEAN_IMAGES=0
while [ $# -gt 0 ]; do
    case "$1" in
        --clean-images) CLEAN_IMAGES=1 ;;
        -h | --help) usage; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
    shift
done

# --- bookkeeping: steps, checks, cleanup -----------------------------------------------------

TIMINGS=()
STEP=""
STEP_START=0
PASSED=0
FAILED=0
WORK="$(mktemp -d "${TMPDIR:-/tmp}/claude-memory-compose.XXXXXX")"
DOCKERD_PID=""
INDEX_PID=""
STACK_UP=0
PULLED=()

now_us() { printf '%s' "${EPOCHREALTIME/./}"; }
seconds_since() {
    local us=$(($(now_us) - $1))
    printf '%d.%d' $((us / 1000000)) $((us / 100000 % 10))
}
# begin NAME: a timed step; it ends when the next one begins, or at the end of the run.
begin() {
    finish_step
    STEP="$1"
    STEP_START="$(now_us)"
    say "$STEP"
}
finish_step() {
    [ -n "$STEP" ] || return 0
    local took
    took="$(seconds_since "$STEP_START")"
    TIMINGS+=("$(printf '%7s s  %s' "$took" "$STEP")")
    note "($took s)"
    STEP=""
}
ok() {
    PASSED=$((PASSED + 1))
    note "ok: $*"
}
fail() {
    FAILED=$((FAILED + 1))
    printf 'test-compose: FAILED: %s\n' "$*" >&2
    exit 1
}

host_python() {
    if [ -x "$ROOT/.venv/bin/python" ]; then
        printf '%s\n' "$ROOT/.venv/bin/python"
    else
        command -v python3 || die "python3 is needed to fetch the stand-ins' packages"
    fi
}
# shellcheck source=scripts/compose-standins/standins.sh
source "$ROOT/scripts/compose-standins/standins.sh"

indent() { sed 's/^/    /'; }
# quietly NAME COMMAND...: the command's output goes to a log, shown (its end) only on failure.
quietly() {
    local log="$WORK/$1.log"
    shift
    if ! "$@" > "$log" 2>&1; then
        tail -n 40 "$log" | indent >&2
        return 1
    fi
}
compose() { docker compose --ansi never --project-directory "$ROOT" -f "$ROOT/docker-compose.yml" "$@"; }
every_profile() { compose --profile team --profile llm "$@"; }

diagnose() {
    say "what the stack said before the failure"
    every_profile ps -a 2>&1 | indent
    # Compose clears each log line with an escape sequence even without a terminal.
    every_profile logs --no-color --tail 40 2>&1 | sed 's/\x1b\[[0-9;]*[A-Za-z]//g' | indent
}

remove_images() {
    local images
    images="$(docker image ls -q --filter "label=$STANDIN_LABEL")"
    # shellcheck disable=SC2086
    docker image rm -f "$APP_IMAGE" "$ROOTFS_IMAGE" $images "${PULLED[@]}" > /dev/null 2>&1
    docker builder prune -af > /dev/null 2>&1
    docker image prune -f > /dev/null 2>&1
}

cleanup() {
    local status=$?
    set +e
    if [ "$status" -ne 0 ] && [ -n "$STEP" ]; then
        printf 'test-compose: failed during: %s\n' "$STEP" >&2
    fi
    finish_step
    if [ "$STACK_UP" -eq 1 ]; then
        [ "$status" -eq 0 ] || diagnose
        say "docker compose down -v (after a failure)"
        every_profile down -v --remove-orphans > /dev/null 2>&1
    fi
    if [ -n "$INDEX_PID" ]; then
        kill "$INDEX_PID" 2> /dev/null
        wait "$INDEX_PID" 2> /dev/null
    fi
    if [ "$CLEAN_IMAGES" -eq 1 ] && docker info > /dev/null 2>&1; then
        begin "remove the images this script builds (--clean-images)"
        remove_images
        finish_step
    fi
    if [ -n "$DOCKERD_PID" ]; then
        begin "stop the dockerd this script started (pid $DOCKERD_PID)"
        kill "$DOCKERD_PID" 2> /dev/null
        local waited=0
        while kill -0 "$DOCKERD_PID" 2> /dev/null && [ "$waited" -lt 60 ]; do
            sleep 1
            waited=$((waited + 1))
        done
        finish_step
    fi
    rm -rf "$WORK"
    if [ "${#TIMINGS[@]}" -gt 0 ]; then
        say "steps and their times"
        printf '%s\n' "${TIMINGS[@]}"
    fi
    [ "$status" -eq 0 ] || FAILED=$((FAILED > 0 ? FAILED : 1))
    printf 'compose: %d passed, %d failed\n' "$PASSED" "$FAILED"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo > /dev/null 2>&1; then
        sudo "$@"
    else
        die "need root or sudo to run: $*"
    fi
}
APT_UPDATED=0
apt_install() {
    if [ "$APT_UPDATED" -eq 0 ]; then
        quietly apt as_root apt-get update -qq || die "apt-get update failed"
        APT_UPDATED=1
    fi
    note "apt-get install $*"
    quietly apt as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" \
        || die "apt-get install $* failed (the end of its output is above)"
}

# Throw-away credentials, and every other variable of .env.example set empty, so a developer's
# .env in this folder changes nothing here (the shell's values win over .env's).
while IFS= read -r name; do
    export "$name="
done < <(sed -n 's/^#\{0,1\} *\([A-Z_][A-Z0-9_]*\)=.*/\1/p' .env.example | sort -u)
export COMPOSE_PROJECT_NAME="$PROJECT"
export POSTGRES_USER=claude_memory
export POSTGRES_DB=claude_memory
POSTGRES_PASSWORD="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
export POSTGRES_PASSWORD
unset COMPOSE_FILE COMPOSE_PROFILES COMPOSE_ENV_FILES

# --- 1. tools ------------------------------------------------------------------------------

# Compose v2 from Debian trixie's docker-compose package, without touching this machine's apt
# sources: a private apt configuration downloads the one .deb, dpkg -x unpacks it.
install_compose_plugin() {
    local apt="$WORK/apt-trixie" deb
    rm -rf "$apt"
    mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/unpacked"
    printf 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s trixie main\n' \
        "$DEBIAN_MIRROR" > "$apt/sources.list"
    : > "$apt/status"
    local opts=(
        -o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
        -o "Dir::State::Lists=$apt/lists" -o "Dir::State::status=$apt/status"
        -o "Dir::Cache=$apt" -o "Dir::Cache::archives=$apt/archives"
        -o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null
        -o Debug::NoLocking=1 -o "APT::Sandbox::User=$(id -un)"
    )
    note "Compose v2: Debian trixie's docker-compose package into $PLUGINS"
    apt-get "${opts[@]}" update -qq
    (cd "$apt" && apt-get "${opts[@]}" download -qq docker-compose)
    deb="$(ls "$apt"/docker-compose_*.deb)"
    dpkg -x "$deb" "$apt/unpacked"
    mkdir -p "$PLUGINS"
    install -m 0755 "$apt/unpacked/usr/libexec/docker/cli-plugins/docker-compose" "$PLUGINS/"
    rm -rf "$apt"
}

begin "tools: docker, compose, curl, jq"
missing=()
command -v curl > /dev/null 2>&1 || missing+=(curl)
command -v jq > /dev/null 2>&1 || missing+=(jq)
# Docker's engine unless one already answers (Docker Desktop, a distribution's own package).
if ! command -v docker > /dev/null 2>&1 \
    || { ! command -v dockerd > /dev/null 2>&1 && ! docker info > /dev/null 2>&1; }; then
    missing+=(docker.io)
fi
[ "${#missing[@]}" -eq 0 ] || apt_install "${missing[@]}"
if ! docker compose version > /dev/null 2>&1; then
    install_compose_plugin
fi
compose_version="$(docker compose version --short)"
case "$compose_version" in
    v2.* | 2.* | v[3-9]* | [3-9]*) ;;
    *) die "docker compose $compose_version is too old: this needs Compose v2" ;;
esac
note "$(docker --version); compose $compose_version"

# --- 2. the engine ---------------------------------------------------------------------------

begin "docker engine"
if docker info > /dev/null 2>&1; then
    note "a Docker engine answers: using it ($(docker info --format '{{.ServerVersion}}'))"
else
    [ "$(id -u)" -eq 0 ] || die "no Docker engine answers; start one (as root this script starts dockerd)"
    note "starting dockerd (log: $WORK/dockerd.log)"
    dockerd > "$WORK/dockerd.log" 2>&1 &
    DOCKERD_PID=$!
    for _ in $(seq 60); do
        docker info > /dev/null 2>&1 && break
        kill -0 "$DOCKERD_PID" 2> /dev/null || break
        sleep 1
    done
    if ! docker info > /dev/null 2>&1; then
        tail -n 20 "$WORK/dockerd.log" >&2
        die "dockerd did not start (its log is above)"
    fi
    note "dockerd $(docker info --format '{{.ServerVersion}}') started, pid $DOCKERD_PID"
fi

# A run killed half-way leaves its stack; take it down before anything else.
every_profile down -v --remove-orphans > /dev/null 2>&1 || true
port_busy() { (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null; }
for port in "$PORT" "$TEAM_PORT"; do
    if port_busy "$port"; then
        die "127.0.0.1:$port is in use (a claude-memory server or your own stack?): stop it first"
    fi
done

# --- 3. base images --------------------------------------------------------------------------

dockerfile_arg() { sed -n "s/^ARG $1=//p" Dockerfile | head -n 1; }
service_image() { every_profile config --format json | jq -r ".services.$1.image"; }

begin "base images: pull, or build stand-ins"
DB_IMAGE="$(service_image db)"
BALANCER_IMAGE="$(service_image balancer)"
OLLAMA_IMAGE="$(service_image ollama)"
for tag in "$(dockerfile_arg NODE_IMAGE)" "$(dockerfile_arg PYTHON_IMAGE)" "$DB_IMAGE" \
    "$BALANCER_IMAGE"; do
    ensure_image "$tag" || die "$tag can be neither pulled nor stood in for"
done
OLLAMA_OK=0
if ensure_image "$OLLAMA_IMAGE"; then
    OLLAMA_OK=1
fi
# Stand-ins that a rebuild replaced, now untagged.
docker image prune -f --filter "label=$STANDIN_LABEL" > /dev/null

# --- 4. build and start ----------------------------------------------------------------------

begin "docker compose build"
build_files=()
TORCH_INDEX_URL="$(dockerfile_arg TORCH_INDEX_URL)"
if curl -fsS --max-time 20 -o /dev/null "$TORCH_INDEX_URL/torch/" 2> /dev/null; then
    note "PyTorch's CPU index answers: the build uses it"
else
    start_torch_index "$(dockerfile_arg TORCH_VERSION)"
    note "PyTorch's CPU index cannot be reached: this machine's torch wheel is served at"
    note "$STANDIN_TORCH_INDEX_URL (a loopback index; the build runs on the host network)"
    build_files=(-f "$STANDINS/offline-build.yml")
fi
quietly build compose "${build_files[@]}" --progress plain build \
    || fail "docker compose build: the image does not build (the end of its log is above)"
ok "image $APP_IMAGE built ($(docker image inspect --format '{{.Size}}' "$APP_IMAGE" \
    | awk '{printf "%.2f GB", $1 / 1e9}'))"
if [ -n "$INDEX_PID" ]; then
    kill "$INDEX_PID" 2> /dev/null || true
    wait "$INDEX_PID" 2> /dev/null || true
    INDEX_PID=""
fi
# The image a rebuild replaced, now untagged.
docker image prune -f --filter "label=org.opencontainers.image.title=claude-memory" > /dev/null
if [ -n "$DOCKERD_PID" ]; then
    # A daemon this script started serves nothing else (a CI or build machine): keep its build
    # cache to the last few builds, which every changed server file would otherwise grow by ~2 GB.
    docker builder prune -f --keep-storage "$BUILD_CACHE_KEEP" > /dev/null 2>&1
fi

begin "docker compose up -d --wait"
STACK_UP=1
quietly up compose up -d --wait --wait-timeout 300 \
    || fail "docker compose up -d --wait: the stack did not become healthy"
ok "db and server healthy"

# --- 5. use it -------------------------------------------------------------------------------

STATUS=""
BODY=""
# http METHOD URL [JSON]: sets STATUS and BODY.
http() {
    local args=(-sS -o "$WORK/body" -w '%{http_code}' -X "$1" --max-time 60)
    [ -z "${3:-}" ] || args+=(-H 'content-type: application/json' --data "$3")
    STATUS="$(curl "${args[@]}" "$2" 2> "$WORK/curl.err")" || STATUS="000"
    BODY="$(cat "$WORK/body" 2> /dev/null || true)"
}
expect() {
    local want="$1" what="$2"
    [ "$STATUS" = "$want" ] || fail "$what: HTTP $STATUS, not $want: ${BODY:0:300}$(cat "$WORK/curl.err")"
}
wait_healthy() {
    local url="$1" deadline=$((SECONDS + 180))
    while [ "$SECONDS" -lt "$deadline" ]; do
        http GET "$url/health"
        [ "$STATUS" = 200 ] && return 0
        sleep 2
    done
    fail "$url/health did not answer 200 within 180 s (last: HTTP $STATUS)"
}
sql() { compose exec -T db psql -U "$POSTGRES_USER" -d "$POSTGRES_DB" -Atqc "$1"; }
save_memory() {
    http POST "$1/api/memories" "$(jq -cn --arg content "$2" \
        '{content: $content, tags: ["compose-check"], project: "compose-check"}')"
    expect 201 "save a memory through $1"
    jq -er '.id' <<< "$BODY"
}
get_memory() {
    http GET "$1/api/memories/$2"
    expect 200 "read memory $2 through $1"
    [ "$(jq -r '.content' <<< "$BODY")" = "$3" ] || fail "memory $2 through $1 has other content"
}
# The MCP client runs in the app image on the host's network: a real fastmcp Client talking to
# the published port, as an agent on this machine would.
mcp_check() {
    docker run --rm -i --network host --entrypoint python "$APP_IMAGE" - "$1" "$2" << 'PY'
import asyncio
import sys

from fastmcp import Client


async def main(base: str, memory_id: int) -> None:
    for path in ("sse", "mcp"):
        async with Client(f"{base}/{path}") as client:
            names = {tool.name for tool in await client.list_tools()}
            assert {"save_memory", "hybrid_search", "get_memory"} <= names, names
            got = await client.call_tool("get_memory", {"memory_id": memory_id})
            assert got.structured_content["id"] == memory_id, got.structured_content
            print(f"/{path}: {len(names)} tools, get_memory({memory_id}) answered")


asyncio.run(main(sys.argv[1], int(sys.argv[2])))
PY
}

begin "check: health, the database, REST, MCP, the web UI"
http GET "$URL/health"
expect 200 "/health"
jq -e '.status == "ok" and .database == "ok" and .database_kind == "external"' <<< "$BODY" \
    > /dev/null || fail "/health does not report the container database: $BODY"
ok "/health 200, database_kind external ($(jq -r '"\(.embedding_model), \(.embedding_dimension)-d"' <<< "$BODY"))"

db_tag="${DB_IMAGE#*:}"
want_pgvector="${db_tag%%-pg*}"
want_major="$(printf '%s' "$db_tag" | sed -n 's/.*-pg\([0-9]*\).*/\1/p')"
got="$(sql "SELECT current_setting('server_version_num')::int / 10000 || ' ' || extversion
            FROM pg_extension WHERE extname = 'vector'")"
[ "$got" = "$want_major $want_pgvector" ] \
    || fail "$DB_IMAGE runs PostgreSQL/pgvector '$got', not '$want_major $want_pgvector'"
ok "the db container runs PostgreSQL $want_major with pgvector $want_pgvector, as its tag says"

RUN_ID="$(date -u +%Y%m%dT%H%M%S)-$$"
FIRST="Compose check $RUN_ID: the billing service deploys every Friday at 16:00 UTC."
first_id="$(save_memory "$URL" "$FIRST")"
[ "$(sql "SELECT count(*) FROM memories WHERE id = $first_id")" = 1 ] \
    || fail "memory $first_id is not a row in the db container's database"
ok "POST /api/memories 201 (id $first_id), stored in the db container"
http POST "$URL/api/search" '{"query": "when does billing get deployed?", "mode": "hybrid", "limit": 5}'
expect 200 "/api/search"
jq -e --argjson id "$first_id" '.hits[0].id == $id and .hits[0].similarity > 0.3' \
    <<< "$BODY" > /dev/null || fail "search does not find memory $first_id first: ${BODY:0:300}"
ok "POST /api/search finds it first (similarity $(jq -r '.hits[0].similarity' <<< "$BODY" | cut -c1-5))"

mcp_check "$URL" "$first_id" 2>&1 | indent || fail "the MCP client over /sse and /mcp"
ok "MCP over /sse and /mcp: tool lists and a tool call"

http GET "$URL/ui/"
expect 200 "/ui/"
asset="$(grep -o '/ui/assets/[^"]*\.js' <<< "$BODY" | head -n 1)"
[ -n "$asset" ] || fail "/ui/ is not the built web UI: ${BODY:0:200}"
http GET "$URL$asset"
expect 200 "$asset"
ok "/ui/ and its script $asset served"

begin "check: restart the server container"
quietly restart compose restart server || fail "docker compose restart server"
wait_healthy "$URL"
get_memory "$URL" "$first_id" "$FIRST"
ok "after docker compose restart server: healthy, memory $first_id still there"

begin "check: down and up again (containers recreated, volumes kept)"
quietly down compose down || fail "docker compose down"
quietly up compose up -d --wait --wait-timeout 300 || fail "docker compose up after down"
get_memory "$URL" "$first_id" "$FIRST"
ok "after docker compose down and up: memory $first_id still there (named volumes)"

begin "check: backup and restore (scripts/backup.sh, restore.sh --compose)"
scripts/backup.sh --compose --out "$WORK/backups" --keep 2 2>&1 | indent \
    || fail "scripts/backup.sh --compose"
dumps=("$WORK"/backups/claude-memory-*.dump)
backup="${dumps[-1]}"
[ -s "$backup" ] || fail "scripts/backup.sh --compose wrote no dump into $WORK/backups"
LATER="Compose check $RUN_ID: saved after the backup, gone after the restore."
later_id="$(save_memory "$URL" "$LATER")"
scripts/restore.sh --compose --yes "$backup" 2>&1 | indent || fail "scripts/restore.sh --compose"
wait_healthy "$URL"
get_memory "$URL" "$first_id" "$FIRST"
http GET "$URL/api/memories/$later_id"
expect 404 "memory $later_id, saved after the backup, after the restore"
ok "backup ($(wc -c < "$backup" | tr -d ' ') bytes) restored: memory $first_id back, $later_id gone"

# --- 6. the profiles -------------------------------------------------------------------------

begin "--profile team: two replicas behind nginx"
quietly team compose --profile team up -d --wait --wait-timeout 300 db replica balancer \
    || fail "docker compose --profile team up -d --wait db replica balancer"
replicas="$(compose --profile team ps --status running --quiet replica | wc -l)"
[ "$replicas" -eq 2 ] || fail "$replicas replicas running, not 2"
wait_healthy "$TEAM_URL"
get_memory "$TEAM_URL" "$first_id" "$FIRST"
TEAM="Compose check $RUN_ID: saved through the balancer, read by the server."
team_id="$(save_memory "$TEAM_URL" "$TEAM")"
get_memory "$URL" "$team_id" "$TEAM"
ok "2 replicas healthy; through nginx: /health, memory $first_id read, memory $team_id saved and seen by the server"
mcp_check "$TEAM_URL" "$team_id" 2>&1 | indent || fail "the MCP client over the balancer's /sse and /mcp"
ok "MCP over the balancer's /sse and /mcp"

begin "--profile llm"
compose --profile llm config --quiet || fail "docker compose --profile llm config"
if [ "$OLLAMA_OK" -eq 1 ]; then
    quietly llm compose --profile llm up -d --wait --wait-timeout 300 ollama \
        || fail "docker compose --profile llm up -d --wait ollama"
    compose exec -T server python -c \
        "import urllib.request; urllib.request.urlopen('http://ollama:11434/api/version', timeout=10)" \
        || fail "the server cannot reach ollama:11434"
    ok "ollama healthy and reachable from the server as http://ollama:11434"
else
    note "llm profile not started: $OLLAMA_IMAGE cannot be pulled here and no Debian, PyPI or npm package ships Ollama to build it from (its compose config is valid)"
fi

# --- 7. down ---------------------------------------------------------------------------------

begin "docker compose down -v"
quietly down every_profile down -v --remove-orphans || fail "docker compose down -v"
STACK_UP=0
left="$(docker volume ls -q --filter "label=com.docker.compose.project=$PROJECT")"
[ -z "$left" ] || fail "volumes left after down -v: $left"
ok "stack and volumes removed"

finish_step
say "disk used by Docker"
docker system df 2>&1 | indent
