"""Pickles inside pickle constants: walked through every encoding, bounded, reported with their path.

The carrier is an ordinary-looking pickle ({"blob": <constant>}): nothing in it calls anything, so
only a walk of the constant's content can see the posix.system call a later ``pickle.loads``
(a ``__setstate__``, a loader that stores serialized sub-objects) would run.
"""

from __future__ import annotations

import base64
import bz2
import gzip
import io
import lzma
import os
import pickle
import struct
import zlib
from collections.abc import Callable

import pytest

from app.core.findings import Finding, FindingSink, Severity
from app.core.limits import Limits
from app.core.scanners.pickle_engine.analysis import analyze_pickles
from tests.fakes import CountingStream
from tests.samples import hostile
from tests.samples import opcodes as op

DANGEROUS = "pickle-dangerous-global"
LIMIT = "limit-exceeded"
INNER = op.system_call()  # protocol 2: posix.system("echo pwned")
INNER_P0 = hostile.hostile_p0_body()  # protocol 0 text: the same call


def carrier(constant: bytes) -> bytes:
    """A protocol-4 {"blob": <constant>} whose constant opcode is given whole."""
    return op.proto(4) + op.EMPTY_DICT + op.short_uni("blob") + constant + op.SETITEM + op.STOP


def run(data: bytes, limits: Limits | None = None, member: str | None = None) -> list[Finding]:
    sink = FindingSink("f.pkl", "hfvet-pickle")
    analyze_pickles(io.BytesIO(data), sink, limits or Limits(), member=member)
    return sink.findings


def dangerous(found: list[Finding]) -> list[Finding]:
    return [f for f in found if f.rule == DANGEROUS and f.severity is Severity.CRITICAL]


ENCODINGS: dict[str, Callable[[bytes], bytes]] = {
    "raw": lambda b: b,
    "base64": base64.b64encode,
    "base64url": base64.urlsafe_b64encode,
    "hex": lambda b: b.hex().encode(),
    "zlib": zlib.compress,
    "gzip": gzip.compress,
    "bz2": bz2.compress,
    "xz": lzma.compress,
    "lzma-alone": lambda b: lzma.compress(b, format=lzma.FORMAT_ALONE),
    "base64+zlib": lambda b: base64.b64encode(zlib.compress(b)),
    "hex+gzip": lambda b: gzip.compress(b).hex().encode(),
    "zlib+base64": lambda b: zlib.compress(base64.b64encode(b)),
}


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("opcode", ["BINBYTES", "SHORT_BINBYTES", "BYTEARRAY8", "BINUNICODE"])
def test_an_encoded_inner_pickle_is_walked(encoding: str, opcode: str) -> None:
    payload = ENCODINGS[encoding](INNER)
    if opcode == "SHORT_BINBYTES" and len(payload) > 255:
        pytest.skip("does not fit a one-byte length")
    if opcode == "BINUNICODE":
        constant = op.uni(payload.decode("latin-1"))  # a str: the unpickler reads it as latin-1 bytes
    else:
        constant = {"BINBYTES": op.binbytes, "SHORT_BINBYTES": op.short_binbytes,
                    "BYTEARRAY8": op.bytearray8}[opcode](payload)
    found = dangerous(run(carrier(constant)))
    assert found, f"{opcode} {encoding}: inner posix.system not seen"
    assert found[0].message.startswith("pickle nested in a constant (")
    assert found[0].member is not None and found[0].member.startswith("<")


def test_a_protocol_0_inner_pickle_in_a_string() -> None:
    found = dangerous(run(carrier(op.uni(INNER_P0.decode()))))
    assert found and "(raw)" in found[0].message


def test_an_inner_pickle_joined_from_pieces_at_load_time() -> None:
    # bytes.join is a pure helper the engine evaluates: neither piece is a pickle, their join is.
    pieces = op.MARK + op.binbytes(INNER[:5]) + op.binbytes(INNER[5:]) + b"l"  # LIST
    joined = op.call(op.glob("builtins", "bytes.join"), op.binbytes(b""), pieces)
    inner = [f for f in dangerous(run(carrier(joined))) if f.evidence == "posix.system"]
    assert inner and (inner[0].member or "").startswith("<REDUCE at offset")


def test_the_path_names_outer_member_offset_and_encodings() -> None:
    data = carrier(op.binbytes(base64.b64encode(zlib.compress(INNER))))
    found = dangerous(run(data, member="archive/data.pkl"))
    offset = data.index(b"B")  # the BINBYTES opcode
    assert found[0].member == f"archive/data.pkl!<BINBYTES at offset {offset}, base64+zlib>"
    assert "posix.system" in found[0].message


