#!/usr/bin/env bash
# Run the learning pipeline (scripts/import-cron.sh) every hour on Linux, as a systemd user timer.
#
# Usage: scripts/setup-systemd.sh [--compose] [--dry-run]
#        scripts/setup-systemd.sh --uninstall [--dry-run]
#
#   --compose    the timer runs the pipeline against the Docker Compose stack
#   --uninstall  stop and disable the timer and remove both unit files
#   --dry-run    print the unit files and the commands, change nothing
#   -h, --help   show this help
#
# Writes ~/.config/systemd/user/claude-memory-pipeline.service and .timer (OnCalendar=hourly,
# Persistent=true: a run missed while the machine was off happens at the next boot), then
# `systemctl --user daemon-reload` and `systemctl --user enable --now` the timer.
# Logs: $CLAUDE_MEMORY_HOME/logs/pipeline.log, and `journalctl --user -u claude-memory-pipeline`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NAME="claude-memory-pipeline"
UNIT_DIR="${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user"
SERVICE="$UNIT_DIR/$NAME.service"
TIMER="$UNIT_DIR/$NAME.timer"

say() { printf '==> %s\n' "$*"; }
die() { printf 'setup-systemd: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'; }

ACTION=install
DRY_RUN=0
PIPELINE_ARGS=""
while [ $# -gt 0 ]; do
    case "$1" in
        --compose) PIPELINE_ARGS=" --compose" ;;
        --uninstall) ACTION=uninstall ;;
        --dry-run) DRY_RUN=1 ;;
        -h | --help) usage; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
    shift
done

# Run a command, or only show it with --dry-run.
run() {
    if [ "$DRY_RUN" -eq 1 ]; then
        printf '    %s\n' "$*"
    else
        "$@"
    fi
}

# systemd expands % (specifiers) and $ (variables) in ExecStart: double them in a path.
unit_escape() {
    local value="$1"
    value="${value//%/%%}"
    printf '%s' "${value//\$/\$\$}"
}

service_unit() {
    cat << UNIT
[Unit]
Description=claude-memory learning pipeline (import, distill, signals, behavior, profile)

[Service]
Type=oneshot
ExecStart="$(unit_escape "$ROOT/scripts/import-cron.sh")"$PIPELINE_ARGS
Nice=10
IOSchedulingClass=idle
UNIT
}

timer_unit() {
    cat << UNIT
[Unit]
Description=Run the claude-memory learning pipeline every hour

[Timer]
OnCalendar=hourly
Persistent=true
RandomizedDelaySec=5min

[Install]
WantedBy=timers.target
UNIT
}

if [ "$DRY_RUN" -eq 0 ]; then
    [ "$(uname -s)" = "Linux" ] || die "this sets up systemd on Linux; on macOS use scripts/setup-launchagent.sh"
    command -v systemctl > /dev/null 2>&1 || die "systemctl not found; run scripts/import-cron.sh from cron instead:
    0 * * * * $ROOT/scripts/import-cron.sh$PIPELINE_ARGS"
    systemctl --user show-environment > /dev/null 2>&1 || die "cannot reach your systemd user manager \
(systemctl --user); log in through a regular session, or run the pipeline from cron instead:
    0 * * * * $ROOT/scripts/import-cron.sh$PIPELINE_ARGS"
fi

if [ "$ACTION" = uninstall ]; then
    say "stopping and disabling $NAME.timer"
    if [ "$DRY_RUN" -eq 1 ]; then
        run systemctl --user disable --now "$NAME.timer"
    else
        systemctl --user disable --now "$NAME.timer" 2> /dev/null || true
        systemctl --user stop "$NAME.service" 2> /dev/null || true
    fi
    say "removing $SERVICE and $TIMER"
    run rm -f "$SERVICE" "$TIMER"
    run systemctl --user daemon-reload
    say "uninstalled; the data and logs stay where they are"
    exit 0
fi

[ -x "$ROOT/scripts/import-cron.sh" ] || die "$ROOT/scripts/import-cron.sh is missing or not executable"
if [ -z "$PIPELINE_ARGS" ] && [ ! -x "$ROOT/.venv/bin/claude-memory" ] \
    && ! command -v claude-memory > /dev/null 2>&1; then
    die "claude-memory is not installed yet: run ./quickstart.sh (or scripts/setup-venv.sh) first"
fi

if [ "$DRY_RUN" -eq 1 ]; then
    say "would write $SERVICE:"
    service_unit | sed 's/^/    /'
    say "would write $TIMER:"
    timer_unit | sed 's/^/    /'
    say "would run:"
    run systemctl --user daemon-reload
    run systemctl --user enable --now "$NAME.timer"
    exit 0
fi

mkdir -p "$UNIT_DIR"
service_unit > "$SERVICE"
timer_unit > "$TIMER"
say "wrote $SERVICE and $TIMER"
systemctl --user daemon-reload
systemctl --user enable --now "$NAME.timer"
say "enabled: the pipeline runs every hour; the next run:"
systemctl --user list-timers "$NAME.timer" --no-pager || true

if command -v loginctl > /dev/null 2>&1 \
    && [ "$(loginctl show-user "$(id -un)" -p Linger --value 2> /dev/null || true)" = "no" ]; then
    say "note: user timers run only while you are logged in; to run them always:"
    say "    loginctl enable-linger $(id -un)"
fi
say "run it now:  systemctl --user start $NAME.service"
say "logs:        journalctl --user -u $NAME   and   \$CLAUDE_MEMORY_HOME/logs/pipeline.log"
say "remove it:   $0 --uninstall"
