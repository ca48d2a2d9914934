"""The Python constant folder bounds what it builds before building it (issue 22, item 8).

CPython evaluates ``sep.join(items)`` and comprehensions eagerly (``Objects/unicodeobject.c``
``PyUnicode_Join``): the folder mirrors them on constants, so a few lines could ask it for
gigabytes. It must answer quickly, in little memory, and still see the call.
"""

from __future__ import annotations

import time
import tracemalloc

from app.core.scanners.python_code.effects import analyse

BOMBS = '''import os
s = "a" * 65536
t = s.join(s)
u = [s + c for c in s]
v = "".join(u)
os.system(t)
'''


def test_folding_bombs_are_judged_in_bounded_memory() -> None:
    many = "".join(f"x{i} = s + '{i}'\n" for i in range(2000))  # each a new 64 KiB string
    tracemalloc.start()
    started = time.perf_counter()
    try:
        found = analyse(BOMBS + many, None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50 * 1024 * 1024, f"{peak / 1e6:.0f} MB"
    assert time.perf_counter() - started < 30
    assert any(o.kind == "process" and o.line == 6 for o in found)


def test_small_joins_still_fold() -> None:
    found = analyse('import os\ngetattr(os, "-".join("abc").replace("-", "")[:0] + "sys" + "tem")("x")\n', None)
    assert any("system" in o.detail for o in found), found
