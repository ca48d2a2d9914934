"""A torch zip read as torch reads it: ``torch.load``'s Python unpickler, or TorchScript.

torch/serialization.py ``load``: a zip whose records (names under the first member's folder,
``PyTorchStreamReader::getAllRecords``) include ``constants.pkl`` is a TorchScript archive
(``_is_torchscript_zip``) and goes to ``torch.jit.load`` (torch >= 2.6 raises instead under
``weights_only=True``: the CVE-2025-32434 fix). ``torch.jit.load`` (torch/csrc/jit/serialization/
import.cpp) unpickles ``constants.pkl`` and ``data.pkl`` with the C++ unpickler, which resolves
only a fixed set of globals (unpickler.cpp ``readGlobal``) and every other name as a TorchScript
class compiled from the archive's ``code/`` (``SourceImporter``): no Python import, no Python call.
The lite interpreter (torch/csrc/jit/mobile/import.cpp) reads ``bytecode.pkl`` the same way.

So in a TorchScript archive what can act is the code, judged here by the operators and
TorchBind classes it names (``torchscript_code``, ``torchscript_ops``). A pickle there whose
globals are all ones the C++ unpickler resolves is handed back as read; any other global keeps the
generic engine's Python reading (an older torch on Windows split records on ``os.sep`` and
unpickled ``data.pkl`` in Python; a zip reader may disagree on the names).

In every torch zip, what torch's unpicklers trust is checked too: each storage's declared size
against its record (a larger declaration reads past the record's buffer: unchecked before torch
2.10, torch/csrc/jit/python/init.cpp ``get_storage_from_record``), and ``SETITEM(S)`` on a
non-dict (memory corruption under ``weights_only=True`` before torch 2.10, CVE-2026-24747;
_weights_only_unpickler.py ``_check_set_item_target``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from typing import BinaryIO

from app.core.findings import FindingSink, Severity
from app.core.formats import zip_reader
from app.core.formats.blobs import BytesBlob
from app.core.formats.zip_reader import ZipMember
from app.core.limits import Limits
from app.core.ports import Blob
from app.core.scanners.pickle_engine import torchscript_code
from app.core.scanners.pickle_engine import torchscript_ops as ts_ops
from app.core.scanners.pickle_engine.torch_pickle import read_torch_pickle
from app.core.scanners.pickle_engine.torch_trust import RULE_SETITEM, StorageRef
from app.core.scanners.pickle_engine.torch_unpickler import TorchPickle
from app.core.scanners.pickle_engine.torchscript_ops import OpJudgement, OpRisk

RULE_SYSTEM_OP = "torchscript-file-or-network-op"
RULE_CUSTOM_OP = "torchscript-custom-op"
RULE_REFUSED = "torchscript-refused-construct"
RULE_UNREADABLE_CODE = "torchscript-unreadable-code"
RULE_ARCHIVE = "torchscript-archive"
RULE_STORAGE_SIZE = "torch-storage-size-mismatch"
RULE_VIEW = "torchscript-tensor-out-of-bounds"

_RISK_RULES = {OpRisk.SYSTEM: (RULE_SYSTEM_OP, Severity.CRITICAL), OpRisk.CUSTOM: (RULE_CUSTOM_OP, Severity.HIGH),
               OpRisk.LIBRARY: (RULE_CUSTOM_OP, Severity.MEDIUM)}
# unpickler.cpp readGlobal: the globals the C++ unpickler resolves itself (torch.distributed.rpc.rref
# is left out: it notifies RPC peers, and the generic engine judges it).
_JIT_GLOBALS = frozenset({
    "__main__.TensorID", "__main__.IntList", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_qtensor",
    "torch._utils._rebuild_sparse_tensor", "torch._tensor._rebuild_from_type_v2", "builtins.complex",
    "collections.OrderedDict", "torch.device",
    *(f"torch.jit._pickle.{name}" for name in ("build_tensor_from_id", "restore_type_tag", "build_intlist",
                                                "build_tensorlist", "build_doublelist", "build_boollist")),
})
# Bytes per element of the storage types persistent ids name (c10 ScalarType item sizes).
ITEM_SIZES = {
    "Double": 8, "Float": 4, "Half": 2, "BFloat16": 2, "Long": 8, "Int": 4, "Short": 2, "Char": 1, "Byte": 1,
    "Bool": 1, "ComplexHalf": 4, "ComplexFloat": 8, "ComplexDouble": 16, "QInt8": 1, "QUInt8": 1, "QInt32": 4,
    "QUInt4x2": 1, "QUInt2x4": 1, "Untyped": 1, "UInt16": 2, "UInt32": 4, "UInt64": 8,
    "Float8_e5m2": 1, "Float8_e4m3fn": 1, "Float8_e5m2fnuz": 1, "Float8_e4m3fnuz": 1, "Float8_e8m0fnu": 1,
}
_JIT_PICKLES = ("constants.pkl", "bytecode.pkl")
# Where each pickle's storages live: import_read.cpp readArchiveAndTensors reads "<archive>/<key>";
# the lite interpreter shares the constants' tensors with bytecode (export_module.cpp).
_STORAGE_DIRS = {"data.pkl": ("data",), "constants.pkl": ("constants",), "bytecode.pkl": ("constants", "bytecode")}


@dataclass(frozen=True)
class _Folder:
    path: str  # the archive's top folder ("" for records at the root)
    torchscript: bool  # torch.load hands it to torch.jit.load (constants.pkl is a record)
    lite: bool  # the lite interpreter's bytecode.pkl is a record


def read_torch_archive(blob: Blob, members: list[ZipMember], sink: FindingSink, limits: Limits,
                       parent: str | None) -> frozenset[str]:
    """Judge the archive as torch reads it; return the records the generic Python reading does not
    apply to: pickles only TorchScript reads whose globals are all TorchScript's own, raw storages."""
    by_name = {m.name: m for m in members if not m.is_dir}
    reading = _Reading(blob, by_name, sink, limits, parent)
    read_as_jit: set[str] = set()
    for folder in _folders(by_name):
        if folder.torchscript or folder.lite:
            read_as_jit.update(reading.folder(folder))
    return frozenset(read_as_jit)


