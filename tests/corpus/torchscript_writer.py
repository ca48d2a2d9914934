"""TorchScript archives (``torch.jit.save``) and lite-interpreter archives, written without torch.

Read from torch/csrc/jit/serialization: ``export_module.cpp`` writes ``<top>/data.pkl`` (the module
object), ``<top>/constants.pkl`` (a tuple of the code's tensor constants), ``<top>/code/**/*.py``
(the module's TorchScript, printed by ``python_print.cpp``), ``<top>/data/<key>`` and
``<top>/constants/<key>`` (raw storages), ``<top>/version``, ``<top>/extra/*``;
``_save_for_lite_interpreter`` adds ``<top>/bytecode.pkl`` (the lite interpreter's instructions
and operator names). The pickles are protocol 2, written by ``pickler.cpp``:

- an object: ``GLOBAL '__torch__.<qualifier> <Class>'``, ``EMPTY_TUPLE``, ``NEWOBJ``, then its
  attributes as ``EMPTY_DICT MARK (name value)* SETITEMS``, then ``BUILD``;
- a tensor (``pushLiteralTensor``): ``GLOBAL 'torch._utils _rebuild_tensor_v2'``, ``MARK``, the
  storage as ``MARK 'storage' GLOBAL 'torch <Scalar>Storage' key 'cpu' numel TUPLE BINPERSID``,
  offset, sizes, strides, requires_grad, ``collections.OrderedDict()``, ``TUPLE REDUCE``;
- a typed list: ``GLOBAL 'torch.jit._pickle build_intlist'`` (or ``restore_type_tag``) reducing
  a tuple that holds the list;
- every global and string is memoized (``BINPUT``) and repeated through ``BINGET``.
"""

from __future__ import annotations

import io
import struct
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field

ITEM_SIZES = {"Float": 4, "Double": 8, "Half": 2, "Long": 8, "Int": 4, "Byte": 1, "Bool": 1}
Writes = Callable[["Pickle"], object]


@dataclass
class Pickle:
    """A protocol-2 stream, opcode by opcode, memoizing globals and strings as pickler.cpp does."""

    out: bytearray = field(default_factory=lambda: bytearray(b"\x80\x02"))
    memo: dict[object, int] = field(default_factory=dict)

    def raw(self, data: bytes) -> Pickle:
        self.out += data
        return self

    def _put(self, key: object) -> None:
        self.memo[key] = len(self.memo)
        self.out += b"q" + bytes([self.memo[key]]) if self.memo[key] < 256 else b"r" + struct.pack("<I", self.memo[key])

    def _get(self, key: object) -> bool:
        if key not in self.memo:
            return False
        index = self.memo[key]
        self.out += b"h" + bytes([index]) if index < 256 else b"j" + struct.pack("<I", index)
        return True

    def global_(self, module: str, name: str) -> Pickle:
        if not self._get(("global", module, name)):
            self.out += f"c{module}\n{name}\n".encode()
            self._put(("global", module, name))
        return self

    def string(self, text: str) -> Pickle:
        if not self._get(("str", text)):
            data = text.encode()
            self.out += b"X" + struct.pack("<I", len(data)) + data
            self._put(("str", text))
        return self

    def int_(self, n: int) -> Pickle:
        if 0 <= n < 256:
            self.out += b"K" + bytes([n])
        elif 0 <= n < 65536:
            self.out += b"M" + struct.pack("<H", n)
        elif -(2**31) <= n < 2**31:
            self.out += b"J" + struct.pack("<i", n)
        else:
            self.out += b"\x8a\x08" + struct.pack("<q", n)  # LONG1 with 8 bytes, as pushInt does
        return self

    def bool_(self, value: bool) -> Pickle:
        self.out += b"\x88" if value else b"\x89"
        return self

    def tuple_(self, *items: Writes) -> Pickle:
        if not items:
            self.out += b")"
            return self
        self.out += b"("
        for write in items:
            write(self)
        self.out += b"t"
        return self

    def stop(self) -> bytes:
        return bytes(self.out + b".")


def obj(cls: str, **attrs: Writes) -> Writes:
    """A TorchScript object of class ``cls`` (``__torch__...``) with its attributes."""
    module, name = cls.rsplit(".", 1)

    def write(p: Pickle) -> None:
        p.global_(module, name).raw(b")\x81}(")
        for key, value in attrs.items():
            p.string(key)
            value(p)
        p.raw(b"ub")

    return write


