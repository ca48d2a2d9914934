"""Text is not weights (issue 11, item 9): text whose first bytes parse as pickle opcodes is not a
broken pickle, while a protocol-0 payload dressed as text stays critical.

CPython's unpickler (``pickle.py`` ``_Unpickler.load``) reads opcode after opcode and fails at the
first one that finds no MARK or too few stack items; only GLOBAL/INST/STACK_GLOBAL import and
only REDUCE/INST/OBJ/NEWOBJ/BUILD call. So text that breaks before calling anything has run
nothing but, at most, an import of its own words, and only if some loader unpickled a file with a
text name at all. Samples are inert strings built here; nothing is ever unpickled.
"""

from __future__ import annotations

import gzip
import io
import pickle
from pathlib import Path

import pytest

from app.core.findings import FindingSink, Severity
from app.core.formats.blobs import BytesBlob
from app.core.formats.detect import Format, detect_format, looks_like_pickle
from app.core.limits import Limits
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners import all_scanners
from app.core.scanners.pickle_engine.analysis import analyze_pickles
from app.core.scanners.pickle_engine.catalog import Verdict, classify
from app.core.scanners.pickle_engine.walk_state import ReadMode
from app.core.scanners.pickle_engine.walker import ContainerWalker
from app.sources.local import LocalSource
from tests.samples.text_shapes import SHAPES

INERT = b"echo inert"
# The classic protocol-0 payload, all printable: GLOBAL os.system, MARK, STRING, TUPLE, REDUCE, STOP.
P0_PAYLOAD = b"cos\nsystem\n(S'" + INERT + b"'\ntR."


def _vet(folder: Path, files: dict[str, bytes]) -> Report:
    for name, raw in files.items():
        (folder / name).write_bytes(raw)
    return vet(LocalSource(folder), list(all_scanners()), options=VetOptions(workers=1))


def _above_low(report: Report) -> list[tuple[str, str, str]]:
    return [(f.path, f.rule, f.severity.value) for f in report.findings if f.severity.rank > Severity.LOW.rank]


def _rules(report: Report, path: str) -> set[tuple[str, str]]:
    return {(f.rule, f.severity.value) for f in report.findings if f.path == path}


def test_hard_benign_text_corpus_has_nothing_above_low(tmp_path: Path) -> None:
    report = _vet(tmp_path, {name: text.encode() for name, text in SHAPES.items()})
    assert _above_low(report) == []
    assert {f.path: f.format for f in report.files} == {name: Format.TEXT for name in SHAPES}


# Payloads a pickle.load would run, whatever the file is called.
HOSTILE_TEXT = {
    "whole": P0_PAYLOAD,
    # no STOP: pickle.load runs os.system, then fails on EOF (nullifAI-style)
    "truncated": P0_PAYLOAD[:-1],
    # garbage after the call: the call ran before the break
    "broken-after-call": P0_PAYLOAD[:-1] + b"\nnot a pickle\n",
    # a 5000-character first argument hides the import from the 4096-byte sniff window
    "hidden-past-the-sniff": b"S'" + b"A" * 5000 + b"'\n0" + P0_PAYLOAD,
}


@pytest.mark.parametrize("name", sorted(HOSTILE_TEXT))
def test_protocol0_payload_named_like_text_stays_critical(tmp_path: Path, name: str) -> None:
    report = _vet(tmp_path, {"labels.txt": HOSTILE_TEXT[name]})
    assert ("pickle-dangerous-global", "critical") in _rules(report, "labels.txt")


def test_text_that_calls_an_unknown_callable_before_breaking_keeps_its_findings(tmp_path: Path) -> None:
    # REDUCE of at.dog: the unpickler imports and calls it before failing at the garbage.
    report = _vet(tmp_path, {"vocab.txt": b"cat\ndog\n(S'x'\ntR\nZ"})
    assert {("pickle-unknown-global", "medium"), ("pickle-broken-stream", "high")} <= _rules(report, "vocab.txt")