def test_nesting_three_deep_is_walked_and_four_deep_is_a_limit() -> None:
    def wrap(inner: bytes, times: int) -> bytes:
        for _ in range(times):
            inner = carrier(op.binbytes(base64.b64encode(inner)))
        return inner

    three = run(wrap(INNER, 3))
    assert dangerous(three)
    assert [f.member.count("!") for f in dangerous(three)] == [2]  # type: ignore[union-attr]
    four = run(wrap(INNER, 4))
    assert not dangerous(four)
    assert any(f.rule == LIMIT and "nested more than 3 deep" in f.message for f in four)


def test_a_compressed_bomb_constant_is_a_limit_not_a_hang() -> None:
    bomb = zlib.compress(INNER + b"\x00" * (20 * 1024 * 1024), 9)  # a pickle, then 20 MiB of padding
    found = run(carrier(op.binbytes(bomb)))
    assert any(f.rule == LIMIT and f.severity is Severity.HIGH and "decodes past" in f.message for f in found)


def test_the_total_nested_budget_is_shared() -> None:
    inner = zlib.compress(INNER + b"\x00" * (3 * 1024 * 1024))
    data = op.proto(4) + op.EMPTY_LIST + op.MARK + op.binbytes(inner) * 4 + op.APPENDS + op.STOP
    found = run(data, Limits(max_nested_pickle_bytes=8 * 1024 * 1024))
    assert dangerous(found)  # the first ones were walked
    assert any(f.rule == LIMIT and "decoded bytes in all" in f.message for f in found)


def test_a_long_raw_inner_pickle_past_the_kept_argument_size_is_walked() -> None:
    # 64 KiB of padding inside the inner pickle makes its constant longer than max_string_arg,
    # which the reader skips instead of keeping: a starting PROTO still gets it read and walked.
    inner = op.proto(2) + op.uni("A" * 70_000) + op.POP + INNER[2:]
    found = dangerous(run(carrier(op.binbytes(inner))))
    assert found


def test_a_long_inner_pickle_past_the_nested_cap_is_a_limit() -> None:
    inner = op.proto(2) + op.uni("A" * 200_000) + op.POP + INNER[2:]
    found = run(carrier(op.binbytes(inner)), Limits(max_nested_constant_bytes=100_000))
    assert any(f.rule == LIMIT and "larger than a nested pickle is read" in f.message for f in found)


# -- what stays quiet and cheap

@pytest.mark.parametrize("constant", [
    pickle.dumps({"lr": 0.1, "steps": [1, 2, 3]}, protocol=4),  # a benign inner pickle
    base64.b64encode(pickle.dumps(["a", "b"], protocol=2)),
    os.urandom(4096),  # raw tensor bytes
    b"model.layers.0.self_attn.q_proj.weight",
    b"0123456789abcdef" * 8,  # hex that decodes to no pickle
    b"QUJDREVGR0hJSktMTU5PUA==",  # base64 of text
    zlib.compress(b"just some text, compressed " * 10),
], ids=["benign-pickle", "benign-base64-pickle", "random", "tensor-key", "hex", "base64-text", "zlib-text"])
def test_benign_constants_add_nothing(constant: bytes) -> None:
    found = run(carrier(op.binbytes(constant)))
    assert [f for f in found if f.severity.rank >= Severity.MEDIUM.rank] == []


def test_random_tensor_bytes_never_read_as_inner_pickles() -> None:
    rng = __import__("random").Random(7)
    chunks = [bytes(rng.getrandbits(8) for _ in range(300)) for _ in range(2000)]
    chunks += [b"\x80\x02" + c[2:] for c in chunks[:500]]  # even with a PROTO start
    body = b"".join(op.binbytes(c) + op.POP for c in chunks)
    found = run(op.proto(4) + body + op.NONE + op.STOP)
    assert [f for f in found if f.severity.rank >= Severity.MEDIUM.rank] == []


def test_many_large_tensor_constants_stay_cheap() -> None:
    # A joblib-free sklearn-style pickle: arrays as 1 MiB BINBYTES (longer than max_string_arg). Each is
    # judged by its head and skipped, never read whole: 64 MiB of constants, a few KiB read.
    blob = struct.pack("<262144f", *range(262144))
    data = op.proto(4) + op.EMPTY_LIST + op.MARK + op.binbytes(blob) * 64 + op.APPENDS + op.STOP
    stream = CountingStream(data)
    sink = FindingSink("f.pkl", "hfvet-pickle")
    analyze_pickles(stream, sink, Limits())
    assert [f for f in sink.findings if f.severity.rank >= Severity.MEDIUM.rank] == []
    assert stream.consumed < 64 * 1024  # a head (<= 256 bytes) per constant, not its megabyte
