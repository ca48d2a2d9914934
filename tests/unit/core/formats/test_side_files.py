"""Raw weight blobs whose head looks like a pickle: raw-data when a loader of the layout reads them
raw, no pickle loader reaches their name and the head runs nothing; a pickle otherwise."""

from __future__ import annotations

import json
import random
import struct
from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.formats.pickle_sniff import acts_before_break
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.report_json import dump
from app.core.scanners import all_scanners
from app.sources.local import LocalSource
from tests.corpus import onnx_writer as w

OPENVINO_XML = b'<?xml version="1.0"?>\n<net name="model" version="11">\n<layers>\n</layers>\n</net>\n'


def pickle_like_floats(count: int = 4096, seed: int = 7) -> bytes:
    """float32 data whose first value's low bytes are 0x80 0x02: PROTO 2 to a pickle sniffer."""
    rng = random.Random(seed)
    values = struct.pack(f"<{count}f", *(rng.gauss(0, 0.02) for _ in range(count)))
    return b"\x80\x02\x22\x3c" + values[4:]  # 0x22 is no opcode: as a pickle it breaks at byte 2


def _vet(tmp_path: Path, files: dict[str, bytes]) -> Report:
    for path, data in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(data)
    return vet(LocalSource(tmp_path), all_scanners(), options=VetOptions(workers=1))


def _formats(report: Report) -> dict[str, str]:
    return {f.path: f.format for f in report.files}


def _above_info(report: Report, path: str) -> list[str]:
    return sorted(f.rule for f in report.findings if f.path == path and f.severity.rank > Severity.INFO.rank)


def test_the_head_check_stops_at_the_first_import_call_or_break() -> None:
    assert not acts_before_break(b"\x80\x02\x22rest", 1000)  # unknown opcode: a break
    assert not acts_before_break(b"\x80\x02\x93", 1000)  # STACK_GLOBAL without operands fails first
    assert not acts_before_break(b"\x80\x02c\x93\x11\nfoo\n", 1000)  # no importable module: find_class fails
    assert not acts_before_break(b"\x80\x02X\xff\xff\xff\x7f", 1000)  # a string longer than the file
    assert acts_before_break(b"\x80\x02cos\nsystem\n", 1000)
    assert acts_before_break(b"\x80\x02K\x05", 1000)  # the head ran out first: unknown, so acting


# OpenVINO's Core::read_model(xml) reads "<stem>.bin" beside it as raw bytes (ov::util::read_file).
def test_an_openvino_bin_beside_its_ir_is_raw_data(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"ov/openvino_model.xml": OPENVINO_XML, "ov/openvino_model.bin": pickle_like_floats()})
    assert _formats(report)["ov/openvino_model.bin"] == "raw-data"
    assert [f.rule for f in report.findings if f.path == "ov/openvino_model.bin"] == ["raw-side-file"]


# onnx/external_data_helper.py load_external_data_for_tensor opens the location and reads bytes.
def test_onnx_external_data_is_raw_data(tmp_path: Path) -> None:
    model = w.conv_net(external={"location": "weights/model.onnx_data", "offset": "0", "length": "864"})
    report = _vet(tmp_path, {"onnx/model.onnx": model, "onnx/weights/model.onnx_data": pickle_like_floats()})
    assert _formats(report)["onnx/weights/model.onnx_data"] == "raw-data"
    assert _above_info(report, "onnx/weights/model.onnx_data") == []


@pytest.mark.parametrize(("files", "blob"), [
    ({"variables/variables.index": b"\0" * 48}, "variables/variables.data-00000-of-00001"),
    ({"m.mlpackage/Manifest.json": b"{}"}, "m.mlpackage/Data/com.apple.CoreML/weights/weight.bin"),
    ({"model.json": json.dumps({"weightsManifest": [{"paths": ["group1-shard1of1.bin"]}]}).encode()},
     "group1-shard1of1.bin"),
    ({"ndarray-cache.json": json.dumps({"records": [{"dataPath": "params_shard_0.bin"}]}).encode()},
     "params_shard_0.bin"),
])
def test_other_raw_layouts(tmp_path: Path, files: dict[str, bytes], blob: str) -> None:
    report = _vet(tmp_path, {**files, blob: pickle_like_floats()})
    assert _formats(report)[blob] == "raw-data"


def test_a_blob_no_layout_claims_stays_a_pickle(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"stray.bin": pickle_like_floats()})
    assert _formats(report)["stray.bin"] == "pickle"
    # walked as a pickle: a broken stream (pickle-broken-stream, or the low pickle-broken-inert
    # where the engine judges a first pickle that breaks before any import)
    assert any(f.rule.startswith("pickle-broken") for f in report.findings if f.path == "stray.bin")


# transformers' modeling_utils passes pytorch_model.bin to torch.load, whatever an IR beside it says.
def test_a_name_transformers_unpickles_stays_a_pickle_whatever_the_layout(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"pytorch_model.xml": OPENVINO_XML, "pytorch_model.bin": pickle_like_floats()})
    assert _formats(report)["pytorch_model.bin"] == "pickle"
    index = json.dumps({"weight_map": {"a": "openvino_model.bin"}}).encode()
    report = _vet(tmp_path / "sharded", {"openvino_model.xml": OPENVINO_XML, "model.bin.index.json": index,
                                         "openvino_model.bin": pickle_like_floats()})
    assert _formats(report)["openvino_model.bin"] == "pickle"


# pickle.load runs the GLOBAL/REDUCE before anything else: a pickle that acts stays a pickle.
def test_a_real_pickle_named_as_external_data_stays_a_pickle(tmp_path: Path) -> None:
    payload = b"\x80\x02cposix\nsystem\nq\x00X\x0b\x00\x00\x00echo pwnedq\x01\x85q\x02Rq\x03."
    model = w.conv_net(external={"location": "model.onnx_data"})
    report = _vet(tmp_path, {"model.onnx": model, "model.onnx_data": payload})
    assert _formats(report)["model.onnx_data"] == "pickle"
    assert any(f.severity is Severity.CRITICAL for f in report.findings if f.path == "model.onnx_data")


def test_layout_reads_leave_the_report_the_same_at_any_worker_count(tmp_path: Path) -> None:
    files = {"onnx/model.onnx": w.conv_net(external={"location": "model.onnx_data", "offset": "0"}),
             "onnx/model.onnx_data": pickle_like_floats(), "ov/openvino_model.xml": OPENVINO_XML,
             "ov/openvino_model.bin": pickle_like_floats(seed=8), "ov/other.bin": pickle_like_floats(seed=9)}
    for path, data in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(data)
    reports = []
    for workers in (1, 2, 8, 1):
        doc = dump(vet(LocalSource(tmp_path), all_scanners(), options=VetOptions(workers=workers)))
        doc["stats"].pop("seconds")
        reports.append(doc)
    assert all(doc == reports[0] for doc in reports[1:])
    assert {f["path"]: f["format"] for f in reports[0]["files"]}["onnx/model.onnx_data"] == "raw-data"
