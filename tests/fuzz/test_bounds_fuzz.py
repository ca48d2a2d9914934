"""Size fields an attacker controls: declared lengths and counts up to 2**64 cost bounded memory.

tracemalloc measures the Python heap while one scanner reads one hostile input; the bound is
MEMORY_BOUND (LIMITS lets a parser buffer 32 MiB at most). Every such input also yields a finding
of high severity or worse: a size nobody can honour is malformed or over a limit, never clean.
"""

from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.findings import Severity
from app.core.scanners.pickle_scanner import PickleScanner
from app.core.scanners.safetensors_scanner import SafetensorsScanner
from app.core.scanners.savedmodel_scanner import SavedModelScanner
from app.core.scanners.template_scanner import TemplateScanner
from tests.fuzz import harness as h
from tests.unit.core.scanners import savedmodel_samples as sm

BOUNDED = settings(h.FUZZ, max_examples=min(h.FUZZ.max_examples, 25))
SIZES = st.one_of(st.integers(0, 2**64 - 1), st.sampled_from([2**31 - 1, 2**32 - 1, 2**63 - 1, 2**64 - 1, 1 << 30]))


def _bounded_and_flagged(scanner: object, name: str, data: bytes) -> None:
    outcomes = []
    peak = h.peak_memory(lambda: outcomes.append(h.scan_direct(scanner, name, data)))  # type: ignore[arg-type]
    assert peak < h.MEMORY_BOUND, f"{name}: {peak / 2**20:.0f} MiB peak"
    [outcome] = outcomes
    assert outcome is not None
    assert h.worst(outcome.findings).rank >= Severity.HIGH.rank, outcome.findings


_PADDING = 64  # zero bytes between the length field and the payload: opcode 0x00 is no opcode
_PAYLOAD = b"cposix\nsystem\n."


@BOUNDED
@given(st.sampled_from([b"B", b"X", b"\x8e", b"\x8d", b"\x96", b"\x95", b"\x8b"]),
       st.one_of(SIZES, st.just(_PADDING)))
def test_pickle_length_fields(opcode: bytes, size: int) -> None:
    """BINBYTES/BINUNICODE (4-byte), BINBYTES8/BINUNICODE8/BYTEARRAY8/FRAME (8-byte), LONG4.

    Memory stays bounded for every declared length. The verdict follows what an unpickler does
    with it (issue 22 item 5): a length that skips exactly the padding lands on the payload
    (critical); any other lands on opcode 0x00 or past the end, where every unpickler stops
    before any import ran -- a finding still (never clean), but not a high one by itself.
    """
    width = 4 if opcode in (b"B", b"X", b"\x8b") else 8
    size %= 2 ** (8 * width - (1 if opcode == b"\x8b" else 0))
    data = b"\x80\x05" + opcode + size.to_bytes(width, "little") + b"\x00" * _PADDING + _PAYLOAD
    outcomes = []
    peak = h.peak_memory(lambda: outcomes.append(h.scan_direct(PickleScanner(), "model.pkl", data)))
    assert peak < h.MEMORY_BOUND, f"{peak / 2**20:.0f} MiB peak"
    [outcome] = outcomes
    assert outcome is not None and outcome.findings, "a broken stream is never clean"
    rules = {f.rule for f in outcome.findings}
    # FRAME's body is read as opcodes, so the zeros stop it whatever its length.
    if size == _PADDING and opcode != b"\x95":
        assert h.worst(outcome.findings) is Severity.CRITICAL, outcome.findings
        assert "pickle-dangerous-global" in rules
        return
    assert "pickle-dangerous-global" not in rules, outcome.findings  # the import is never reached
    if size < _PADDING or size >= _PADDING + len(_PAYLOAD) or opcode == b"\x95":
        assert rules <= {"pickle-broken-inert", "limit-exceeded"}, outcome.findings
    # else the reader lands inside the payload's text: whatever those bytes do as opcodes is judged


@BOUNDED
@given(SIZES)
def test_safetensors_header_length(length: int) -> None:
    body = b'{"w":{"dtype":"F32","shape":[1],"offsets":[0,4]}}'
    if length == len(body):
        length += 1  # the one honest value is not this test's business
    _bounded_and_flagged(SafetensorsScanner(), "model.safetensors", struct.pack("<Q", length) + body + bytes(4))


@BOUNDED
@given(st.sampled_from(["kv", "string", "array", "dims"]), SIZES)
def test_gguf_counts_and_lengths(where: str, size: int) -> None:
    kv_count, key_len, array_count, n_dims = 1, 4, 1, 1
    if where == "kv":
        kv_count = max(size, 2)
    elif where == "string":
        key_len = max(size, 64)
    elif where == "array":
        array_count = max(size, 2)
    else:
        n_dims = max(size % 2**32, 2)
    kv = struct.pack("<Q", key_len) + b"name" + struct.pack("<IIQ", 9, 4, array_count) + struct.pack("<I", 7)
    tensor = struct.pack("<Q", 1) + b"w" + struct.pack("<I", n_dims) + struct.pack("<Q", 4) + struct.pack("<IQ", 0, 0)
    data = b"GGUF" + struct.pack("<IQQ", 3, 1, kv_count) + kv + tensor
    _bounded_and_flagged(TemplateScanner(), "model.gguf", data)


@BOUNDED
@given(st.integers(100, 20_000), SIZES)
def test_saved_model_nesting_and_lengths(depth: int, length: int) -> None:
    """Messages nested thousands deep, and a length-delimited field longer than the file."""
    nested = b""
    for _ in range(depth):
        nested = sm.len_field(2, nested)
    data = sm.int_field(1, 1) + nested + sm.tag(2, 2) + sm.varint(length) + b"\x00" * 8
    _bounded_and_flagged(SavedModelScanner(), "saved_model.pb", data)
