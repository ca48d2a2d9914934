"""TorchScript archives read as torch.jit.load reads them, and what torch's unpicklers trust in every
torch zip (storage sizes, SETITEM targets). Archives are built byte by byte (tests/corpus/torchscript_writer)."""

from __future__ import annotations

import io
import random
import zipfile
from pathlib import Path

import pytest

from app.core.findings import Finding, FindingSink, Severity
from app.core.formats.blobs import BytesBlob
from app.core.limits import Limits
from app.core.pipeline import VetOptions, vet
from app.core.scanners import all_scanners
from app.core.scanners.pickle_engine import torch_pickle, torchscript_code
from app.core.scanners.pickle_engine.torch_pickle import read_torch_pickle
from app.core.scanners.pickle_engine.torch_unpickler import TorchPickle
from app.core.scanners.pickle_engine.torchscript_ops import OpRisk
from app.core.scanners.pickle_engine.walker import ContainerWalker
from app.sources.local import LocalSource
from tests.corpus import torch_writer
from tests.corpus import torchscript as corpus
from tests.corpus import torchscript_writer as ts
from tests.corpus.registry import Case, all_cases

CASES = [c for c in all_cases() if c.family == "torchscript" or c.name.startswith("torchscript-")]


def walk(data: bytes) -> list[Finding]:
    sink = FindingSink("model.pt", "hfvet-pickle")
    ContainerWalker(sink, Limits()).scan(BytesBlob(data), "pytorch-zip")
    return sink.findings


def serious(findings: list[Finding]) -> set[tuple[str, str | None]]:
    return {(f.rule, f.member) for f in findings if f.severity.rank >= Severity.MEDIUM.rank}


@pytest.mark.parametrize("case", CASES, ids=[c.key for c in CASES])
def test_case_through_all_scanners(case: Case, tmp_path: Path) -> None:
    report = vet(LocalSource(case.write(tmp_path / "repo")), all_scanners(), options=VetOptions(workers=1))
    if case.kind == "hostile":
        fired = [f for f in report.findings if f.rule == case.rule]
        assert fired and max(f.severity.rank for f in fired) >= Severity.HIGH.rank, sorted(
            {f.rule for f in report.findings})
    else:
        assert {(f.rule, f.severity) for f in report.findings if f.severity.rank >= Severity.MEDIUM.rank} == set()
        assert "torchscript-archive" in {f.rule for f in report.findings}


def test_the_families_cover_the_issue() -> None:
    assert {c.name for c in CASES if c.kind == "hostile"} >= {
        "code-writes-file", "code-reads-file", "custom-op-with-library", "storage-larger-than-record",
        "setitems-on-a-list", "pickle-imports-os-system", "tensor-view-past-storage"}


# -- the archive
def test_benign_archive_pickles_are_read_as_torchscript_not_as_python() -> None:
    # Before: __torch__.Net was a critical dunder gadget, torch.jit._pickle.build_intlist a dangerous module.
    assert serious(walk(corpus.scripted_net())) == set()
    assert serious(walk(corpus.lite_net())) == set()


@pytest.mark.advisory("CVE-2025-32434")
def test_a_file_write_in_the_code_is_critical_and_names_the_line() -> None:
    found = [f for f in walk(corpus.file_write_code()) if f.rule == "torchscript-file-or-network-op"]
    assert [(f.severity, f.member) for f in found] == [(Severity.CRITICAL, "model/code/__torch__.py")]
    assert "line 16: torch.save" in (found[0].evidence or "")


def test_torch_load_reads_data_pkl_in_python_when_constants_pkl_is_missing() -> None:
    # torch/serialization.py _is_torchscript_zip looks for constants.pkl only: without it torch.load
    # unpickles data.pkl in Python, where __torch__ is an import (of a module that is not there).
    records = corpus._net_records()
    del records["constants.pkl"]
    records["bytecode.pkl"] = ts.bytecode_pkl("__torch__.Net.forward", ["aten::linear"])
    found = serious(walk(ts.archive("model", records)))
    assert ("pickle-dangerous-global", "model/data.pkl") in found


