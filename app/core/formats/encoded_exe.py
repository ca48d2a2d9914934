"""Executables hidden by a cheap encoding: single-byte XOR, base64, hex, an ``xxd`` dump, gzip/zlib.

A stager ships ``kernel.bin`` XOR-ed with one byte, or ``weights.b64``, and a card line that
decodes it (``base64 -d``, ``xxd -r``) into something it runs. Only the head of the file is
decoded, as far as the executable header: the XOR key comes from the expected magic (the first
byte XOR the magic's first byte, confirmed on the rest of the header), text decodings read at
most ``TEXT_HEAD`` bytes, decompression stops at ``INFLATE_HEAD`` bytes of output. Layers nest
(base64 of gzip of an ELF) up to ``MAX_LAYERS``.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from app.core.formats.exe_headers import ExecInfo, Reader, identify

TEXT_HEAD = 16 * 1024  # encoded characters looked at (a header is a few hundred bytes)
INFLATE_HEAD = 8 * 1024  # decompressed bytes looked at
MAX_LAYERS = 3
MAX_FILE_BYTES = 1 << 30  # files above this are not decoded (the head alone would still be cheap)
# Magic bytes a XOR key is derived from: (magic, how many bytes must match).
_XOR_MAGICS = (b"\x7fELF", b"MZ", b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe",
               b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe", b"!<arch>\n")
_B64 = re.compile(rb"[A-Za-z0-9+/=_-]+")
_HEX = re.compile(rb"(?:0x)?[0-9a-fA-F]+")
_XXD_LINE = re.compile(rb"^[0-9a-fA-F]{4,16}:\s+((?:[0-9a-fA-F]{2,4}\s)+)", re.M)
_MIN_TEXT = 24  # characters: shorter heads are not worth decoding
SNIFF = 4096  # bytes read first (what format detection already read); more only for encoded text
_TEXTUAL = re.compile(rb"[A-Za-z0-9+/=_\-\s:.,\\x]*")  # what base64, hex and xxd dumps are made of


@dataclass(frozen=True)
class Encoded:
    layers: tuple[str, ...]  # outermost first, e.g. ("base64", "gzip")
    info: ExecInfo

    def describe(self) -> str:
        return f"{' -> '.join(self.layers)} decodes to {self.info.describe()}"


def find_encoded(read: Reader, size: int) -> Encoded | None:
    """The executable a file decodes to under a cheap encoding, or None."""
    if size > MAX_FILE_BYTES or size < 16:
        return None
    found = _xor(read)
    if found:
        return found
    head = read(0, min(size, SNIFF))
    if _TEXTUAL.fullmatch(head) and size > len(head):
        head = read(0, min(size, TEXT_HEAD))  # base64/hex/xxd text: worth a longer look
    return _layers(head, 0)


def _xor(read: Reader) -> Encoded | None:
    head = read(0, 64)
    if not head:
        return None
    for magic in _XOR_MAGICS:
        key = head[0] ^ magic[0]
        if key == 0 or len(head) < len(magic):
            continue  # key 0 is the plain file, the binary scanner's own case
        if bytes(b ^ key for b in head[: len(magic)]) != magic:
            continue
        info = _executable(_xored(read, key))
        if info is not None:
            return Encoded((f"single-byte XOR (key {key:#04x})",), info)
    return None


def _xored(read: Reader, key: int) -> Reader:
    return lambda offset, length: bytes(b ^ key for b in read(offset, length))


def _layers(data: bytes, depth: int) -> Encoded | None:
    if depth >= MAX_LAYERS or not data:
        return None
    for name, decode in _DECODERS:
        decoded = decode(data)
        if not decoded:
            continue
        info = _executable(_reader(decoded))
        if info is not None:
            return Encoded((name,), info)
        inner = _layers(decoded, depth + 1)
        if inner is not None:
            return Encoded((name, *inner.layers), inner.info)
    return None


def _executable(read: Reader) -> ExecInfo | None:
    """A header that names native code; 0xCAFEBABE with an implausible count is a Java class file."""
    info = identify(read)
    return None if info is None or info.kind.startswith("Java class") else info


def _reader(data: bytes) -> Reader:
    return lambda offset, length: data[offset : offset + length]


def _gzip(data: bytes) -> bytes | None:
    return _inflate(data, 31) if data.startswith(b"\x1f\x8b") else None


def _zlib(data: bytes) -> bytes | None:
    return _inflate(data, 15) if len(data) >= 2 and data[0] == 0x78 and (data[0] * 256 + data[1]) % 31 == 0 else None


def _inflate(data: bytes, wbits: int) -> bytes | None:
    try:
        return zlib.decompressobj(wbits).decompress(data, INFLATE_HEAD)
    except zlib.error:
        return None


def _text(data: bytes) -> bytes:
    return b"".join(data.split())


def _base64(data: bytes) -> bytes | None:
    compact = _text(data)
    if len(compact) < _MIN_TEXT or not _B64.fullmatch(compact) or _HEX.fullmatch(compact):
        return None
    usable = compact[: len(compact) - len(compact) % 4]  # the head may cut a quantum
    try:
        if b"-" in usable or b"_" in usable:
            return base64.urlsafe_b64decode(usable)
        return base64.b64decode(usable.rstrip(b"=") + b"=" * (-len(usable.rstrip(b"=")) % 4))
    except (binascii.Error, ValueError):
        return None


def _hex(data: bytes) -> bytes | None:
    compact = _text(data).replace(b"0x", b"").replace(b",", b"").replace(b"\\x", b"")
    if len(compact) < _MIN_TEXT or not re.fullmatch(rb"[0-9a-fA-F]+", compact):
        return None
    try:
        return bytes.fromhex(compact[: len(compact) - len(compact) % 2].decode("ascii"))
    except ValueError:
        return None


def _xxd(data: bytes) -> bytes | None:
    rows = _XXD_LINE.findall(data)
    if not rows:
        return None
    return _hex(b"".join(rows))


_DECODERS: tuple[tuple[str, Callable[[bytes], bytes | None]], ...] = (
    ("gzip", _gzip), ("zlib", _zlib), ("xxd dump", _xxd), ("hex", _hex), ("base64", _base64),
)
