"""The pure parts of bench/wild_corpus.py: which packaged files it selects, and how it counts results."""

from __future__ import annotations

import gzip
import io
import pickle
import struct
import zipfile
import zlib
from pathlib import Path

import pytest

from bench import wild_corpus as wild


def _zip(names: list[str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name in names:
            zf.writestr(name, b"x")
    return buffer.getvalue()


def _npy() -> bytes:
    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + b"\x00" * 8


PICKLE = pickle.dumps({"a": [1, 2]}, protocol=2)  # dumps only: nothing here is ever loaded


@pytest.mark.parametrize(("name", "data", "kind"), [
    ("pkg/test_data/word2vec_old", PICKLE, "pickle"),  # no extension: the content says pickle
    ("pkg/weights/net.pth", PICKLE, "torch-legacy"),
    ("pkg/data/table.txt", PICKLE, None),  # text-named files are not model files, whatever they hold
    ("pkg/data/a.npy", _npy(), "npy"),
    ("pkg/models/ggml-vocab.gguf", b"GGUF\x03\x00\x00\x00" + b"\x00" * 16, "gguf"),
    ("pkg/data/f.h5", b"\x89HDF\r\n\x1a\n" + b"\x00" * 8, "hdf5"),
    ("pkg/m.tflite", b"\x1c\x00\x00\x00TFL3" + b"\x00" * 8, "tflite"),
    ("pkg/m.onnx", b"\x08\x07\x12\x04test", "onnx"),
    ("pkg/node/test_data_set_0/input_0.pb", b"\x08\x01", "protobuf"),
    ("pkg/model.mlmodel", b"\x08\x04", "coreml"),
    ("pkg/variables/variables.data-00000-of-00001", b"\x00\x01", "tf-checkpoint"),
    ("pkg/data/old.pkl_01.npy.z", b"ZF0x10" + b" " * 13 + zlib.compress(b"\x00" * 16), "joblib-zfile"),
    ("pkg/data/c.pkl.gz", gzip.compress(PICKLE, mtime=0), "pickle-gzip"),
    ("pkg/data/c.pkl.z", zlib.compress(PICKLE), "pickle-zlib"),
    ("pkg/data/readme.gz", gzip.compress(b"plain text", mtime=0), None),
    ("pkg/w.npz", _zip(["a.npy", "b.npy"]), "npz"),
    ("pkg/m.pt", _zip(["archive/data.pkl", "archive/data/0"]), "torch-zip"),
    ("pkg/m.jit", _zip(["m/constants.pkl", "m/code/__torch__/m.py", "m/data.pkl"]), "torchscript"),
    ("pkg/docs.zip", _zip(["a.html"]), None),
    ("pkg/__pycache__/x.pkl", PICKLE, None),
    ("pkg/code.py", b"import os", None),
])
def test_classify_selects_by_content_then_extension(name: str, data: bytes, kind: str | None) -> None:
    assert wild.classify(name, data) == kind


def test_archive_lookup_matches_the_pinned_version_only(tmp_path: Path) -> None:
    for name in ("Resemblyzer-0.1.4-py3-none-any.whl", "rapid_layout-0.2.0-py3-none-any.whl",
                 "llama_cpp_python-0.3.2.tar.gz"):
        (tmp_path / name).write_bytes(b"")
    assert wild.find_archive(tmp_path, wild.Package("resemblyzer", "0.1.4")) == tmp_path / \
        "Resemblyzer-0.1.4-py3-none-any.whl"
    assert wild.find_archive(tmp_path, wild.Package("rapid-layout", "0.3.0")) is None
    assert wild.find_archive(tmp_path, wild.Package("llama-cpp-python", "0.3.2", sdist=True)) is not None


def test_paths_never_leave_the_repo_folder() -> None:
    assert wild.safe_relative("a/./b//c.npy") == "a/b/c.npy"
    assert wild.safe_relative("../etc/x.pkl") is None
    assert wild.safe_relative("/") is None


def _result(name: str, kinds: dict[str, str], hits: list[wild.Hit], vendor: str = "approve") -> wild.PackageResult:
    return wild.PackageResult(wild.Package(name, "1.0"), kinds, hits, {"vendor": vendor, "third-party": "review"},
                              {"vendor": [], "third-party": ["third-party"]}, 0.1)


def _hit(path: str, rule: str, message: str, severity: str = "high") -> wild.Hit:
    return wild.Hit(path, None, "hfvet-pickle", rule, severity, message)


def test_aggregation_counts_files_not_findings() -> None:
    one = _result("a", {"x.pkl": "pickle", "y.pkl": "pickle", "z.npy": "npy"}, [
        _hit("x.pkl", "pickle-unknown-call", "NEWOBJ at offset 12 calls gensim.models.word2vec.Word2Vec"),
        _hit("x.pkl", "pickle-unknown-call", "NEWOBJ at offset 99 calls gensim.models.word2vec.Word2Vec"),
    ], vendor="reject")
    two = _result("b", {"m.gguf": "gguf"}, [_hit("m.gguf", "malformed-gguf", "tensor data ends at 4825696")])
    assert wild.by_format([one, two]) == {"gguf": (1, 1), "npy": (1, 0), "pickle": (2, 1)}
    totals = wild.summary([one, two])
    assert (totals["files"], totals["flagged_files"], totals["flagged_percent"]) == (4, 2, 50.0)
    assert totals["vendor"] == {"reject": 1, "approve": 1}
    grouped = wild.groups([one, two])
    assert grouped[0]["message"] == "NEWOBJ at offset N calls gensim.models.word2vec.Word2Vec"  # names keep digits
    assert (grouped[0]["files"], grouped[0]["findings"]) == (1, 2)
    assert grouped[1]["examples"] == ["b: m.gguf"]
    markdown = wild.render([one, two], "## Benign in the wild")
    assert "| pickle | 2 | 1 | 50.00% |" in markdown and "reject ()" not in markdown


def test_only_accepts_pinned_names() -> None:
    assert [p.name for p in wild.chosen("GENSIM,joblib")] == ["gensim", "joblib"]
    with pytest.raises(SystemExit):
        wild.chosen("torch")