def test_a_broken_torchscript_pickle_keeps_the_python_reading() -> None:
    records = corpus._net_records()
    records["data.pkl"] = records["data.pkl"][:-1]  # no STOP: the reading cannot vouch for the whole stream
    assert ("pickle-broken-stream", "model/data.pkl") in serious(walk(ts.archive("model", records)))


@pytest.mark.advisory("CVE-2025-32434")
def test_bytecode_operators_are_judged_like_code() -> None:
    # torch/csrc/jit/mobile/import.cpp: the lite interpreter resolves bytecode.pkl's operator names.
    records = corpus._net_records()
    records["bytecode.pkl"] = ts.bytecode_pkl("__torch__.Net.forward", ["aten::linear", "aten::save",
                                                                         "torchvision::nms", "acme::run"])
    found = {(f.rule, f.severity, f.evidence) for f in walk(ts.archive("model", records))}
    assert ("torchscript-file-or-network-op", Severity.CRITICAL, "aten::save") in found
    assert ("torchscript-custom-op", Severity.MEDIUM, "torchvision::nms") in found
    assert ("torchscript-custom-op", Severity.HIGH, "acme::run") in found
    assert not any(e == "aten::linear" for _, _, e in found)


def test_a_torchbind_class_in_the_pickle_is_native_code() -> None:
    # unpickler.cpp readGlobal -> type_resolver_: __torch__.torch.classes.<ns>.<C> is a TorchBind
    # class; its __setstate__ is C++ from whatever library registered <ns>.
    records = corpus._net_records()
    records["data.pkl"] = ts.pickle_of(corpus._module(
        "__torch__.Net", packed=ts.obj("__torch__.torch.classes.acme.Packed", blob=ts.string("x")),
        quant=ts.obj("__torch__.torch.classes.quantized.LinearPackedParamsBase")))
    found = {(f.rule, f.severity, f.evidence) for f in walk(ts.archive("model", records))}
    assert ("torchscript-custom-op", Severity.HIGH, "__torch__.torch.classes.acme.Packed") in found
    assert not any("quantized" in (e or "") for _, _, e in found)


def test_a_nested_torchscript_archive_names_its_path() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("bundle/model.pt", corpus.file_write_code())
    sink = FindingSink("bundle.zip", "hfvet-pickle")
    ContainerWalker(sink, Limits()).scan(BytesBlob(out.getvalue()), "zip")
    assert ("torchscript-file-or-network-op", "bundle/model.pt!model/code/__torch__.py") in serious(sink.findings)


def test_code_that_does_not_parse_is_not_silently_passed() -> None:
    records = corpus._net_records()
    records["code/__torch__.py"] = b"class Net(Module:\n"
    assert ("torchscript-unreadable-code", "model/code/__torch__.py") in serious(walk(ts.archive("model", records)))


# -- the code
def _uses(source: str) -> dict[str, tuple[OpRisk | None, str]]:
    return {u.what: (u.judgement.risk if u.judgement else None, u.refused) for u in torchscript_code.analyse(source)}


def test_methods_of_the_archive_are_not_operators_but_tensor_methods_are() -> None:
    source = """
class M(Module):
  def save(self: __torch__.M, x: Tensor) -> Tensor:
    return x
  def forward(self: __torch__.M, x: Tensor) -> Tensor:
    _0 = (self).save(x, )
    _1 = x.from_file("/etc/passwd")
    return ops.aten.save(_0, "/tmp/x")
"""
    uses = _uses(source)
    assert "<value>.save(...)" not in uses  # M.save, defined above
    assert uses["<value>.from_file(...)"][0] is OpRisk.SYSTEM
    assert uses["ops.aten.save"][0] is OpRisk.SYSTEM


