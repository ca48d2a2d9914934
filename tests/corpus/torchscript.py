"""TorchScript archives read as ``torch.jit.load`` reads them (issue 22 item 2).

Benign: what ``torch.jit.save`` / ``_save_for_lite_interpreter`` write for ordinary modules (a
conv + linear net, a scripted function, a lite-interpreter ``.ptl``). Hostile: TorchScript code
that calls ``aten::save`` / ``aten::from_file`` (file write / read, the CVE-2025-32434 chain),
a custom op whose native library the repo ships, a storage whose declared size exceeds its record, a
tensor view past its storage,
``SETITEMS`` on a list, and a TorchScript archive whose pickle also imports ``os.system``.
See tests/corpus/torchscript_writer.py for the layout.
"""

from __future__ import annotations

from tests.corpus import torchscript_writer as ts
from tests.corpus.registry import Case, register_all

_LINEAR_CODE = """\
class Linear(Module):
  __parameters__ = ["weight", "bias", ]
  __buffers__ = []
  weight : Tensor
  bias : Tensor
  training : bool
  _is_full_backward_hook : Optional[bool]
  in_features : Final[int] = 8
  out_features : Final[int] = 2
  def forward(self: __torch__.torch.nn.modules.linear.Linear,
    input: Tensor) -> Tensor:
    weight = self.weight
    bias = self.bias
    return torch.linear(input, weight, bias)
"""
_CONV_CODE = """\
class Conv2d(Module):
  __parameters__ = ["weight", "bias", ]
  __buffers__ = []
  weight : Tensor
  bias : Optional[Tensor]
  training : bool
  _is_full_backward_hook : Optional[bool]
  transposed : bool
  _reversed_padding_repeated_twice : List[int]
  out_channels : Final[int] = 2
  kernel_size : Final[Tuple[int, int]] = (1, 1)
  in_channels : Final[int] = 1
  padding_mode : Final[str] = "zeros"
  dilation : Final[Tuple[int, int]] = (1, 1)
  stride : Final[Tuple[int, int]] = (1, 1)
  padding : Final[Tuple[int, int]] = (0, 0)
  groups : Final[int] = 1
  output_padding : Final[Tuple[int, int]] = (0, 0)
  def forward(self: __torch__.torch.nn.modules.conv.Conv2d,
    input: Tensor) -> Tensor:
    weight = self.weight
    bias = self.bias
    _0 = (self)._conv_forward(input, weight, bias, )
    return _0
  def _conv_forward(self: __torch__.torch.nn.modules.conv.Conv2d,
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor]) -> Tensor:
    _1 = torch.conv2d(input, weight, bias, [1, 1], [0, 0], [1, 1])
    return _1
"""
_NET_CODE = """\
class Net(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  _is_full_backward_hook : Optional[bool]
  conv : __torch__.torch.nn.modules.conv.Conv2d
  fc : __torch__.torch.nn.modules.linear.Linear
  def forward(self: __torch__.Net,
    x: Tensor) -> Tensor:
    conv = self.conv
    _0 = torch.relu((conv).forward(x, ))
    _1 = torch.flatten(_0, 1)
    fc = self.fc
    _2 = torch.softmax((fc).forward(_1, ), -1)
    if bool(torch.gt(torch.sum(_2), 0)):
      print("ok")
    else:
      pass
    return _2
"""


def _module(cls: str, **extra: ts.Writes) -> ts.Writes:
    return ts.obj(cls, training=ts.boolean(False), _is_full_backward_hook=ts.none, **extra)


def _net_data() -> bytes:
    conv = _module("__torch__.torch.nn.modules.conv.Conv2d", weight=ts.tensor("0", (2, 1, 1, 1)),
                   bias=ts.tensor("1", (2,)), transposed=ts.boolean(False),
                   _reversed_padding_repeated_twice=ts.int_list(0, 0, 0, 0))
    fc = _module("__torch__.torch.nn.modules.linear.Linear", weight=ts.tensor("2", (2, 8)),
                 bias=ts.tensor("3", (2,)))
    return ts.pickle_of(_module("__torch__.Net", conv=conv, fc=fc))


