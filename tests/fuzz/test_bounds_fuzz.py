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


@BOUNDED
@given(st.sampled_from([b"B", b"X", b"\x8e", b"\x8d", b"\x96", b"\x95", b"\x8b"]), SIZES)
def test_pickle_length_fields(opcode: bytes, size: int) -> None:
    """BINBYTES/BINUNICODE (4-byte), BINBYTES8/BINUNICODE8/BYTEARRAY8/FRAME (8-byte), LONG4."""
    width = 4 if opcode in (b"B", b"X", b"\x8b") else 8
    size %= 2 ** (8 * width - (1 if opcode == b"\x8b" else 0))
    data = b"\x80\x05" + opcode + size.to_bytes(width, "little") + b"\x00" * 64 + b"cposix\nsystem\n."
    _bounded_and_flagged(PickleScanner(), "model.pkl", data)


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
