"""PEP 723 inline script metadata (packaging.python.org/specifications/inline-script-metadata):
the ``# /// script`` ... ``# ///`` comment block that ``uv run``, ``pipx run``, Hatch and PDM read
and install before running the script. Found with the specification's reference regex; each
content line loses its ``#`` and one following space. The body is TOML: top-level
``dependencies`` and the ``[tool.uv]`` table (sources, index, extra-index-url), read like a
pyproject's.

Two ``script`` blocks are an error to the specification (tools must refuse the script): both
are read anyway and the error is set. An unclosed block is ignored, as the specification says.
"""

from __future__ import annotations

import re
import tomllib

from app.core.scanners.text_rules.declarations.common import Reading
from app.core.scanners.text_rules.declarations.pyproject import Locator, read_data

# The specification's reference regex, verbatim.
BLOCK = re.compile(r"(?m)^# /// (?P<type>[a-zA-Z0-9-]+)$\s(?P<content>(^#(| .*)$\s)+)^# ///$")
_UV_SHEBANG = re.compile(r"^#!.*\buv\s+run\b")


def is_uv_script(text: str) -> bool:
    """An extensionless script whose shebang runs it with ``uv run`` (``#!/usr/bin/env -S uv run --script``)."""
    return bool(_UV_SHEBANG.match(text))


def read(text: str) -> Reading:
    if "# /// script" not in text:
        return Reading()
    text = text.replace("\r\n", "\n")  # Python reads scripts with universal newlines
    blocks = [m for m in BLOCK.finditer(text) if m.group("type") == "script"]
    found = Reading(error="more than one '# /// script' block" if len(blocks) > 1 else None)
    for block in blocks:
        body = "".join(line[2:] if line.startswith("# ") else line[1:]
                       for line in block.group("content").splitlines(keepends=True))
        try:
            data = tomllib.loads(body)
        except (tomllib.TOMLDecodeError, RecursionError, ValueError) as exc:
            found.error = f"script metadata is not valid TOML: {str(exc)[:200]}"
            continue
        for declared in read_data(data, Locator(text, block.start("content")), script=True):
            found.add(declared)
    return found
