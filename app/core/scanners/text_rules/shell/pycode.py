"""Python handed to an interpreter on its command line (`python -c`) or stdin (`python - <<EOF`).

Read, never run: code that both fetches bytes over the network and runs code it was not shipped with
(exec, eval, runpy, a subprocess, an import of a path) is a download-and-execute, however it is spelt.
"""

from __future__ import annotations

import re

from app.core.scanners.text_rules.url_rules import extract_urls

_FETCH = re.compile(r"\b(?:urlopen|urlretrieve|urllib3?|requests\s*\.\s*(?:get|post|request|Session)|httpx|"
                    r"http\.client|aiohttp|pycurl|socket\s*\.\s*(?:socket|create_connection)|"
                    r"wget\s*\.\s*download)\b")
# `model.eval()` and `torch.compile(...)` are methods, not the builtins: only a bare call counts.
_RUN = re.compile(r"(?<![.\w])(?:exec|eval|compile)\s*\(|\b(?:runpy|run_path|run_module|"
                  r"os\s*\.\s*(?:system|popen|exec\w*|spawn\w*)|subprocess|pty\s*\.\s*spawn|__import__|importlib|import_module|spec_from_file_location|"
                  r"marshal\s*\.\s*loads|pickle\s*\.\s*loads|ctypes|CDLL)\b")


def fetches_and_runs(code: str) -> str | None:
    """The URL (or ``"?"``) when ``code`` downloads and runs something; None otherwise."""
    if not (_FETCH.search(code) and _RUN.search(code)):
        return None
    urls = extract_urls(code)
    return urls[0] if urls else "?"