def test_namespaces_decide_custom_ops() -> None:
    source = """
def f(x: Tensor) -> Tensor:
    _0 = ops.torchvision.nms(x, x, 0.5)
    _1 = ops.my_ext.fused(x)
    _2 = ops.quantized.linear(x, x)
    _3 = ops.c10d.allreduce_([x])
    _4 = torch.distributed.rpc.rpc_async("worker1", "__torch__.f", (x,))
    _5 = ops.prim.rpc_sync("worker1", "__torch__.f", (x,))
    obj = torch.classes.acme.Thing()
    return torch.relu(x)
"""
    uses = _uses(source)
    assert uses["ops.torchvision.nms"][0] is OpRisk.LIBRARY
    assert uses["ops.my_ext.fused"][0] is OpRisk.CUSTOM
    assert uses["ops.quantized.linear"][0] is OpRisk.BUILTIN
    assert uses["ops.c10d.allreduce_"][0] is OpRisk.SYSTEM
    assert uses["torch.distributed.rpc.rpc_async"][0] is OpRisk.SYSTEM
    assert uses["ops.prim.rpc_sync"][0] is OpRisk.SYSTEM
    assert uses["torch.classes.acme.Thing"][0] is OpRisk.CUSTOM
    assert "torch.relu" not in uses


def test_python_only_constructs_are_refused_constructs() -> None:
    source = """
import os
os.system("echo pwned")
def f(x: Tensor) -> Tensor:
    _0 = open("/etc/passwd")
    return x.__class__
"""
    refused = {what: why for what, (risk, why) in _uses(source).items() if risk is None}
    assert set(refused) == {"Expr", "open(...)", "x.__class__"}


# -- what torch's unpicklers trust
def _read(data: bytes) -> TorchPickle:
    return read_torch_pickle(io.BytesIO(data), Limits())


def test_storages_are_read_from_persistent_ids() -> None:
    read = _read(ts.pickle_of(ts.typed_list("List[Tensor]", ts.tensor("7", (3, 4), "Double"),
                                            ts.tensor("8", (2,), numel=-1))))
    assert [(s.key, s.type_name, s.numel) for s in read.storages] == [
        ("7", "DoubleStorage", 12), ("8", "FloatStorage", -1)]
    assert read.complete and read.setitem_faults == []


@pytest.mark.parametrize(("target", "fault"), [
    (b"](K\x01e", "a list"), (b")", "a tuple"), (b"K\x05", "a constant"),
    (b"(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x01tQ", "a storage"),
])
def test_setitems_on_a_non_dict_is_seen(target: bytes, fault: str) -> None:
    data = b"\x80\x02" + target + b"q\x00" + b"0" + b"h\x00" + b"(K\x00K\x01u."  # via the memo, as BINGET
    assert [f.target for f in _read(data).setitem_faults] == [fault]


@pytest.mark.parametrize("target", [b"}", b"(d", b"ccollections\nOrderedDict\n)R", b"c__main__\nUserDict\n)R",
                                    b"ctorch.fx.immutable_collections\nimmutable_dict\n)\x81"])
def test_setitems_on_a_dict_or_an_unknown_class_is_not_a_fault(target: bytes) -> None:
    data = b"\x80\x02" + target + b"(K\x00K\x01u" + b"K\x02K\x03s."
    assert _read(data).setitem_faults == []


def test_a_setitem_fault_is_medium_where_only_the_torchscript_unpickler_reads() -> None:
    # unpickler.cpp SETITEMS: toGenericDict() on a non-dict throws; torch.load never reads it in Python.
    records = corpus._net_records()
    records["constants.pkl"] = b"\x80\x02](K\x01e(K\x00K\x01u."
    found = [f for f in walk(ts.archive("model", records)) if f.rule == "torch-setitem-non-dict"]
    assert [(f.severity, f.member) for f in found] == [(Severity.MEDIUM, "model/constants.pkl")]


