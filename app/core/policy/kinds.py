"""Each rule id's kind, for `f.kind`: what the rule declares (RuleInfo.kind), read from a generated table.

The rules declare their kinds where they are defined (the scanners, the pipeline, the store's identity
check). Collecting them means importing every scanner, which a gate answer must not pay for, so
`hfvet checks --kinds` writes them to rule_kinds.json and a test keeps the file equal to the
declarations. A rule id the table does not know (a report of another hfvet version, a hand-written
test case) is of kind `unknown`: it matches no kind a policy names, as it matched no id list before.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

DATA_FILE = Path(__file__).with_name("rule_kinds.json")
UNKNOWN_KIND = "unknown"


@lru_cache(maxsize=1)
def rule_kinds() -> dict[str, str]:
    """rule id -> kind, as `hfvet checks --kinds` generated it."""
    table: dict[str, str] = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    return table


def kind_of(rule: str) -> str:
    return rule_kinds().get(rule, UNKNOWN_KIND)
