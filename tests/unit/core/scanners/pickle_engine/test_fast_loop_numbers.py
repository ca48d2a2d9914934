"""BINFLOAT and LONG1 in the fast opcode loop (issue 22, item 9): a pickle of lists of floats and None
walked in place, with the same findings, counts and failure points as the general path."""

from __future__ import annotations

import pickle
import pickletools
import random
import struct

import pytest

from app.core.limits import Limits
from app.core.scanners.pickle_engine import analysis
from tests.samples import hostile
from tests.samples import opcodes as op
from tests.unit.core.scanners.pickle_engine.test_fast_loop import Walk, _outcome, walks  # noqa: F401 - fixture


def _floats(rows: int, width: int, protocol: int = 4) -> bytes:
    rng = random.Random(rows)
    return pickle.dumps([[rng.random() if (i + j) % 5 else None for j in range(width)] for i in range(rows)],
                        protocol=protocol)


def _longs() -> bytes:
    values = [0, -1, 2**31, -(2**31) - 1, 2**63, -(2**63), 2**2039 - 1, -(2**2039), 2**64 * 3]
    return pickle.dumps({"steps": values, "seed": 2**40, "offsets": list(range(2**32, 2**32 + 50))}, protocol=2)


NUMBERS = {
    **{f"floats p{p}": _floats(30, 40, p) for p in (1, 2, 3, 4, 5)},
    "longs": _longs(),
    "special floats": pickle.dumps([float("inf"), float("-inf"), float("nan"), -0.0, 5e-324, None], protocol=4),
    # A payload after the numbers: the fast loop must hand the call on exactly as before.
    "floats then payload": op.proto(2) + b"]q\x00(" + b"".join(b"G" + struct.pack(">d", i / 3) for i in range(300))
    + b"Ne0" + hostile.by_protocol(2)[2:],
    "long then payload": op.proto(2) + b"\x8a\x09" + (2**70).to_bytes(9, "little", signed=True) + b"0"
    + hostile.by_protocol(2)[2:],
}


@pytest.mark.parametrize("name", NUMBERS)
def test_numbers_walk_the_same(walks: Walk, name: str) -> None:  # noqa: F811 - the shared fixture
    outcome = walks(NUMBERS[name])
    assert outcome[1] == sum(1 for _ in pickletools.genops(NUMBERS[name]))


@pytest.mark.parametrize("name", ["floats p4", "longs", "floats then payload"])
def test_truncated_numbers_fail_at_the_same_point(walks: Walk, name: str) -> None:  # noqa: F811
    data = NUMBERS[name]
    for end in range(0, len(data), max(1, len(data) // 150)):
        walks(data[:end])


def test_an_over_long_long1_still_goes_the_general_way(walks: Walk) -> None:  # noqa: F811
    data = op.proto(2) + b"\x8a\xc8" + b"\x01" * 200 + b"0" + hostile.by_protocol(2)[2:]
    outcome = walks(data, Limits(max_string_arg=100))
    assert ("pickle-dangerous-global", "critical") in {(f[0], f[1]) for f in outcome[5]}


def test_the_payload_after_the_floats_is_found(walks: Walk) -> None:  # noqa: F811
    found = walks(NUMBERS["floats then payload"])[5]
    assert ("pickle-dangerous-global", "critical") in {(f[0], f[1]) for f in found}


def test_the_fast_loop_takes_every_float_and_none(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _floats(200, 500)
    general = 0
    step = analysis._Analyzer._step

    def counted(self: analysis._Analyzer, machine: object, rd: object) -> bool:
        nonlocal general
        general += 1
        return step(self, machine, rd)  # type: ignore[arg-type]

    monkeypatch.setattr(analysis._Analyzer, "_step", counted)
    _, opcodes, *_ = _outcome(data, Limits())
    assert opcodes == sum(1 for _ in pickletools.genops(data)) > 100_000
    assert general < 40  # PROTO, the last bytes of each window, STOP: not one per float
