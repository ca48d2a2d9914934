"""Extract 7z members into memory with hard caps (py7zr), for sniffing and analysis."""

from __future__ import annotations

import io
from typing import BinaryIO

import py7zr
from py7zr.io import Py7zIO, WriterFactory

from app.core.formats.streams import CorruptStream
from app.core.limits import LimitExceeded, Limits


class _CappedIO(Py7zIO):
    """Keeps at most ``limit`` bytes of one member; notes when more arrived."""

    def __init__(self, limit: int) -> None:
        self._buffer = io.BytesIO()
        self._limit = limit
        self.overflowed = False

    def write(self, s: bytes | bytearray) -> int:
        room = self._limit - self._buffer.tell()
        if len(s) > room:
            self.overflowed = True
        self._buffer.write(bytes(s[: max(room, 0)]))
        return len(s)

    def read(self, size: int | None = None) -> bytes:
        return self._buffer.getvalue()

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._buffer.tell()

    def flush(self) -> None:
        return None

    def size(self) -> int:
        return self._buffer.tell()


class _CappedFactory(WriterFactory):
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.products: dict[str, _CappedIO] = {}

    def create(self, filename: str) -> Py7zIO:
        product = _CappedIO(self.limit)
        self.products[filename] = product
        return product


def extract_members(source: BinaryIO, limits: Limits, compressed_size: int) -> dict[str, bytes]:
    """Every file member's bytes; raises LimitExceeded / CorruptStream instead of guessing.

    py7zr never writes more than a member's declared size, so judging the declared sizes
    (against ``compressed_size``, the archive's) bounds what is extracted.
    """
    max_bytes = limits.max_decompressed_bytes
    try:
        with py7zr.SevenZipFile(source, mode="r") as archive:
            if archive.needs_password():
                raise CorruptStream("encrypted 7z archive: its content cannot be inspected")
            files = [info for info in archive.list() if not info.is_directory]
            if len(files) > limits.max_archive_members:
                raise LimitExceeded(f"7z archive with {len(files)} members")
            declared = sum(info.uncompressed or 0 for info in files)
            limits.check_expansion(declared, compressed_size, "7z archive", declared=True)
            factory = _CappedFactory(max_bytes)
            archive.extract(factory=factory)
    except (CorruptStream, LimitExceeded):
        raise
    except Exception as exc:  # noqa: BLE001 - py7zr raises many types on hostile input
        raise CorruptStream(f"unreadable 7z archive: {type(exc).__name__}: {exc}") from None
    if any(p.overflowed for p in factory.products.values()):
        raise LimitExceeded(f"a 7z member expands to more than {max_bytes} bytes")
    return {name: p.read() for name, p in factory.products.items()}
