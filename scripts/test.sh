#!/usr/bin/env bash
# Set up, then run everything CI runs: ruff, mypy (strict on app/), import-linter, pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev
source scripts/services.sh
export PATH="$PWD/.venv/bin:$PATH"
echo "== ruff" && ruff check app tests bench
echo "== mypy" && mypy
echo "== import-linter" && lint-imports
# loadgroup: tests marked xdist_group share one worker (the browser tests build one live world, not two).
# A run that collects a test and reports no outcome for it fails (tests/outcome_count.py, from tests/conftest.py).
echo "== pytest" && pytest -n 2 --dist loadgroup "$@"
