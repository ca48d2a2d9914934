"""The Python constant folder bounds what it builds before building it (issue 22, item 8).

CPython evaluates ``sep.join(items)`` and comprehensions eagerly (``Objects/unicodeobject.c``
``PyUnicode_Join``): the folder mirrors them on constants, so a few lines could ask it for
gigabytes. It must answer quickly, in little memory, and still see the call.
"""

from __future__ import annotations

import tracemalloc

import pytest

from app.core.scanners.python_code import constants
from app.core.scanners.python_code.constants import MAX_FOLDED_TOTAL
from app.core.scanners.python_code.effects import analyse
from app.core.scanners.python_code.fold_values import MAX_WEIGHT, Folded, weight_of

BOMBS = '''import os
s = "a" * 65536
t = s.join(s)
u = [s + c for c in s]
v = "".join(u)
os.system(t)
'''


def test_folding_bombs_are_judged_in_bounded_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    many = "".join(f"x{i} = s + '{i}'\n" for i in range(2000))  # each a new 64 KiB string
    built: list[int] = []  # the weight of every value folding built, before the caps judged it
    capped = constants.capped

    def counted(folded: Folded | None) -> Folded | None:
        if folded is not None and folded.computed:
            built.append(weight_of(folded.value))
        return capped(folded)

    monkeypatch.setattr(constants, "capped", counted)
    tracemalloc.start()
    try:
        found = analyse(BOMBS + many, None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50 * 1024 * 1024, f"{peak / 1e6:.0f} MB"
    # What folding kept (the module's total, plus the value that passes it; each read of ``s`` counts) and
    # here as much again built one character past the per-value cap and dropped (``s + '7'``). Without the
    # module's total all 2,000 are built: ~260 M.
    assert sum(built) <= 2 * (MAX_FOLDED_TOTAL + MAX_WEIGHT), sum(built)
    assert any(o.kind == "process" and o.line == 6 for o in found)


def test_small_joins_still_fold() -> None:
    found = analyse('import os\ngetattr(os, "-".join("abc").replace("-", "")[:0] + "sys" + "tem")("x")\n', None)
    assert any("system" in o.detail for o in found), found
