#!/usr/bin/env bash
# Set up, then run the offline demo: `hfvet serve` on the fixture hub, POST /vet the example repos, ask the gate.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/hfvet demo "$@"