def test_storage_size_is_checked_against_the_record() -> None:
    records = corpus._net_records()
    records["data/2"] = records["data/2"][:-1]  # one byte short of 2 x 8 floats
    found = [f for f in walk(ts.archive("model", records)) if f.rule == "torch-storage-size-mismatch"]
    assert [(f.severity, f.evidence) for f in found] == [(Severity.CRITICAL, "2: declared 64, record 63")]
    records = corpus._net_records()
    records["data/2"] += b"\x00" * 8  # larger than declared: read in part, never past the buffer
    records.pop("data/3")  # missing: the load fails
    assert not [f for f in walk(ts.archive("model", records)) if f.rule == "torch-storage-size-mismatch"]


def test_a_constant_storage_is_checked_in_the_constants_folder() -> None:
    # import_read.cpp readArchiveAndTensors: constants.pkl's storages are read from "constants/<key>".
    records = {"data.pkl": ts.pickle_of(ts.obj("__torch__.PlaceholderModule", training=ts.boolean(True))),
               "constants.pkl": ts.pickle_of(lambda p: p.tuple_(ts.tensor("0", (3,), numel=300))),
               "constants/0": ts.raw_storage((3,)), "data/0": ts.raw_storage((300,)),
               "code/__torch__.py": b"class PlaceholderModule(Module):\n  training : bool\n"}
    found = [f for f in walk(ts.archive("f", records)) if f.rule == "torch-storage-size-mismatch"]
    assert [(f.severity, f.member, f.evidence) for f in found] == [
        (Severity.CRITICAL, "f/constants.pkl", "0: declared 1200, record 12")]


# -- the same trust, in the generic engine's torch.load reading (ordinary torch zips, legacy checkpoints)
def _state_dict_zip(truncate: int = 0) -> bytes:
    """torch.save({"w": tensor}) as torch_writer lays it out, its storage record cut by ``truncate`` bytes."""
    data = torch_writer.save_zip({"w": torch_writer.Tensor((4, 4))}, "pytorch_model")
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            body = src.read(info)
            dst.writestr(info.filename, body[: len(body) - truncate] if info.filename.endswith("data/0") else body)
    return out.getvalue()


def test_torch_load_storages_are_checked_from_the_generic_reading() -> None:
    # torch/serialization.py _load.persistent_load: numel * itemsize bytes of "data/<key>".
    assert [f for f in walk(_state_dict_zip()) if f.rule == "torch-storage-size-mismatch"] == []
    found = [f for f in walk(_state_dict_zip(truncate=4)) if f.rule == "torch-storage-size-mismatch"]
    assert [(f.severity, f.member, f.evidence) for f in found] == [
        (Severity.CRITICAL, "pytorch_model/data.pkl", "0: declared 64, record 60")]


@pytest.mark.advisory("CVE-2026-24747")
@pytest.mark.parametrize(("target", "fault"), [
    # a storage from persistent_load, then SETITEMS on it (the CVE-2026-24747 shape)
    (b"(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuK\x04tQ", "a storage"),
    (b"](K\x01e", "a list"),
    (b"ctorch._utils\n_rebuild_tensor_v2\n(K\x00tR", "a tensor"),
])
def test_setitems_on_a_non_dict_is_critical_where_torch_load_reads(target: bytes, fault: str) -> None:
    # torch/_weights_only_unpickler.py load() SETITEMS before _check_set_item_target (torch 2.10).
    pickle = b"\x80\x02" + target + b"(K\x00K\x01u."
    data = ts.archive("pytorch_model", {"data.pkl": pickle, "data/0": bytes(16)})
    found = [f for f in walk(data) if f.rule == "torch-setitem-non-dict"]
    assert [f.severity for f in found] == [Severity.CRITICAL] and fault in found[0].message


@pytest.mark.parametrize(("name", "expected"), [("data.pkl", []), ("model.pt", [Severity.CRITICAL]),
                                              ("pytorch_model.bin", [Severity.CRITICAL])])
