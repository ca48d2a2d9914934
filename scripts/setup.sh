#!/usr/bin/env bash
# Create .venv with hfvet and its pinned dependencies (idempotent; re-installs when pyproject.toml changes).
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
python_bin="${PYTHON:-$(command -v python3.11 || command -v python3)}"
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $python_bin" >&2
  "$python_bin" -m venv .venv
fi
stamp=".venv/.hfvet-installed${extras:+-$extras}"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing hfvet${extras:+[$extras]} (pinned dependencies)" >&2
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e ".${extras:+[$extras]}"
  touch "$stamp"
fi
