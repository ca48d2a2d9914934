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
# The browser tests (tests/integration/browser) drive Debian's Chromium through Playwright; Playwright's
# own browser download is never used. CI must run them, so a missing Chromium that cannot be installed
# is an error, not a skip.
if [ "$extras" = "dev" ] && ! { [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; }; then
  echo "setup: installing Debian's chromium and chromium-driver for the browser tests (apt-get)" >&2
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: FAILED: the browser tests need /usr/bin/chromium and /usr/bin/chromedriver;" \
         "install the Debian packages chromium and chromium-driver as root (apt-get install chromium chromium-driver)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null || {
    echo "setup: FAILED: apt-get could not install chromium and chromium-driver (see above)" >&2
    exit 1
  }
fi
if [ "$extras" = "dev" ] && ! /usr/bin/chromium --version >/dev/null 2>&1; then
  echo "setup: FAILED: /usr/bin/chromium is installed but does not run (/usr/bin/chromium --version)" >&2
  exit 1
fi
