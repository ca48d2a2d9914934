"""What torch's unpicklers trust a pickle for, read from the engine's symbolic values.

- A persistent id ``('storage', <storage type>, key, location, numel)`` (torch/serialization.py
  ``_load.persistent_load``, torch/csrc/jit/serialization/unpickler.cpp ``BINPERSID``) makes a
  storage of ``numel * itemsize`` bytes over the record ``<dir>/<key>``: torch < 2.10 never checked
  the record held that many (torch/csrc/jit/python/init.cpp ``get_storage_from_record``, PR 170085).
- ``SETITEM``/``SETITEMS`` ran ``stack[-1][k] = v`` on any target in torch.load's weights_only
  unpickler until torch 2.10 (CVE-2026-24747; ``_weights_only_unpickler._check_set_item_target``
  now accepts only dict, OrderedDict and Counter): on a storage or tensor that is memory corruption.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.scanners.pickle_engine.values import Call, Const, GlobalRef, ListVal, Persistent, TupleVal, Value

RULE_SETITEM = "torch-setitem-non-dict"  # critical where torch.load reads it, medium in TorchScript

# torch's tensor rebuild helpers: their result is a tensor (torch/_utils.py, torch/_tensor.py).
TENSOR_PREFIXES = ("torch._utils._rebuild_", "torch._tensor._rebuild_")


@dataclass(frozen=True)
class StorageRef:
    """One ``persistent_load`` of a storage: the bytes torch will read from ``<dir>/<key>``."""

    key: str
    type_name: str  # e.g. FloatStorage, UntypedStorage
    numel: int
    pos: int


def storage_ref(pid: Value, pos: int) -> StorageRef | None:
    """The storage a persistent id names, when it is torch's storage tuple."""
    if not isinstance(pid, TupleVal) or len(pid.items) < 5:
        return None
    kind, storage, key, _location, numel = pid.items[:5]
    type_name = storage.name if isinstance(storage, GlobalRef) else None
    if not (isinstance(kind, Const) and kind.value == "storage" and type_name and isinstance(key, Const)
            and isinstance(key.value, str) and isinstance(numel, Const) and type(numel.value) is int):
        return None
    return StorageRef(key.value, type_name.rsplit(".", 1)[-1], numel.value, pos)


def non_dict_target(target: Value) -> str | None:
    """What a SETITEM(S) target is when it is known not to be a dict (None: a dict, or unknown).
    An instance of any class may be of a dict subclass (protocol 2 pickles one as NEWOBJ, then
    SETITEMS): the engine judges those (pickle-object-mutation); an imported global is
    pickle-global-mutation already."""
    if isinstance(target, Persistent):
        return "a storage (persistent_load's result)"
    if isinstance(target, ListVal):
        return "a list or set"
    if isinstance(target, TupleVal):
        return "a tuple"
    if isinstance(target, Const):
        return f"a constant ({type(target.value).__name__})"
    if isinstance(target, Call) and isinstance(target.root, GlobalRef) and target.depth == 1 \
            and target.root.dotted.startswith(TENSOR_PREFIXES):
        return f"a tensor ({target.root.dotted})"
    return None