def _folders(by_name: dict[str, ZipMember]) -> list[_Folder]:
    tops = sorted({posixpath.dirname(n) for n in by_name if posixpath.basename(n) in ("data.pkl", *_JIT_PICKLES)})
    return [_Folder(top, _record(top, "constants.pkl") in by_name, _record(top, "bytecode.pkl") in by_name)
            for top in tops]


def _record(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


class _Reading:
    def __init__(self, blob: Blob, by_name: dict[str, ZipMember], sink: FindingSink, limits: Limits,
                 parent: str | None) -> None:
        self.blob, self.by_name, self.sink, self.limits, self.parent = blob, by_name, sink, limits, parent

    def folder(self, folder: _Folder) -> set[str]:
        """Read the pickles only the TorchScript unpicklers read (data.pkl goes to torch.load's Python
        unpickler unless constants.pkl is a record), and the code; the pickles taken over."""
        taken: set[str] = set()
        for name in ("data.pkl", *_JIT_PICKLES) if folder.torchscript else _JIT_PICKLES:
            record = _record(folder.path, name)
            if record not in self.by_name:
                continue
            read = read_torch_pickle(self._open(record), self.limits)
            self._jit_names(record, read, bytecode=name == "bytecode.pkl")
            if read.complete and all(_jit_global(g) for g in read.globals):
                taken.add(record)  # otherwise the generic reading (storages, SETITEMS included) covers it
                for ref in _first_per_key(read.storages):
                    self.storage(folder.path, name, ref)
                self._setitems(record, read)
                for fault in read.view_faults:
                    self._add(RULE_VIEW, Severity.CRITICAL, record,
                              f"a tensor {fault}: torch.jit.load's unpickler sets sizes and strides unchecked "
                              "(unpickler.cpp rebuildTensor), so the tensor reads and writes past its storage", fault)
        self._code(folder)
        # constants/<key> (and the lite interpreter's bytecode/<key>) are raw storage bytes, as data/<key>
        # are: import_read.cpp hands them to the storage, never to an unpickler.
        for sub in ("constants/", "bytecode/"):
            prefix = _record(folder.path, sub)
            taken.update(n for n in self.by_name if n.startswith(prefix) and n[len(prefix):].isdigit())
        return taken

    # -- what torch's unpicklers trust
    def storage(self, folder: str, pickle_name: str, ref: StorageRef) -> None:
        size = ITEM_SIZES.get(ref.type_name.removesuffix("Storage"))
        if size is None:
            return  # torch fails on an unknown storage type before reading any bytes
        declared = ref.numel * size
        where = _record(folder, pickle_name)
        records = [_record(folder, f"{d}/{ref.key}") for d in _STORAGE_DIRS[pickle_name]]
        present = [r for r in records if r in self.by_name]
        # A missing record fails the load, a larger one is read in part (or refused by torch >= 2.10):
        # neither reads past a buffer, so neither is a finding.
        actual = self.by_name[present[0]].size if present else declared
        if declared > actual or ref.numel < 0:  # a negative count becomes a huge size_t in C++
            self._add(RULE_STORAGE_SIZE, Severity.CRITICAL, where,
                      f"storage {ref.key!r} declares {ref.numel} x {ref.type_name} = {declared} bytes over a "
                      f"{actual}-byte record {records[0]}: torch < 2.10 reads past the record's buffer "
                      "(out-of-bounds read, memory corruption)", f"{ref.key}: declared {declared}, record {actual}")

    def _setitems(self, record: str, read: TorchPickle) -> None:
        for fault in read.setitem_faults[:20]:
            self._add(RULE_SETITEM, Severity.MEDIUM, record,
                      f"{fault.opcode} at offset {fault.pos} sets items on {fault.target}: the TorchScript "
                      "unpickler rejects it (toGenericDict), so the load fails", f"{fault.opcode}@{fault.pos}")

    # -- TorchScript
    def _jit_names(self, record: str, read: TorchPickle, bytecode: bool) -> None:
        """TorchBind classes among the globals and type tags, and (lite interpreter) operator names."""
        judged: dict[str, OpJudgement] = {}
        for name in read.globals:
            torchbind = _torchbind(name)
            if torchbind is not None:
                judged[name] = torchbind
        for text in read.strings:
            if bytecode:
                operator = ts_ops.split_operator(text)
                if operator is not None:
                    judged[text] = ts_ops.judge_op(*operator)
            for word in _torchbind_words(text):
                torchbind = _torchbind(word)
                if torchbind is not None:
                    judged[word] = torchbind
        for what in sorted(judged):
            self._judged(record, what, judged[what])

    def _code(self, folder: _Folder) -> None:
        prefix = _record(folder.path, "code/")
        files = sorted(n for n in self.by_name if n.startswith(prefix) and n.endswith(".py"))
        for name in files:
            source = self._source(name)
            if source is None:
                continue
            try:
                uses = torchscript_code.analyse(source)
            except (SyntaxError, ValueError, RecursionError) as exc:
                self._add(RULE_UNREADABLE_CODE, Severity.HIGH, name,
                          f"TorchScript code that does not parse ({exc}): what it calls was not vetted", str(exc))
                continue
            for use in uses:
                self._use(name, use)
        self._add(RULE_ARCHIVE, Severity.INFO, _record(folder.path, "code/"),
                  f"read as TorchScript ({'lite interpreter, ' if folder.lite else ''}{len(files)} code files): "
                  "torch.jit.load compiles them and imports no Python; forward() runs the operators they name",
                  f"{len(files)} code files")

    def _source(self, name: str) -> str | None:
        member = self.by_name[name]
        if member.size > self.limits.max_text_bytes:
            self._add("limit-exceeded", Severity.HIGH, name,
                      f"TorchScript code file of {member.size} bytes, over the {self.limits.max_text_bytes}-byte "
                      "read limit: not vetted", f"{member.size} bytes")
            return None
        data = self._open(name).read(self.limits.max_text_bytes + 1)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            self._add(RULE_UNREADABLE_CODE, Severity.HIGH, name, f"TorchScript code that is not UTF-8 ({exc})",
                      str(exc)[:200])
            return None

    def _use(self, name: str, use: torchscript_code.CodeUse) -> None:
        if use.judgement is None:
            self._add(RULE_REFUSED, Severity.MEDIUM, name,
                      f"line {use.line}: {use.what} ({use.refused}); torch.jit refuses it, so the load fails, but "
                      "the file was written by hand", f"line {use.line}: {use.what}")
            return
        self._judged(name, f"line {use.line}: {use.what}", use.judgement)

    def _judged(self, member: str, what: str, judgement: OpJudgement) -> None:
        rule = _RISK_RULES.get(judgement.risk)
        if rule is not None:
            self._add(rule[0], rule[1], member, f"{what}: {judgement.reason}", what)

    # -- plumbing
    def _open(self, name: str) -> BinaryIO:
        return zip_reader.open_member(self.blob, self.by_name[name], self.limits)

    def _add(self, rule: str, severity: Severity, member: str, message: str, evidence: str) -> None:
        where = member if self.parent is None else f"{self.parent}!{member}"
        self.sink.add(rule, severity, message, member=where, evidence=evidence[:300])


def check_storages(members: list[ZipMember], declared: dict[str, list[StorageRef]], sink: FindingSink,
                   parent: str | None) -> None:
    """The storages the generic (torch.load) reading of the archive's pickles declared, against their records."""
    by_name = {m.name: m for m in members if not m.is_dir}
    reading = _Reading(BytesBlob(b""), by_name, sink, Limits(), parent)
    for name in sorted(by_name):
        refs = declared.get(name if parent is None else f"{parent}!{name}")
        base = posixpath.basename(name)
        if refs and base in _STORAGE_DIRS:
            for ref in _first_per_key(refs):
                reading.storage(posixpath.dirname(name), base, ref)


def _first_per_key(refs: list[StorageRef]) -> list[StorageRef]:
    """torch loads each key once (``loaded_storages``; the C++ reader's storage context)."""
    seen: dict[str, StorageRef] = {}
    for ref in refs:
        seen.setdefault(ref.key, ref)
    return list(seen.values())


def _jit_global(dotted: str) -> bool:
    """A global the C++ unpickler resolves without Python: its fixed set, a storage type, an
    archive class (``__torch__.*``, compiled from code/), a TorchBind class."""
    if dotted in _JIT_GLOBALS or dotted.startswith("__torch__."):
        return True
    module, _, name = dotted.rpartition(".")
    return module == "torch" and name.endswith("Storage") and name.removesuffix("Storage") in ITEM_SIZES


def _torchbind(dotted: str) -> OpJudgement | None:
    parts = dotted.split(".")
    if parts[:3] == ["__torch__", "torch", "classes"] and len(parts) >= 5:
        return ts_ops.judge_class(parts[3], parts[4])
    return None


def _torchbind_words(text: str) -> Iterable[str]:
    if "__torch__.torch.classes." not in text:
        return ()
    cleaned = "".join(c if c.isalnum() or c in "._" else " " for c in text[:4096])
    return [w for w in cleaned.split() if w.startswith("__torch__.torch.classes.")]
