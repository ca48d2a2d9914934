import io
import json
import pickle
import struct
import zipfile

import pytest

from app.core.formats.detect import detect_format, looks_like_pickle, refine_zip


def _safetensors(header: dict[str, object], data: bytes = b"") -> bytes:
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


@pytest.mark.parametrize("protocol", range(6))
def test_pickles_of_every_protocol_are_pickles(protocol: int) -> None:
    data = pickle.dumps({"a": [1, 2, 3], "b": "text"}, protocol=protocol)
    assert detect_format(data, len(data)) == "pickle"


def test_protocol0_global_without_proto_is_a_pickle() -> None:
    data = b"cposix\nsystem\n(S'echo pwned'\ntR."
    assert detect_format(data, len(data)) == "pickle"


def test_truncated_protocol0_payload_is_still_a_pickle() -> None:
    data = b"cos\nsystem\n(S'echo pwned'\ntR"  # no STOP: a nullifAI-style broken stream
    assert looks_like_pickle(data)


@pytest.mark.parametrize(
    "text",
    [
        b"# Model card\n\nSome text.\n",
        b"cat README\n",
        b"import os\nprint(1)\n",
        b"(just a note)\n",
        b"torch==2.7.0\nflash-attn>=2.7\n",  # parses as TUPLE, OBJ, ..., DUP, STOP
    ],
)
def test_prose_and_code_are_text_not_pickle(text: bytes) -> None:
    assert detect_format(text, len(text)) == "text"


def test_safetensors_by_content() -> None:
    data = _safetensors({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4)
    assert detect_format(data, len(data)) == "safetensors"


def test_legacy_torch_magic() -> None:
    magic = pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2)
    assert detect_format(magic + b"\x80\x02K\xe9.", 100) == "torch-legacy"


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b"\x93NUMPY\x01\x00", "numpy"),
        (b"7z\xbc\xaf\x27\x1c\x00\x04", "7z"),
        (b"GGUF\x03\x00\x00\x00", "gguf"),
        (b"\x7fELF\x02\x01\x01", "elf"),
        (b"\xcf\xfa\xed\xfe\x07\x00", "macho"),
        (b"!<arch>\nfoo", "ar"),
        (b"\x1f\x8b\x08\x00", "gzip"),
        (b"\x89HDF\r\n\x1a\n", "hdf5"),
        (b"\x00\x01\x02\x03\xff", "unknown"),
    ],
)
def test_magic_numbers(head: bytes, expected: str) -> None:
    assert detect_format(head, 1000) == expected


def test_pe_needs_pe_signature() -> None:
    header = bytearray(128)
    header[0:2] = b"MZ"
    struct.pack_into("<I", header, 60, 64)
    header[64:68] = b"PE\x00\x00"
    assert detect_format(bytes(header), 4096) == "pe"
    assert detect_format(b"MZ is a postcode prefix in some text that goes on and on" * 2, 200) == "text"


def test_extension_is_ignored_zip_members_decide() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("weird_top/data.pkl", b"\x80\x02}q\x00.")
    data = buf.getvalue()
    assert detect_format(data, len(data)) == "zip"
    assert refine_zip(["weird_top/data.pkl", "weird_top/data/0"]) == "pytorch-zip"
    assert refine_zip(["a.npy", "b.npy"]) == "numpy-npz"
    assert refine_zip(["pkg/__init__.py", "pkg-1.0.dist-info/METADATA"]) == "wheel"
    assert refine_zip(["notes.txt"]) == "zip"


def test_empty_file() -> None:
    assert detect_format(b"", 0) == "empty"


def test_format_groups_name_only_formats_and_agree() -> None:
    from app.core.formats import detect

    groups = [detect.ZIP_KINDS, detect.PEER_ZIP_KINDS, detect.INFLATABLE, detect.EXECUTABLES,
              detect.NESTED_ARCHIVES, detect.UNSUPPORTED_COMPRESSION, frozenset(detect.LOADS_THROUGH_PICKLE)]
    for group in groups:
        assert all(isinstance(f, detect.Format) for f in group)
    assert detect.PEER_ZIP_KINDS <= detect.ZIP_KINDS
    assert detect.COMPRESSED_STREAMS <= detect.INFLATABLE
    names = [["a/data.pkl"], ["x.npy"], ["config.json", "model.h5"], ["p-1.dist-info/RECORD"], ["other"]]
    assert {detect.refine_zip(n) for n in names} == detect.ZIP_KINDS