def string(text: str) -> Writes:
    return lambda p: p.string(text)


def integer(n: int) -> Writes:
    return lambda p: p.int_(n)


def boolean(value: bool) -> Writes:
    return lambda p: p.bool_(value)


def none(p: Pickle) -> None:
    p.raw(b"N")


def tensor(key: str, shape: tuple[int, ...], scalar: str = "Float", numel: int | None = None) -> Writes:
    """``pushLiteralTensor``; ``numel`` is the count the persistent id declares (the real one by default)."""
    count = 1
    for dim in shape:
        count *= dim
    declared = count if numel is None else numel
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]

    def write(p: Pickle) -> None:
        p.global_("torch._utils", "_rebuild_tensor_v2").raw(b"(")
        p.raw(b"(").string("storage").global_("torch", f"{scalar}Storage").string(key).string("cpu")
        p.int_(declared).raw(b"tQ")  # TUPLE, BINPERSID
        p.int_(0).tuple_(*(integer(d) for d in shape)).tuple_(*(integer(s) for s in strides)).bool_(False)
        p.global_("collections", "OrderedDict").raw(b")R")
        p.raw(b"tR")

    return write


def int_list(*values: int) -> Writes:
    """A ``List[int]`` attribute: ``torch.jit._pickle.build_intlist((values,))``."""

    def write(p: Pickle) -> None:
        p.global_("torch.jit._pickle", "build_intlist").raw(b"(]")
        if values:
            p.raw(b"(")
            for v in values:
                p.int_(v)
            p.raw(b"e")
        p.raw(b"tR")

    return write


def typed_list(type_str: str, *items: Writes) -> Writes:
    """A list tagged with its static type: ``restore_type_tag(list, 'List[Tensor]')``."""

    def write(p: Pickle) -> None:
        p.global_("torch.jit._pickle", "restore_type_tag").raw(b"(]")
        if items:
            p.raw(b"(")
            for item in items:
                item(p)
            p.raw(b"e")
        p.string(type_str).raw(b"tR")

    return write


def pickle_of(value: Writes) -> bytes:
    p = Pickle()
    value(p)
    return p.stop()


def raw_storage(shape: tuple[int, ...], scalar: str = "Float") -> bytes:
    count = 1
    for dim in shape:
        count *= dim
    return bytes(count * ITEM_SIZES[scalar])


def debug_pkl(path: str, text: str) -> bytes:
    """``<file>.py.debug_pkl``: source ranges, tuples of ints and strings (no globals)."""
    entry = lambda p: p.tuple_(integer(0), lambda q: q.tuple_(string(text), string(path), integer(0)),  # noqa: E731
                               integer(1))
    return pickle_of(lambda p: p.tuple_(entry))


def archive(top: str, records: dict[str, bytes]) -> bytes:
    """A zip laid out as PyTorchStreamWriter writes it: every record under ``<top>/``, stored."""
    members = {f"{top}/version": b"3\n", **{f"{top}/{name}": data for name, data in records.items()},
               f"{top}/.data/version": b"3\n", f"{top}/byteorder": b"little",
               f"{top}/.data/serialization_id": b"1234567890123456789012"}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return out.getvalue()


def bytecode_pkl(method: str, operators: list[str]) -> bytes:
    """``bytecode.pkl`` of the lite interpreter (export_bytecode.cpp): the bytecode version, then per
    method ``(name, (('instructions', ...), ('operators', ((name, overload, nargs), ...)), ...))``."""
    instructions = lambda p: p.tuple_(  # noqa: E731
        string("instructions"), lambda q: q.tuple_(*(
            (lambda r, i=i: r.tuple_(string("OP"), integer(i), integer(0))) for i in range(len(operators))
        )))
    ops = lambda p: p.tuple_(string("operators"), lambda q: q.tuple_(*(  # noqa: E731
        (lambda r, name=name: r.tuple_(string(name.split(".")[0]), string(".".join(name.split(".")[1:])),
                                       integer(2))) for name in operators)))
    body = lambda p: p.tuple_(instructions, ops, lambda q: q.tuple_(string("constants"),  # noqa: E731
                                                                  lambda r: r.tuple_()),
                              lambda q: q.tuple_(string("register_size"), integer(2)))
    return pickle_of(lambda p: p.tuple_(integer(8), lambda q: q.tuple_(string(method), body)))