def _net_records(net_code: str = _NET_CODE) -> dict[str, bytes]:
    shapes = {"0": (2, 1, 1, 1), "1": (2,), "2": (2, 8), "3": (2,)}
    return {
        "data.pkl": _net_data(),
        "constants.pkl": ts.pickle_of(lambda p: p.tuple_()),
        "code/__torch__.py": net_code.encode(),
        "code/__torch__.py.debug_pkl": ts.debug_pkl("code/__torch__.py", net_code),
        "code/__torch__/torch/nn/modules/conv.py": _CONV_CODE.encode(),
        "code/__torch__/torch/nn/modules/linear.py": _LINEAR_CODE.encode(),
        **{f"data/{key}": ts.raw_storage(shape) for key, shape in shapes.items()},
        "extra/model_info.json": b'{"name": "net", "inputs": [[1, 1, 2, 4]]}',
    }


def scripted_net() -> bytes:
    """``torch.jit.save(torch.jit.script(Net()), "model.pt")``: conv, relu, linear, softmax."""
    return ts.archive("model", _net_records())


_FUNCTION_CODE = """\
def scaled_tanh(x: Tensor,
    scale: float=2.) -> Tensor:
    _0 = torch.mul(torch.tanh(x), scale)
    return torch.add(_0, CONSTANTS.c0)
"""


def scripted_function() -> bytes:
    """``torch.jit.save(torch.jit.script(scaled_tanh))``: a function wrapped in a module whose
    tensor constant lives in constants.pkl and ``constants/0``."""
    records = {
        "data.pkl": ts.pickle_of(ts.obj("__torch__.PlaceholderModule", training=ts.boolean(True))),
        "constants.pkl": ts.pickle_of(lambda p: p.tuple_(ts.tensor("0", (3,)))),
        "constants/0": ts.raw_storage((3,)),
        "code/__torch__.py": f"class PlaceholderModule(Module):\n  __parameters__ = []\n  __buffers__ = []\n"
                             f"  training : bool\n{_FUNCTION_CODE}".encode(),
    }
    return ts.archive("scaled_tanh", records)


def lite_net() -> bytes:
    """``model._save_for_lite_interpreter("model.ptl")``: the TorchScript archive plus bytecode.pkl,
    whose operator table the lite interpreter resolves (torch/csrc/jit/mobile/import.cpp)."""
    records = _net_records()
    records["bytecode.pkl"] = ts.bytecode_pkl("__torch__.Net.forward", [
        "aten::conv2d", "aten::relu", "aten::flatten.using_ints", "aten::linear", "aten::softmax.int",
        "prim::Print"])
    return ts.archive("model", records)


# -- hostile
_WRITE_FILE_CODE = _NET_CODE.replace(
    '      print("ok")', '      torch.save(_2, "/home/user/.bashrc")')
_READ_FILE_CODE = _NET_CODE.replace(
    '      print("ok")', '      _3 = torch.from_file("/etc/passwd", False, 100, dtype=0)')
_CUSTOM_OP_CODE = _NET_CODE.replace('    _1 = torch.flatten(_0, 1)', '    _1 = ops.acme_ext.fused_flatten(_0, 1)')


def file_write_code() -> bytes:
    # torch/csrc/jit/runtime/register_prim_ops_fulljit.cpp: "aten::save(t item, str filename)"
    # pickles the value and writes it to filename with std::fstream (CVE-2025-32434 wrote files so).
    return ts.archive("model", _net_records(_WRITE_FILE_CODE))


def file_read_code() -> bytes:
    # aten/src/ATen/native/TensorFactories.cpp from_file: maps filename into a tensor's storage.
    return ts.archive("model", _net_records(_READ_FILE_CODE))


def custom_op_files() -> dict[str, bytes]:
    # import_source.cpp resolves ``ops.<ns>.<op>`` against registered operators: an op outside
    # torch's own namespaces only loads after torch.ops.load_library of the native code shipped here.
    return {"model.pt": ts.archive("model", _net_records(_CUSTOM_OP_CODE)),
            "libacme_ext.so": b"\x7fELF\x02\x01\x01" + bytes(57),
            "README.md": b"torch.ops.load_library('libacme_ext.so'); torch.jit.load('model.pt')\n"}


def oversized_storage() -> bytes:
    # unpickler.cpp BINPERSID / torch/csrc/jit/python/init.cpp get_storage_from_record: a storage of
    # numel * itemsize bytes over the record's buffer, unchecked before torch 2.10 (PR 170085).
    records = _net_records()
    records["data.pkl"] = ts.pickle_of(_module("__torch__.torch.nn.modules.linear.Linear",
                                               weight=ts.tensor("2", (2, 8), numel=1 << 20),
                                               bias=ts.tensor("3", (2,))))
    return ts.archive("model", records)


