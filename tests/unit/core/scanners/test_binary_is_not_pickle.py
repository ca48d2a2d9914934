"""Binary data whose first bytes are pickle opcodes is not a pickle (issue 11, item 9, for binary).

A Flax ``flax_model.msgpack`` is a msgpack map: its first byte is 0x80 | n, which for n = 2..4 is
EXT1/EXT2/EXT4. CPython's ``load_ext1`` looks the code up in copyreg's extension registry (empty
unless the loading program registered codes) and fails otherwise; here the next opcode (BUILD on
one item) cannot run either. Nobody unpickles a ``.msgpack`` by name, and the stream is not a
well-formed pickle, so it is data with a low note at most, not critical weights. A stream that
goes on to call something keeps its findings. Built here; nothing is ever unpickled.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.formats.detect import Format, detect_format
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners import all_scanners
from app.sources.local import LocalSource
from tests.corpus import flax_writer
from tests.samples import opcodes as op


def _vet(folder: Path, name: str, data: bytes) -> Report:
    (folder / name).write_bytes(data)
    return vet(LocalSource(folder), list(all_scanners()), options=VetOptions(workers=1))


def _above_low(report: Report) -> list[tuple[str, str]]:
    return [(f.rule, f.severity.value) for f in report.findings if f.severity.rank > Severity.LOW.rank]


@pytest.mark.parametrize("top_keys", [1, 2, 3, 4, 5])
def test_a_flax_msgpack_has_nothing_above_low(tmp_path: Path, top_keys: int) -> None:
    assert _above_low(_vet(tmp_path, "flax_model.msgpack", flax_writer.bert_params(top_keys))) == []


def test_a_msgpack_map_of_two_is_not_sniffed_as_a_pickle() -> None:
    data = flax_writer.bert_params(2)
    assert data[0] == 0x82  # EXT1
    assert detect_format(data[:4096], len(data)) != Format.PICKLE


def test_an_extension_code_that_is_then_called_keeps_its_findings(tmp_path: Path) -> None:
    # EXT1 7, then a call of whatever the registry maps 7 to, then garbage: the call ran first.
    data = b"\x82\x07" + op.uni(op.PAYLOAD) + op.TUPLE1 + op.REDUCE + b"\xff\xfe garbage"
    found = _above_low(_vet(tmp_path, "weights.dat", data))
    assert ("pickle-unresolved-global", "critical") in found


def test_an_extension_code_in_a_stream_named_like_a_pickle_stays_critical(tmp_path: Path) -> None:
    # model.pkl is unpickled by its name: an import the loading program resolves is not text.
    assert ("pickle-unresolved-global", "critical") in _above_low(_vet(tmp_path, "model.pkl", b"\x82\x07b"))
