"""A tiny pickle assembler for test samples: raw opcodes, never loaded by anything."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from pathlib import Path

PAYLOAD = "echo pwned"
TORCH_MAGIC = 0x1950A86A20F9469CFC6C

MARK, STOP, POP, TUPLE, REDUCE, BUILD = b"(", b".", b"0", b"t", b"R", b"b"
TUPLE1, TUPLE2, TUPLE3, EMPTY_TUPLE = b"\x85", b"\x86", b"\x87", b")"
EMPTY_DICT, EMPTY_LIST, SETITEM, SETITEMS, APPENDS = b"}", b"]", b"s", b"u", b"e"
MEMOIZE, STACK_GLOBAL, NEWOBJ, NONE, NEWTRUE, NEWFALSE = b"\x94", b"\x93", b"\x81", b"N", b"\x88", b"\x89"
BINPERSID, DICT = b"Q", b"d"


def proto(n: int) -> bytes:
    return b"\x80" + bytes([n])


def glob(module: str, name: str) -> bytes:
    return b"c" + f"{module}\n{name}\n".encode()


def uni(text: str) -> bytes:
    raw = text.encode()
    return b"X" + struct.pack("<I", len(raw)) + raw  # BINUNICODE


def short_uni(text: str) -> bytes:
    raw = text.encode()
    return b"\x8c" + bytes([len(raw)]) + raw  # SHORT_BINUNICODE


def uni0(text: str) -> bytes:
    return b"V" + text.encode("raw_unicode_escape") + b"\n"  # protocol-0 UNICODE


def binbytes(data: bytes) -> bytes:
    return b"B" + struct.pack("<I", len(data)) + data


def short_binbytes(data: bytes) -> bytes:
    return b"C" + bytes([len(data)]) + data


def bytearray8(data: bytes) -> bytes:
    return b"\x96" + struct.pack("<Q", len(data)) + data


def binint1(n: int) -> bytes:
    return b"K" + bytes([n])


def binint(n: int) -> bytes:
    return b"J" + struct.pack("<i", n)


def binput(i: int) -> bytes:
    return b"q" + bytes([i])


def binget(i: int) -> bytes:
    return b"h" + bytes([i])


def stack_global(module: str, name: str) -> bytes:
    return short_uni(module) + short_uni(name) + STACK_GLOBAL


def frame(body: bytes) -> bytes:
    return b"\x95" + struct.pack("<Q", len(body)) + body


def call(func: bytes, *args: bytes) -> bytes:
    """func(*args) with MARK ... TUPLE REDUCE (protocol 1+)."""
    return func + MARK + b"".join(args) + TUPLE + REDUCE


def system_call(module: str = "posix", name: str = "system", arg: str = PAYLOAD) -> bytes:
    return proto(2) + call(glob(module, name), uni(arg)) + STOP


def long1(n: int, size: int) -> bytes:
    return b"\x8a" + bytes([size]) + n.to_bytes(size, "little", signed=True)


def zip_bytes(members: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()


def patch_zip(data: bytes, member: str, *, crc: bool = False, flag: bool = False, rename: bool = False) -> bytes:
    """Corrupt a member the ways torch ignores: CRC, encrypted bit, local file name."""
    buf = bytearray(data)
    name = member.encode()
    local = buf.find(b"PK\x03\x04" + b"", 0)
    while local >= 0:
        name_len = struct.unpack_from("<H", buf, local + 26)[0]
        if bytes(buf[local + 30 : local + 30 + name_len]) == name:
            break
        local = buf.find(b"PK\x03\x04", local + 4)
    central = buf.find(b"PK\x01\x02" + b"", 0)
    while central >= 0:
        name_len = struct.unpack_from("<H", buf, central + 28)[0]
        if bytes(buf[central + 46 : central + 46 + name_len]) == name:
            break
        central = buf.find(b"PK\x01\x02", central + 4)
    if crc:
        struct.pack_into("<I", buf, local + 14, 0xDEADBEEF)
        struct.pack_into("<I", buf, central + 16, 0xDEADBEEF)
    if flag:
        buf[local + 6] |= 1
        buf[central + 8] |= 1
    if rename:
        buf[local + 30 + len(name) - 1] ^= 0x20  # the local header now names another file
    return bytes(buf)


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def deflate_raw(data: bytes) -> bytes:
    compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return compressor.compress(data) + compressor.flush()
