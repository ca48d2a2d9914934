"""Read pickle opcodes from a byte stream without ever building the objects.

Unlike ``pickletools.genops`` this reader never holds a huge argument in memory: strings
and byte blobs longer than ``max_arg`` are skipped (seek, or read-and-discard on a
forward-only stream) and come back as ``SKIPPED``. Any malformed input raises
``BrokenStream`` with the offset where the real unpickler would also have failed.
"""

from __future__ import annotations

import codecs
import io
import pickletools
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO, NamedTuple

from app.core.scanners.pickle_engine.recording import Recorder

_SKIP_CHUNK = 1 << 20
WINDOW = 64 * 1024  # bytes an in-memory stream shows the fast opcode loop at a time


class BrokenStream(Exception):
    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} at offset {offset}")
        self.offset = offset


class _Skipped:
    def __repr__(self) -> str:
        return "<skipped>"


SKIPPED = _Skipped()  # an argument too long to keep


class Op(NamedTuple):  # a tuple: built for every opcode on the general path, so kept cheap
    name: str
    arg: object
    pos: int


_CODE_TO_OP = {op.code.encode("latin-1")[0]: op for op in pickletools.opcodes}
# Length-prefixed arguments: (prefix size, struct format, how to decode the payload).
_COUNTED = {
    "string1": (1, "<B", "str"), "bytes1": (1, "<B", "bytes"), "unicodestring1": (1, "<B", "utf8"),
    "string4": (4, "<i", "str"), "bytes4": (4, "<I", "bytes"), "unicodestring4": (4, "<I", "utf8"),
    "bytes8": (8, "<Q", "bytes"), "unicodestring8": (8, "<Q", "utf8"), "bytearray8": (8, "<Q", "bytes"),
    "long1": (1, "<B", "long"), "long4": (4, "<i", "long"),
}
_FIXED = {
    "uint1": (1, "<B"), "uint2": (2, "<H"), "int4": (4, "<i"), "uint4": (4, "<I"),
    "uint8": (8, "<Q"), "float8": (8, ">d"),
}


