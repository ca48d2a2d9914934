"""Executables under a cheap encoding, found from the file's head only."""

from __future__ import annotations

import base64
import gzip
import os
import random
import zlib

import pytest

from app.core.formats.encoded_exe import TEXT_HEAD, find_encoded
from tests.unit.core.scanners.test_binary_scanner import elf, macho, pe


def _find(data: bytes) -> str | None:
    reads: list[tuple[int, int]] = []

    def read(offset: int, length: int) -> bytes:
        reads.append((offset, length))
        return data[offset : offset + length]

    found = find_encoded(read, len(data))
    assert all(offset + length <= max(TEXT_HEAD, 4096) for offset, length in reads), reads  # the head only
    return found.describe() if found else None


@pytest.mark.parametrize("key", [0x01, 0x5A, 0x80, 0xFF])
def test_single_byte_xor_with_any_key(key: int) -> None:
    assert _find(bytes(b ^ key for b in elf())) == (
        f"single-byte XOR (key {key:#04x}) decodes to ELF 64-bit LSB shared object (x86-64)")


def test_xor_pe_needs_the_pe_signature_behind_mz() -> None:
    assert "PE executable" in (_find(bytes(b ^ 0x33 for b in pe())) or "")
    fake = bytearray(pe())
    fake[128:132] = b"XX\0\0"  # MZ and e_lfanew, but no PE header: not an executable
    assert _find(bytes(b ^ 0x33 for b in fake)) is None


@pytest.mark.parametrize(("encode", "layers"), [
    (lambda b: base64.b64encode(b), "base64"),
    (lambda b: base64.encodebytes(b), "base64"),  # wrapped at 76 columns
    (lambda b: base64.urlsafe_b64encode(b), "base64"),
    (lambda b: b.hex().encode(), "hex"),
    (lambda b: b.hex().upper().encode(), "hex"),
    (lambda b: zlib.compress(b), "zlib"),
    (lambda b: gzip.compress(b), "gzip"),
    (lambda b: base64.b64encode(gzip.compress(b)), "base64 -> gzip"),
    (lambda b: zlib.compress(base64.b64encode(b)), "zlib -> base64"),
])
def test_text_and_compressed_encodings(encode: object, layers: str) -> None:
    found = _find(encode(macho() + os.urandom(20_000)))  # type: ignore[operator]
    assert found is not None and found.startswith(layers + " decodes to Mach-O")


def test_xxd_dump() -> None:
    data = elf()
    dump = "".join(f"{i:08x}: " + " ".join(data[i + j : i + j + 2].hex() for j in range(0, 16, 2)) + "  ....\n"
                   for i in range(0, len(data), 16))
    assert (_find(dump.encode()) or "").startswith("xxd dump decodes to ELF")


@pytest.mark.parametrize("data", [
    os.urandom(4096),
    base64.b64encode(os.urandom(3000)),
    "\n".join(f"{i:064x}" for i in range(50)).encode(),  # digests
    b'{"model_type": "llama", "hidden_size": 4096}' * 10,
    b"ELF is a format; MZ too.\n" * 10,
    bytes(b ^ 0x11 for b in b"\xca\xfe\xba\xbe\x00\x00\x00\x34" + bytes(100)),  # a XOR-ed Java class file
    base64.b64encode(b"\xca\xfe\xba\xbe\x00\x00\x00\x34" + bytes(100)),
])
def test_ordinary_content_decodes_to_nothing(data: bytes) -> None:
    assert _find(data) is None


def test_binary_noise_is_looked_at_only_as_far_as_format_detection_read() -> None:
    data = random.Random(12).randbytes(1 << 20)  # seeded: a noise head that XORs to "MZ" would read its PE offset
    reads: list[tuple[int, int]] = []

    def read(offset: int, length: int) -> bytes:
        reads.append((offset, length))
        return data[offset : offset + length]

    assert find_encoded(read, len(data)) is None
    assert max(offset + length for offset, length in reads) <= 4096
