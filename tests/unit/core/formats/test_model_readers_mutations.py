"""The model readers on mutated models: every outcome is a value (findings, malformed, a limit),
never an exception escaping the scanner (which the pipeline would turn into a scan-error)."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from app.core.findings import Status
from app.core.formats.blobs import BytesBlob
from app.core.limits import Limits
from app.core.manifest import ManifestFile, RepoIdentity
from app.core.scanners.base import ScanContext
from app.core.scanners.coreml_scanner import CoremlScanner
from app.core.scanners.onnx_scanner import OnnxScanner
from app.core.scanners.paddle_scanner import PaddleScanner
from app.core.scanners.tflite_scanner import TfliteScanner
from tests.corpus import onnx_writer as w
from tests.corpus import tflite_writer as tfl
from tests.corpus.onnx_writer import field_bytes, field_text, field_varint

COREML = field_varint(1, 4) + field_bytes(2, field_bytes(1, field_text(1, "x"))) + field_bytes(
    500, field_bytes(1, field_text(1, "l") + field_bytes(500, field_text(10, "Custom"))))
PADDLE = field_bytes(1, field_bytes(4, field_text(3, "conv2d")) + field_bytes(4, field_text(3, "py_func")))
MODELS: list[tuple[str, Callable[[], object], bytes]] = [
    ("model.onnx", OnnxScanner, w.conv_net(external={"location": "d.bin", "offset": "0"})),
    ("model.tflite", TfliteScanner, tfl.model([3, "FlexWriteFile", "Custom"])),
    ("model.mlmodel", CoremlScanner, COREML),
    ("model.pdmodel", PaddleScanner, PADDLE),
]


def _mutations(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if not out:
            break
        kind = rng.random()
        at = rng.randrange(len(out))
        if kind < 0.5:
            out[at] = rng.randrange(256)
        elif kind < 0.7:
            del out[at : at + rng.randint(1, 16)]
        elif kind < 0.9:
            out[at:at] = rng.randbytes(rng.randint(1, 16))
        else:
            out[at : at + 4] = rng.choice([b"\xff\xff\xff\x7f", b"\x00\x00\x00\x80", b"\xff\xff\xff\xff"])
    return bytes(out)


@pytest.mark.parametrize(("name", "scanner", "data"), MODELS, ids=[m[0] for m in MODELS])
def test_mutated_models_give_values_not_exceptions(name: str, scanner: Callable[[], object], data: bytes) -> None:
    rng = random.Random(name)
    for _ in range(400):
        mutated = _mutations(data, rng)
        entry = ManifestFile(name, len(mutated))
        ctx = ScanContext(entry, BytesBlob(mutated), Limits(), RepoIdentity("org/repo"), (entry,))
        outcome = scanner().scan(ctx)  # type: ignore[attr-defined]
        assert outcome.status is Status.SCANNED, (mutated.hex(), outcome)