def view_past_storage() -> bytes:
    # unpickler.cpp rebuildTensor: set_sizes_and_strides over the storage, unchecked; the storage
    # itself matches its record (2 floats), the 2 x 8 view reaches element 16.
    records = _net_records()
    records["data.pkl"] = ts.pickle_of(_module("__torch__.torch.nn.modules.linear.Linear",
                                               weight=ts.tensor("2", (2, 8), numel=2), bias=ts.tensor("3", (2,))))
    records["data/2"] = ts.raw_storage((2,))
    return ts.archive("model", records)


def setitems_on_list() -> bytes:
    # torch/_weights_only_unpickler.py load(): SETITEMS did stack[-1][k] = v on any target until
    # _check_set_item_target (torch 2.10, CVE-2026-24747). A torch zip, not TorchScript: torch.load reads it.
    p = ts.Pickle().raw(b"}(").string("weight")
    ts.tensor("0", (2,))(p)
    p.raw(b"u").raw(b"](").int_(1).int_(2).raw(b"e")  # a list...
    p.raw(b"(").int_(0).string("x").raw(b"u")  # ...given SETITEMS
    p.raw(b"0")  # POP: the dict is what the load returns
    return ts.archive("pytorch_model", {"data.pkl": p.stop(), "data/0": ts.raw_storage((2,))})


def pickle_imports_os_system() -> bytes:
    # torch/serialization.py _is_torchscript_zip sends this to torch.jit.load, but any reader that
    # unpickles data.pkl in Python (torch < 1.8 on Windows split records on os.sep) imports os.system.
    records = _net_records()
    p = ts.Pickle().global_("os", "system").string("echo pwned").raw(b"\x85R0")  # TUPLE1 REDUCE POP
    _net_data_writer(p)
    records["data.pkl"] = p.stop()
    return ts.archive("model", records)


def _net_data_writer(p: ts.Pickle) -> None:
    _module("__torch__.Net", conv=ts.none, fc=ts.none)(p)


register_all([
    Case("hard-benign", "torchscript-scripted-net", "benign", lambda: {"model.pt": scripted_net()},
         why="torch.jit.save of a conv/linear net: __torch__ classes from the archive's own code, aten ops",
         vendor="approve"),
    Case("hard-benign", "torchscript-scripted-function", "benign", lambda: {"scaled_tanh.pt": scripted_function()},
         why="a scripted function with a tensor constant in constants.pkl", vendor="approve"),
    Case("hard-benign", "torchscript-mobile-ptl", "benign", lambda: {"model.ptl": lite_net()},
         why="a lite-interpreter archive: bytecode.pkl names only aten/prim operators", vendor="approve"),
    Case("torchscript", "code-writes-file", "hostile", lambda: {"model.pt": file_write_code()},
         why="TorchScript forward() calls torch.save(value, path): aten::save writes any file",
         rule="torchscript-file-or-network-op"),
    Case("torchscript", "code-reads-file", "hostile", lambda: {"model.pt": file_read_code()},
         why="TorchScript calls torch.from_file(path): aten::from_file maps any file into a tensor",
         rule="torchscript-file-or-network-op"),
    Case("torchscript", "custom-op-with-library", "hostile", custom_op_files,
         why="the code calls ops.acme_ext.*, which exists only after loading the repo's native library",
         rule="torchscript-custom-op"),
    Case("torchscript", "storage-larger-than-record", "hostile", lambda: {"model.pt": oversized_storage()},
         why="data.pkl declares 1M floats over an 64-byte record: torch reads past the buffer",
         rule="torch-storage-size-mismatch"),
    Case("torchscript", "tensor-view-past-storage", "hostile", lambda: {"model.pt": view_past_storage()},
         why="a 2 x 8 tensor over a 2-element storage: torch.jit.load builds the view without a bounds check",
         rule="torchscript-tensor-out-of-bounds"),
    Case("torchscript", "setitems-on-a-list", "hostile", lambda: {"pytorch_model.bin": setitems_on_list()},
         why="SETITEMS on a list: memory corruption in torch.load(weights_only=True) before torch 2.10",
         rule="torch-setitem-non-dict"),
    Case("torchscript", "pickle-imports-os-system", "hostile", lambda: {"model.pt": pickle_imports_os_system()},
         why="a TorchScript archive whose data.pkl also imports os.system",
         rule="pickle-dangerous-global"),
])