def test_text_under_a_loader_name_is_judged_as_the_loader_reads_it(tmp_path: Path) -> None:
    # unpickling model.pkl (what its name asks for) imports at.dog before BUILD breaks: the import counts.
    report = _vet(tmp_path, {"model.pkl": b"cat\ndog\nbird\n", "pytorch_model.bin": b"0 cat\n1 dog\n"})
    assert {("pickle-unknown-global", "medium"), ("pickle-broken-stream", "high")} <= _rules(report, "model.pkl")
    # torch.load's legacy reading fails at the first POP, having run nothing: a low note.
    assert _rules(report, "pytorch_model.bin") == {("pickle-text-lookalike", "low")}


@pytest.mark.parametrize("text", [b"cat\ndog\nbird\n", b"car\nbus\ntruck\n", b"cls\nsep\npad\n"])
def test_label_lines_that_break_the_stack_are_text(text: bytes) -> None:
    assert detect_format(text, len(text)) == Format.TEXT


def test_a_run_of_imports_cut_by_the_sniff_window_is_text() -> None:
    head = "".join(f"class_{i}\n" for i in range(800)).encode()[:4096]
    assert not looks_like_pickle(head, complete=False)


def test_a_cut_protocol0_payload_that_calls_is_still_a_pickle() -> None:
    head = (b"cos\nsystem\n(S'" + INERT + b"'\ntR" + b"(S'" + b"B" * 5000)[:4096]
    assert looks_like_pickle(head, complete=False)


def test_a_big_protocol0_pickle_that_builds_before_its_call_is_a_pickle() -> None:
    # __builtin__.set, then a 2000-item list: its REDUCE lies past the 4096-byte sniff window.
    data = pickle.dumps(set(range(2000)), protocol=0)
    assert len(data) > 4096 and detect_format(data[:4096], len(data)) == Format.PICKLE


def test_a_cut_head_that_breaks_before_its_last_line_is_text() -> None:
    # GLOBAL ln_0.store_1, BINGET, APPEND, then PUT of "qsmallest_2": not a number, and a
    # newline follows, so the error is a break, not the window's cut.
    data = b"cln_0\nstore_1\nheapqsmallest_2\n" + b"word\n" * 2000
    assert detect_format(data[:4096], len(data)) == Format.TEXT


def _lenient(data: bytes) -> list[tuple[str, str]]:
    sink = FindingSink("labels.txt", "hfvet-pickle")
    analyze_pickles(io.BytesIO(data), sink, Limits(), mode=ReadMode(lenient=True))
    return [(f.rule, f.severity.value) for f in sink.findings]


def test_lenient_text_that_imports_its_own_words_then_breaks_is_a_low_note() -> None:
    assert _lenient(b"cat\ndog\nbird\n") == [("pickle-text-lookalike", "low")]


def test_lenient_text_with_a_dangerous_import_before_the_break_is_not_quiet() -> None:
    findings = _lenient(b"cos\nsystem\nbird\n")  # imports os.system, then BUILD breaks
    assert ("pickle-dangerous-global", "critical") in findings
    assert ("pickle-broken-stream", "high") in findings


@pytest.mark.parametrize("name", ["MyTransformer", "Pipeline", "CustomTokenizer"])
def test_classes_of_the_pickling_script_are_unknown_not_gadgets(name: str) -> None:
    assert classify("__main__", name).verdict is Verdict.UNKNOWN


@pytest.mark.parametrize("name", ["os", "subprocess.Popen", "system", "eval", "Foo.__reduce__", "__builtins__"])
def test_what_the_loading_script_imported_is_still_judged(name: str) -> None:
    # __main__.<name> is whatever the loading script has under that name.
    assert classify("__main__", name).verdict is Verdict.DANGEROUS


def test_a_compressed_protocol0_payload_longer_than_the_sniff_is_walked_strictly() -> None:
    # gzip of a text-looking pickle: the decompressed head is cut at 4096 bytes, so a parse
    # error at its end is the cut; the stream is a pickle (strict walk), not lenient text.
    body = b"c__builtin__\nset\n((lp0\n" + b"".join(b"I%d\na" % i for i in range(2000)) + b"tR."
    sink = FindingSink("model.pkl.gz", "hfvet-pickle")
    ContainerWalker(sink, Limits()).scan(BytesBlob(gzip.compress(body[:-1] + b"\nZ")), Format.GZIP)
    assert ("pickle-broken-stream", Severity.HIGH) in {(f.rule, f.severity) for f in sink.findings}