def test_setitems_in_a_bare_pickle_counts_where_torch_load_is_pointed(name: str, expected: list[Severity]) -> None:
    # pickle.load of a bare .pkl: list[0] = 1 is an IndexError, not memory corruption. torch.load of a
    # non-zip .pt runs _legacy_load, whose first unpickle (the "magic number") is the weights_only one.
    sink = FindingSink(name, "hfvet-pickle")
    ContainerWalker(sink, Limits()).scan(BytesBlob(b"\x80\x02](K\x01e(K\x00K\x01u."), "pickle", name)
    assert [f.severity for f in sink.findings if f.rule == "torch-setitem-non-dict"] == expected


@pytest.mark.advisory("CVE-2026-24747")
def test_setitems_on_a_list_in_a_legacy_checkpoint_is_critical() -> None:
    # torch/serialization.py _legacy_load unpickles the object with the same weights_only Unpickler.
    import pickle

    head = b"".join(pickle.dumps(v, protocol=2) for v in (
        torch_writer.TORCH_MAGIC, torch_writer.PROTOCOL_VERSION,
        {"protocol_version": torch_writer.PROTOCOL_VERSION, "little_endian": True,
         "type_sizes": {"short": 2, "int": 4, "long": 4}}))
    data = head + b"\x80\x02}](K\x01e(K\x00K\x01u0." + pickle.dumps([], protocol=2)
    sink = FindingSink("pytorch_model.bin", "hfvet-pickle")
    ContainerWalker(sink, Limits()).scan(BytesBlob(data), "torch-legacy")
    assert [f.severity for f in sink.findings if f.rule == "torch-setitem-non-dict"] == [Severity.CRITICAL]


def _both_ways(data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[TorchPickle, TorchPickle]:
    fast = read_torch_pickle(io.BytesIO(data), Limits())
    monkeypatch.setattr(torch_pickle, "FAST_BYTES", 1)  # the streaming reader (pickles over 8 MiB)
    streamed = read_torch_pickle(io.BytesIO(data), Limits())
    monkeypatch.undo()
    return fast, streamed


def test_the_in_memory_and_streaming_readers_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    fast, streamed = _both_ways(corpus._net_data(), monkeypatch)
    assert fast == streamed and fast.complete and len(fast.storages) == 4


@pytest.mark.parametrize("seed", range(40))
def test_the_reader_never_raises_on_mangled_pickles(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Fail closed: a stream the reader cannot follow is "not complete" (the generic reading then covers it).
    rng = random.Random(seed)
    data = bytearray(corpus._net_data())
    for _ in range(rng.randint(1, 8)):
        data[rng.randrange(len(data))] = rng.randrange(256)
    cut = bytes(data[: rng.randint(0, len(data))]) if seed % 3 == 0 else bytes(data)
    for read in _both_ways(cut, monkeypatch):
        assert read.complete or read.problem


def test_a_view_within_its_storage_is_not_a_fault() -> None:
    assert _read(corpus._net_data()).view_faults == []
    strided = ts.pickle_of(ts.tensor("0", (4, 4), numel=16))
    assert _read(strided).view_faults == []
    found = _read(ts.pickle_of(ts.tensor("0", (4, 4), numel=15))).view_faults
    assert found == ["offset 0, sizes (4, 4), strides (4, 1) reach element 16 of a 15-element storage (at offset 142)"]


def test_constant_storages_are_raw_bytes_not_pickles() -> None:
    # import_read.cpp: constants/<key> becomes a storage's bytes; nothing unpickles it (as data/<key>).
    records = corpus._net_records()
    records["constants/0"] = b"\x80\x02cos\nsystem\nX\x0a\x00\x00\x00echo pwned\x85R."
    assert serious(walk(ts.archive("model", records))) == set()
    records["extra/0"] = records.pop("constants/0")  # any other record is still vetted
    assert ("pickle-dangerous-global", "model/extra/0") in serious(walk(ts.archive("model", records)))