class OpReader:
    """Yields ``Op`` values one at a time from a binary file object."""

    def __init__(self, stream: BinaryIO, max_arg: int, keep_long: Callable[[bytes], bool] | None = None,
                 long_cap: int = 0) -> None:
        """``keep_long``: asked with the head of a byte/string argument over ``max_arg``; if it says
        yes, the argument (up to ``long_cap`` bytes) is kept in ``long_arg`` for inspection (the
        opcode still yields ``SKIPPED``), and a longer one leaves its size in ``long_arg_unread``."""
        self._f = stream
        self._max_arg = self.max_arg = max_arg
        self._keep_long = keep_long
        self._long_cap = long_cap
        self.long_arg: bytes | None = None
        self.long_arg_unread = 0
        self._seekable = _is_seekable(stream)
        self._size = _size_of(stream) if self._seekable else None
        self._pushback = b""
        self.pos = stream.tell() if self._seekable else 0  # offsets in findings
        self._peek = _peeker(stream)
        self._win, self._win_pos = b"", 0  # the last window and the offset of its first byte

    def window(self) -> tuple[bytes, int]:
        """Bytes ahead, not consumed, and where ``pos`` is in them: the fast loop parses opcodes
        in place and ``consume``s what it took. Empty when they cannot be had without reading
        ahead of ``pos`` (bytes pushed back, a stream that cannot peek, the end): then
        ``next_op`` reads one opcode."""
        if self._pushback or self._peek is None:
            return b"", 0
        offset = self.pos - self._win_pos
        if not 0 <= offset < len(self._win):
            self._win, self._win_pos, offset = self._peek(), self.pos, 0
        return self._win, offset

    def consume(self, n: int) -> None:
        """Move past ``n`` bytes of the window."""
        if n:
            if isinstance(self._f, io.BytesIO):
                self._f.seek(n, io.SEEK_CUR)
            else:
                self._f.read(n)
            self.pos += n

    def at_eof(self) -> bool:
        return not self.peek(1)

    def peek(self, n: int) -> bytes:
        if len(self._pushback) < n:
            self._win = b""
            self._pushback += self._f.read(n - len(self._pushback))
        return self._pushback[:n]

    def read(self, n: int) -> bytes:
        if not self._pushback:  # the common case, kept cheap: this runs once per opcode
            data = self._f.read(n)
            self.pos += len(data)
            return data
        data = self._pushback[:n]
        self._pushback = self._pushback[n:]
        if len(data) < n:
            data += self._f.read(n - len(data))
        self.pos += len(data)
        return data

    def read_exact(self, n: int, what: str) -> bytes:
        start = self.pos
        data = self.read(n)
        if len(data) != n:
            raise BrokenStream(f"truncated {what}", start)
        return data

    def skip(self, n: int, what: str) -> None:
        self._win = b""
        start = self.pos
        taken = min(n, len(self._pushback))
        self._pushback = self._pushback[taken:]
        self.pos += taken
        n -= taken
        if self._seekable and self._size is not None:
            here = self._f.tell()
            if here + n > self._size:
                raise BrokenStream(f"truncated {what}", start)
            self._f.seek(n, io.SEEK_CUR)
            self.pos += n
            return
        while n > 0:
            got = len(self._f.read(min(n, _SKIP_CHUNK)))
            if got == 0:
                raise BrokenStream(f"truncated {what}", start)
            self.pos += got
            n -= got

    def unread(self, data: bytes) -> None:
        """Read ``data`` next (bytes taken out of order, as a frame tail), at the offsets it came from."""
        if data:
            self._win = b""
            self._pushback = data + self._pushback
            self.pos -= len(data)

    def rewind(self, cap: int) -> Rewind:
        """A way to read the bytes from here again once this reader is done with the stream.

        A seekable stream seeks back. A forward-only one (a decompressed stream) is recorded
        from here on (``recording.Recorder``), in memory up to ``SMALL_BUFFER`` and on disk beyond, at
        most ``cap`` bytes.
        """
        start, kept = self.pos, self._pushback
        if self._seekable:
            offset = self._f.tell() - len(kept)
            return Rewind(lambda: self._reopened(self._f, offset, start), lambda: None)
        recorder = Recorder(self._f, kept, cap)
        self._f = recorder  # type: ignore[assignment]
        self._peek = None  # the recording sees every byte through read()
        return Rewind(lambda: self._reopened(recorder.replay(), None, start), recorder.discard)

    def _reopened(self, stream: BinaryIO, offset: int | None, start: int) -> OpReader:
        if offset is not None:
            stream.seek(offset)
        reader = OpReader(stream, self._max_arg, self._keep_long, self._long_cap)
        reader.pos = start
        return reader

    def next_op(self) -> Op | None:
        """The next opcode, or None at a clean end of stream."""
        pos = self.pos
        code = self.read(1)
        if not code:
            return None
        op = _CODE_TO_OP.get(code[0])
        if op is None:
            raise BrokenStream(f"invalid opcode byte 0x{code[0]:02x}", pos)
        arg = self._read_arg(op.arg.name if op.arg else None, op.name, pos)
        return Op(op.name, arg, pos)

    def _read_arg(self, kind: str | None, opname: str, pos: int) -> object:
        if kind is None:
            return None
        if kind in _FIXED:
            size, fmt = _FIXED[kind]
            return struct.unpack(fmt, self.read_exact(size, opname))[0]
        if kind in _COUNTED:
            return self._read_counted(kind, opname, pos)
        return self._read_lines(kind, opname, pos)

    def _read_counted(self, kind: str, opname: str, pos: int) -> object:
        prefix, fmt, decode = _COUNTED[kind]
        (length,) = struct.unpack(fmt, self.read_exact(prefix, opname))
        if length < 0:
            raise BrokenStream(f"negative length for {opname}", pos)
        if length > self._max_arg:
            self._long(length, opname, decode)
            return SKIPPED
        data = self.read_exact(length, opname)
        try:
            return _decode(data, decode)
        except ValueError as exc:
            raise BrokenStream(f"undecodable {opname} argument ({exc})", pos) from None

    def _long(self, length: int, opname: str, how: str) -> None:
        if self._keep_long is not None and how != "long" and self._keep_long(self.peek(min(length, 256))):
            if length <= self._long_cap:
                self.long_arg = self.read_exact(length, opname)
                return
            self.long_arg_unread = length
        self.skip(length, opname)

    def take_long(self) -> tuple[bytes | None, int]:
        """The over-long argument kept for inspection, and the size of one too long to keep (then cleared)."""
        kept, unread = self.long_arg, self.long_arg_unread
        self.long_arg, self.long_arg_unread = None, 0
        return kept, unread

    def _read_lines(self, kind: str, opname: str, pos: int) -> object:
        if kind == "stringnl_noescape_pair":
            first, second = self._line(opname), self._line(opname)
            if first is None or second is None:
                return SKIPPED
            return (_utf8(first, opname, pos), _utf8(second, opname, pos))
        line = self._line(opname)
        if line is None:
            return SKIPPED
        try:
            return _parse_line(kind, line)
        except (ValueError, UnicodeDecodeError) as exc:
            raise BrokenStream(f"malformed {opname} argument ({exc})", pos) from None

    def _line(self, opname: str) -> bytes | None:
        """One newline-terminated argument, or None (skipped) when it is too long."""
        start = self.pos
        line = self._readline(self._max_arg + 1)
        if line.endswith(b"\n"):
            return line[:-1]
        if len(line) <= self._max_arg:
            raise BrokenStream(f"truncated {opname}", start)
        while not line.endswith(b"\n"):
            line = self._readline(_SKIP_CHUNK)
            if not line:
                raise BrokenStream(f"truncated {opname}", start)
        return None

    def _readline(self, limit: int) -> bytes:
        if self._pushback:
            nl = self._pushback.find(b"\n", 0, limit)
            if nl >= 0:
                return self.read(nl + 1)
            head = self.read(min(len(self._pushback), limit))
            if len(head) >= limit:
                return head
            rest = self._f.readline(limit - len(head))
            self.pos += len(rest)
            return head + rest
        line = self._f.readline(limit)
        self.pos += len(line)
        return line


