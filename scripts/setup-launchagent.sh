#!/usr/bin/env bash
# Run the learning pipeline (scripts/import-cron.sh) every hour on macOS, as a LaunchAgent.
#
# Usage: scripts/setup-launchagent.sh [--compose] [--dry-run]
#        scripts/setup-launchagent.sh --uninstall [--dry-run]
#
#   --compose    the agent runs the pipeline against the Docker Compose stack
#   --uninstall  unload the agent and remove its plist
#   --dry-run    print the plist and the commands, change nothing
#   -h, --help   show this help
#
# Writes ~/Library/LaunchAgents/local.claude-memory.pipeline.plist (StartInterval 3600: every
# hour while you are logged in; a run missed during sleep happens on wake) and loads it with
# `launchctl load -w`. Logs: $CLAUDE_MEMORY_HOME/logs/pipeline.log, and launchd's own messages in
# $CLAUDE_MEMORY_HOME/logs/launchagent.log.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LABEL="local.claude-memory.pipeline"
PLIST="$HOME/Library/LaunchAgents/$LABEL.plist"
# launchd starts agents with a bare PATH; Homebrew and Docker Desktop install under these.
AGENT_PATH="/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"

say() { printf '==> %s\n' "$*"; }
die() { printf 'setup-launchagent: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; }

ACTION=install
DRY_RUN=0
COMPOSE=0
while [ $# -gt 0 ]; do
    case "$1" in
        --compose) COMPOSE=1 ;;
        --uninstall) ACTION=uninstall ;;
        --dry-run) DRY_RUN=1 ;;
        -h | --help) usage; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
    shift
done

run() {
    if [ "$DRY_RUN" -eq 1 ]; then
        printf '    %s\n' "$*"
    else
        "$@"
    fi
}

xml_escape() {
    local value="$1"
    value="${value//&/&amp;}"
    value="${value//</&lt;}"
    value="${value//>/&gt;}"
    printf '%s' "$value"
}

# The same data dir as the server and the pipeline: the environment, then the default.
data_dir() {
    local value="${CLAUDE_MEMORY_HOME:-}"
    value="${value:-${XDG_DATA_HOME:-$HOME/.local/share}/claude-memory}"
    printf '%s' "${value/#\~/$HOME}"
}

LOG_DIR="$(data_dir)/logs"

plist() {
    local compose_arg=""
    if [ "$COMPOSE" -eq 1 ]; then
        compose_arg="
        <string>--compose</string>"
    fi
    cat << PLIST
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
    <key>Label</key>
    <string>$LABEL</string>
    <key>ProgramArguments</key>
    <array>
        <string>/bin/bash</string>
        <string>$(xml_escape "$ROOT/scripts/import-cron.sh")</string>$compose_arg
    </array>
    <key>StartInterval</key>
    <integer>3600</integer>
    <key>RunAtLoad</key>
    <false/>
    <key>ProcessType</key>
    <string>Background</string>
    <key>LowPriorityIO</key>
    <true/>
    <key>Nice</key>
    <integer>10</integer>
    <key>Umask</key>
    <integer>63</integer>
    <key>EnvironmentVariables</key>
    <dict>
        <key>PATH</key>
        <string>$AGENT_PATH</string>
    </dict>
    <key>StandardOutPath</key>
    <string>$(xml_escape "$LOG_DIR/launchagent.log")</string>
    <key>StandardErrorPath</key>
    <string>$(xml_escape "$LOG_DIR/launchagent.log")</string>
</dict>
</plist>
PLIST
}

if [ "$DRY_RUN" -eq 0 ]; then
    [ "$(uname -s)" = "Darwin" ] || die "this sets up a macOS LaunchAgent; on Linux use scripts/setup-systemd.sh"
    command -v launchctl > /dev/null 2>&1 || die "launchctl not found"
fi

if [ "$ACTION" = uninstall ]; then
    say "unloading $LABEL"
    if [ "$DRY_RUN" -eq 1 ]; then
        run launchctl unload -w "$PLIST"
    else
        launchctl unload -w "$PLIST" 2> /dev/null || true
    fi
    say "removing $PLIST"
    run rm -f "$PLIST"
    say "uninstalled; the data and logs stay where they are"
    exit 0
fi

[ -x "$ROOT/scripts/import-cron.sh" ] || die "$ROOT/scripts/import-cron.sh is missing or not executable"
if [ "$COMPOSE" -eq 0 ] && [ ! -x "$ROOT/.venv/bin/claude-memory" ] \
    && ! command -v claude-memory > /dev/null 2>&1; then
    die "claude-memory is not installed yet: run ./quickstart.sh (or scripts/setup-venv.sh) first"
fi

if [ "$DRY_RUN" -eq 1 ]; then
    say "would write $PLIST:"
    plist | sed 's/^/    /'
    say "would run:"
    run mkdir -p "$LOG_DIR"
    run launchctl unload "$PLIST"
    run launchctl load -w "$PLIST"
    exit 0
fi

mkdir -p "$(dirname "$PLIST")" "$LOG_DIR"
chmod 700 "$LOG_DIR"
plist > "$PLIST"
chmod 644 "$PLIST"
if command -v plutil > /dev/null 2>&1; then
    plutil -lint "$PLIST" > /dev/null || die "the plist written to $PLIST does not parse"
fi
# Reinstalling replaces a loaded agent: unload the old one first.
launchctl unload "$PLIST" 2> /dev/null || true
launchctl load -w "$PLIST"
say "loaded $LABEL: the pipeline runs every hour"
say "run it now:  launchctl start $LABEL"
say "logs:        $LOG_DIR/pipeline.log"
say "remove it:   $0 --uninstall"
