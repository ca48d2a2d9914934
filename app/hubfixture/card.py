"""``cardData`` from a snapshot's README front matter, as the Hub builds it from the model card.

The Hub parses the README's YAML block (``---`` ... ``---`` at the top) into model info's
``cardData``; a README without one, or with one that is not a YAML mapping, gives none. Read
bounded: only the README's first bytes, a size-capped block, and no YAML aliases (no alias bombs).
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from app.hubfixture.snapshot import Snapshot

CARD_FILE = "README.md"
MAX_CARD_READ = 256 << 10  # the front matter sits at the top: never read more of a README than this
MAX_FRONT_MATTER = 64 << 10  # a bigger block gives no cardData rather than an expensive parse
# As huggingface_hub's repocard.REGEX_YAML_BLOCK: leading blank space, then a --- fenced block.
_BLOCK = re.compile(r"\A\ufeff?\s*---(?:\r\n|\r|\n)([\S\s]*?)(?:\r\n|\r|\n)---[ \t]*(?:\r\n|\n|$)")


def card_data(snap: Snapshot) -> dict[str, Any] | None:
    """The README's front matter as a JSON-ready mapping; None when there is none or it is broken."""
    entry = snap.by_path.get(CARD_FILE)
    if entry is None:
        return None
    try:
        with entry.disk.open("rb") as fh:
            head = fh.read(MAX_CARD_READ).decode("utf-8", errors="replace")
    except OSError:
        return None
    return parse_front_matter(head)


def parse_front_matter(text: str) -> dict[str, Any] | None:
    block = _BLOCK.match(text)
    if block is None or len(block.group(1)) > MAX_FRONT_MATTER:
        return None
    try:
        if any(isinstance(e, yaml.AliasEvent) for e in yaml.parse(block.group(1), Loader=yaml.SafeLoader)):
            return None
        data = yaml.safe_load(block.group(1))
        # Dates and other YAML scalars become strings, as in the Hub's JSON.
        plain = json.loads(json.dumps(data, default=str)) if isinstance(data, dict) else None
    except (yaml.YAMLError, RecursionError, ValueError, TypeError):
        return None
    return plain or None
