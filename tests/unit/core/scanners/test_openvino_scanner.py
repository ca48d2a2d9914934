"""OpenvinoScanner: IR XML written at test time (the layout of openvino's IR v11 serializer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners import all_scanners, openvino_scanner
from app.sources.local import LocalSource


def _ir(layers: list[tuple[str, str]], padding: int = 0) -> bytes:
    body = "".join(f'\t\t<layer id="{i}" name="l{i}" type="{op}" version="{version}">\n'
                   f'\t\t\t<data element_type="f32" shape="1,3"/>\n\t\t</layer>\n'
                   for i, (op, version) in enumerate(layers))
    pad = f"\t<!-- {'x' * padding} -->\n" if padding else ""
    return (f'<?xml version="1.0"?>\n<net name="model" version="11">\n{pad}\t<layers>\n{body}\t</layers>\n'
            "</net>\n").encode()


def _vet(tmp_path: Path, files: dict[str, bytes]) -> Report:
    tmp_path.mkdir(exist_ok=True)
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    return vet(LocalSource(tmp_path), all_scanners(), options=VetOptions(workers=1))


def _openvino(report: Report) -> list[tuple[str, Severity, str | None]]:
    return sorted((f.rule, f.severity, f.evidence) for f in report.findings if f.scanner == "openvino")


def test_opset_and_internal_ops_are_clean(tmp_path: Path) -> None:
    layers = [("Parameter", "opset1"), ("MatMul", "opset1"), ("RMS", "ie_internal_opset"), ("Result", "opset1")]
    assert _openvino(_vet(tmp_path, {"openvino_model.xml": _ir(layers)})) == []


# openvino's XmlDeserializer asks the opset named by `version`; other versions need core.add_extension.
def test_extension_ops_need_a_library_high_when_one_is_shipped(tmp_path: Path) -> None:
    layers = [("Parameter", "opset1"), ("FastDecode", "custom_opset")]
    assert _openvino(_vet(tmp_path / "a", {"model.xml": _ir(layers)})) == [
        ("openvino-extension-op", Severity.MEDIUM, "FastDecode")]
    report = _vet(tmp_path / "b", {"model.xml": _ir(layers), "libdecode.so": b"\x7fELF" + bytes(60)})
    assert ("openvino-extension-op", Severity.HIGH, "FastDecode") in _openvino(report)


def test_a_layer_past_the_first_chunk_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openvino_scanner, "CHUNK", 4096)
    data = _ir([("Parameter", "opset1"), ("Evil", "extension")], padding=4000)
    (finding,) = [f for f in _vet(tmp_path, {"model.xml": data}).findings if f.scanner == "openvino"]
    assert "1 layer(s)" in finding.message


def test_other_xml_is_not_an_ir(tmp_path: Path) -> None:
    config = b'<?xml version="1.0"?>\n<config><layer type="x"/></config>\n'
    assert _openvino(_vet(tmp_path, {"config.xml": config})) == []
