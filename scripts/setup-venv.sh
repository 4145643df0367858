#!/usr/bin/env bash
# Create .venv (once) and install claude-memory into it, with a CPU-only torch.
#
# Usage: scripts/setup-venv.sh [dev]     "dev" adds the test and lint tools.
# Safe to re-run: an installed torch 2.13.0 is kept, and pip skips what is already there.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
TORCH_VERSION="2.13.0"
# PyTorch's own index of CPU-only wheels; PyPI's Linux wheels bundle CUDA (several GB).
TORCH_INDEX_URL="${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}"
EXTRAS="${1:-}"

say() { printf '==> %s\n' "$*"; }

if ! "$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
    echo "claude-memory needs Python 3.11 or newer; set PYTHON=/path/to/python3.11" >&2
    exit 1
fi

if [ ! -x .venv/bin/python ]; then
    say "creating virtual environment in .venv"
    "$PYTHON" -m venv .venv
fi
VENV_PY="$ROOT/.venv/bin/python"

if "$VENV_PY" -c "import sys, torch; sys.exit(0 if torch.__version__.split('+')[0] == '$TORCH_VERSION' else 1)" 2>/dev/null; then
    say "torch $TORCH_VERSION already installed"
else
    probe="$(mktemp -d)"
    trap 'rm -rf "$probe"' EXIT
    if "$VENV_PY" -m pip download -q --no-index --no-deps -d "$probe" "torch==$TORCH_VERSION" >/dev/null 2>&1; then
        say "installing torch $TORCH_VERSION from the wheel already on this machine"
        "$VENV_PY" -m pip install -q "torch==$TORCH_VERSION"
    elif [ "$(uname -s)" = "Linux" ]; then
        say "installing CPU-only torch $TORCH_VERSION"
        "$VENV_PY" -m pip install -q "torch==$TORCH_VERSION+cpu" --extra-index-url "$TORCH_INDEX_URL"
    else
        say "installing torch $TORCH_VERSION"
        "$VENV_PY" -m pip install -q "torch==$TORCH_VERSION"
    fi
fi

# pip takes tens of seconds even when nothing changed: a stamp names the pyproject.toml and
# extras of the last install, and the install is skipped while it holds and `server` is this
# checkout's.
pyproject_sum="$(sha256sum pyproject.toml | cut -c1-16)"
stamp_for() { printf '%s/.venv/.installed-%s-%s' "$ROOT" "$pyproject_sum" "${1:-base}"; }
installed_here() {
    "$VENV_PY" -c "import server, sys; sys.exit(0 if server.__file__.startswith('$ROOT/') else 1)" \
        2>/dev/null
}
if { [ -f "$(stamp_for "$EXTRAS")" ] || [ -f "$(stamp_for dev)" ]; } && installed_here; then
    say "claude-memory${EXTRAS:+ [$EXTRAS]} already installed from this pyproject.toml"
    exit 0
fi
say "installing claude-memory${EXTRAS:+ [$EXTRAS]}"
if [ -n "$EXTRAS" ]; then
    "$VENV_PY" -m pip install -q -e ".[$EXTRAS]"
else
    "$VENV_PY" -m pip install -q -e .
fi
rm -f "$ROOT"/.venv/.installed-*
touch "$(stamp_for "$EXTRAS")"