@dataclass(frozen=True)
class Rewind:
    open: Callable[[], OpReader]
    close: Callable[[], None]  # drops the recording, if any


def _decode(data: bytes, how: str) -> object:
    if how == "bytes":
        return data
    if how == "utf8":
        return data.decode("utf-8", "surrogatepass")
    if how == "long":
        return int.from_bytes(data, "little", signed=True)
    return data.decode("latin-1")  # py2 str: the unpickler decodes it to str


def _parse_line(kind: str, line: bytes) -> object:
    if kind in ("decimalnl_short", "decimalnl_long", "floatnl"):
        return _lenient_number(kind, line)
    if kind == "stringnl":
        if len(line) < 2 or line[:1] != line[-1:] or line[:1] not in (b"'", b'"'):
            raise ValueError("string argument not quoted")
        return codecs.escape_decode(line[1:-1])[0].decode("latin-1")
    if kind == "unicodestringnl":
        return line.decode("raw-unicode-escape")
    return line.decode("utf-8")  # stringnl_noescape (PERSID)


def _lenient_number(kind: str, line: bytes) -> object:
    """Protocol-0 numbers. The unpickler's own parsing (C strtol, int(x, 0), float) accepts
    forms a stricter parser would reject; stopping there would let a payload hide after
    them, so anything unparseable is kept as an opaque number instead of a break."""
    text = line.decode("latin-1").strip()
    if kind == "decimalnl_short" and text in ("00", "01"):
        return text == "01"
    if kind == "decimalnl_long":
        text = text.removesuffix("L")
    try:
        return float(text) if kind == "floatnl" else int(text, 0)
    except ValueError:
        return SKIPPED


def _utf8(data: bytes, opname: str, pos: int) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise BrokenStream(f"undecodable {opname} name", pos) from None


def _peeker(stream: BinaryIO) -> Callable[[], bytes] | None:
    """How to see the bytes ahead without moving: a buffered stream's own ``peek`` (its buffer,
    read anyway), or a read-and-seek-back in memory. Other streams are read op by op."""
    if isinstance(stream, io.BytesIO):
        def ahead() -> bytes:
            here = stream.tell()
            with stream.getbuffer() as view:  # no read(): a skipped argument is never read
                return bytes(view[here : here + WINDOW])
        return ahead
    peek = getattr(stream, "peek", None)
    if isinstance(stream, io.BufferedReader) and callable(peek):
        return lambda: bytes(peek(WINDOW))
    return None


def _is_seekable(stream: BinaryIO) -> bool:
    try:
        return bool(stream.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _size_of(stream: BinaryIO) -> int | None:
    try:
        here = stream.tell()
        end = stream.seek(0, io.SEEK_END)
        stream.seek(here)
    except (OSError, ValueError):
        return None
    return end
