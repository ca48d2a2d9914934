"""Pickles inside pickles: byte and string constants that are pickle streams themselves.

A pickle can carry a second pickle as a constant — raw, base64, hex, or zlib/gzip/bz2/xz
compressed, or several of these in turn — for a ``__setstate__``, a ``pickle.loads`` chain or
a later loader to unpickle. Such a constant is decoded (bounded) and walked like any pickle,
so a dangerous inner stream is reported with its path: the outer constant's opcode and
offset, then each encoding peeled off.

Cheap for ordinary checkpoints: a constant is decoded only when its first bytes already say
what it is (a pickle opcode, a compressor's magic, a base64/hex alphabet) and the decoded head
sniffs as a pickle or as one more encoding; tensor keys and raw tensor bytes fail these
checks at their first bytes.
"""

from __future__ import annotations

import base64
import binascii
import bz2
import lzma
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from app.core.formats.detect import could_start_pickle, looks_like_pickle
from app.core.formats.pickle_sniff import imports_before_stop, sniff_text
from app.core.limits import LimitExceeded

# The opcodes that push a byte or string constant.
CONSTANT_OPS = frozenset({
    "STRING", "BINSTRING", "SHORT_BINSTRING", "UNICODE", "BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8",
    "BINBYTES", "SHORT_BINBYTES", "BINBYTES8", "BYTEARRAY8",
})
MIN_BYTES = 12  # shorter than any pickle that imports and calls something ("cos\nsystem\n" alone is 11)
MAX_LAYERS = 4  # encodings peeled off one constant (base64 of zlib of hex of ...)
_SNIFF = 256  # head bytes decoded first, to decide whether the rest is worth decoding
_B64 = re.compile(rb"[A-Za-z0-9+/]+={0,2}")
_B64_URL = re.compile(rb"[A-Za-z0-9_-]+={0,2}")
_HEX = re.compile(rb"(?:[0-9a-fA-F]{2})+")
_WHITESPACE = re.compile(rb"\s+")
_PROTO = 0x80
_QUICK = 32  # head bytes checked against an alphabet before any regex runs
_B64_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ \t\r\n"
_HEX_BYTES = b"0123456789abcdefABCDEF"
_HIGHEST_PROTOCOL = 5


@dataclass
class NestedBudget:
    """Shared by every nested walk under one top-level stream: depth and decoded bytes left."""

    max_depth: int
    total: int  # decoded bytes all nested walks may take together
    per_constant: int  # the most bytes one constant may decode to
    used: int = 0

    def take(self, n: int) -> None:
        if self.used + n > self.total:
            raise LimitExceeded(f"nested pickles past {self.total} decoded bytes in all")
        self.used += n


@dataclass(frozen=True)
class Decoder:
    name: str
    accepts: Callable[[bytes], bool]  # cheap test on the head
    decode: Callable[[bytes, int], bytes]  # (data, at most this many bytes out) -> decoded
    streams: bool = True  # a prefix decodes to a prefix (text codecs); a bz2 block needs all its input


def inner_pickles(data: bytes, cap: int) -> Iterator[tuple[str, bytes]]:
    """(encodings peeled off, decoded bytes) for every decoding of ``data`` that sniffs as a pickle.

    Raises LimitExceeded when a decoding that sniffs as a pickle (or as one more encoding)
    would exceed ``cap`` bytes: what cannot be decoded cannot be vetted.
    """
    yield from _peel(data, (), cap)


def cannot_hold_pickle(head: bytes) -> bool:
    """True when a constant starting with ``head`` (its first 256 bytes) surely holds no pickle:
    its first byte starts none and no decoder takes it (``inner_pickles`` and ``starts_like_inner``
    find nothing in it). Most tensor names and raw bytes end here, before any decoding."""
    if not head or could_start_pickle(head):
        return not head
    return not any(d.accepts(head) for d in _BY_FIRST_BYTE[head[0]])


def starts_like_inner(head: bytes) -> bool:
    """Whether a constant starting with ``head`` could hold a pickle: worth reading whole."""
    if _sniffs_as_pickle(head):
        return True
    return bool(head) and any(d.accepts(head) and _decodes_to_candidate(d, head) for d in _BY_FIRST_BYTE[head[0]])


def _peel(data: bytes, path: tuple[str, ...], cap: int) -> Iterator[tuple[str, bytes]]:
    if _sniffs_as_pickle(data[:_SNIFF]):
        yield "+".join(path) or "raw", data
        return
    if len(path) >= MAX_LAYERS:
        return
    head = data[:_SNIFF]
    for decoder in _BY_FIRST_BYTE[head[0]] if head else ():
        if not (decoder.accepts(head) and _decodes_to_candidate(decoder, data)):
            continue
        decoded = decoder.decode(data, cap + 1)
        if len(decoded) > cap:
            raise LimitExceeded(f"a {decoder.name} constant decodes past {cap} bytes")
        yield from _peel(decoded, (*path, decoder.name), cap)


