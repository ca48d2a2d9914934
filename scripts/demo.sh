#!/usr/bin/env bash
# Set up, then run the offline demo: vet the bundled example repos through the fixture hub.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/hfvet demo "$@"