def _decodes_to_candidate(decoder: Decoder, data: bytes) -> bool:
    """Decode only the head: does it sniff as a pickle or as one more encoding?"""
    try:
        head = decoder.decode(data[: 4 * _SNIFF] if decoder.streams else data, _SNIFF)
    except ValueError:
        return False
    if len(head) < MIN_BYTES:
        return False
    return _sniffs_as_pickle(head) or any(d.accepts(head) for d in DECODERS)


def _sniffs_as_pickle(head: bytes) -> bool:
    """Stricter than the file sniff: raw tensor bytes pass through here by the thousand.

    A PROTO start must replay consistently (random bytes soon hit an unknown opcode or an
    empty stack); a stream without PROTO (protocols 0 and 1) must also import something.
    """
    if len(head) < MIN_BYTES or not could_start_pickle(head):
        return False
    complete = len(head) < _SNIFF
    if head[0] == _PROTO:
        return head[1] <= _HIGHEST_PROTOCOL and _replays(head, complete)
    # Cheapest first: random bytes hit an unknown opcode within a few bytes.
    return imports_before_stop(head) and _replays(head, complete) and looks_like_pickle(head, complete=complete)


def _replays(head: bytes, complete: bool) -> bool:
    try:
        return sniff_text(head, complete).consistent
    except Exception:  # noqa: BLE001 - pickletools' argument decoding can raise anything (a warning too)
        return False


# -- decoders: each bounded in output, each failing with ValueError
def _b64_accepts(head: bytes) -> bool:
    if head[:_QUICK].translate(None, _B64_BYTES):  # a byte outside the alphabet: not base64 (C-speed test)
        return False
    text = _WHITESPACE.sub(b"", head)
    return len(text) >= 16 and bool(_B64.fullmatch(text) or _B64_URL.fullmatch(text))


def _b64_decode(data: bytes, limit: int) -> bytes:
    text = _WHITESPACE.sub(b"", data[: (limit // 3 + 2) * 4])
    text = text[: len(text) - len(text) % 4]
    try:
        if _B64.fullmatch(text):
            return base64.b64decode(text, validate=True)[:limit]
        return base64.urlsafe_b64decode(text)[:limit]
    except binascii.Error as exc:
        raise ValueError(str(exc)) from None


def _hex_accepts(head: bytes) -> bool:
    if head[:_QUICK].strip().translate(None, _HEX_BYTES):
        return False
    text = head.strip()
    return len(text) >= 2 * MIN_BYTES and bool(_HEX.fullmatch(text[: len(text) - len(text) % 2]))


def _hex_decode(data: bytes, limit: int) -> bytes:
    text = data.strip()[: 2 * limit]
    return bytes.fromhex(text[: len(text) - len(text) % 2].decode("ascii"))


def _zlib_accepts(head: bytes) -> bool:
    return len(head) >= 2 and head[0] & 0x0F == 8 and (head[0] << 8 | head[1]) % 31 == 0


def _inflate(wbits: int) -> Callable[[bytes, int], bytes]:
    def decode(data: bytes, limit: int) -> bytes:
        try:
            return zlib.decompressobj(wbits).decompress(data, limit)
        except zlib.error as exc:
            raise ValueError(str(exc)) from None
    return decode


def _bz2_decode(data: bytes, limit: int) -> bytes:
    try:
        return bz2.BZ2Decompressor().decompress(data, max_length=limit)
    except OSError as exc:
        raise ValueError(str(exc)) from None


def _xz_decode(data: bytes, limit: int) -> bytes:
    try:
        return lzma.LZMADecompressor().decompress(data, max_length=limit)
    except lzma.LZMAError as exc:
        raise ValueError(str(exc)) from None


DECODERS = (
    Decoder("zlib", _zlib_accepts, _inflate(zlib.MAX_WBITS)),
    Decoder("gzip", lambda h: h.startswith(b"\x1f\x8b"), _inflate(16 + zlib.MAX_WBITS)),
    Decoder("bz2", lambda h: h.startswith(b"BZh"), _bz2_decode, streams=False),
    Decoder("xz", lambda h: h.startswith((b"\xfd7zXZ\x00", b"]\x00\x00")), _xz_decode),
    Decoder("hex", _hex_accepts, _hex_decode),
    Decoder("base64", _b64_accepts, _b64_decode),
)

_FIRST_BYTES: dict[str, Callable[[int], bool]] = {
    "zlib": lambda b: b & 0x0F == 8, "gzip": lambda b: b == 0x1F, "bz2": lambda b: b == ord("B"),
    "xz": lambda b: b in (0xFD, ord("]")), "hex": lambda b: b in _HEX_BYTES or b in b" \t\r\n",
    "base64": lambda b: b in _B64_BYTES,
}
# The decoders a constant's first byte allows: most tensor keys and raw bytes rule out all but one or two.
_BY_FIRST_BYTE = tuple(tuple(d for d in DECODERS if _FIRST_BYTES[d.name](b)) for b in range(256))
