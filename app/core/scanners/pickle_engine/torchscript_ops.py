"""What a TorchScript operator or custom class can do, by its qualified name (``ns::name``).

TorchScript reaches native code only through registered operators and TorchBind classes:
serialized code spells ``torch.<op>`` (``aten::<op>``, import_source.cpp binds ``torch`` to
``BuiltinModule("aten")``), ``ops.<ns>.<op>`` (``OpsValue``), ``<tensor>.<method>(...)`` (an aten
method) and ``__torch__.torch.classes.<ns>.<Class>`` (a TorchBind class); the lite interpreter
names the same operators in ``bytecode.pkl``. It cannot call Python: ``prim::PythonOp`` is not
serializable and the code importer resolves no Python globals.

The operators below are the ones torch itself registers that leave the process's memory:
- ``aten::save(t item, str filename)`` (torch/csrc/jit/runtime/register_prim_ops_fulljit.cpp)
  pickles a value and writes it to ``filename`` with ``std::fstream``;
- ``aten::from_file(str filename, bool? shared, int? size, ...)`` (aten/src/ATen/native/
  TensorFactories.cpp) maps ``filename`` into a tensor's storage (writes go back with shared=True);
- the RPC operators (torch/csrc/jit/runtime/register_distributed_ops.cpp: ``prim::rpc_async``,
  ``prim::rpc_sync``, ``prim::rpc_remote``, ``aten::to_here``, the ``dist_rpc`` TorchBind classes)
  and the c10d collectives (``c10d::``, ``_c10d_functional::``) talk to other processes over the network.
Everything else torch registers computes on tensors and values in memory.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class OpRisk(enum.Enum):
    BUILTIN = "builtin"  # torch's own computation
    LIBRARY = "library"  # a PyTorch domain library's op (torchvision, torchaudio...): native code shipped elsewhere
    CUSTOM = "custom"  # an op or class only a native library the model does not name provides
    SYSTEM = "system"  # reads or writes files, or reaches the network


@dataclass(frozen=True)
class OpJudgement:
    risk: OpRisk
    reason: str


FILE_OPS = {"save": "writes a file (aten::save)", "from_file": "maps a file into a tensor (aten::from_file)"}
NETWORK_OPS = frozenset({"rpc_async", "rpc_sync", "rpc_remote", "to_here"})
NETWORK_NAMESPACES = frozenset({"c10d", "_c10d_functional", "c10d_functional", "_c10d_functional_autograd",
                                "_dtensor", "dist_c10d", "dist_autograd", "dist_rpc", "rpc"})
# Namespaces libtorch registers itself (operators and TorchBind classes).
TORCH_NAMESPACES = frozenset({
    "aten", "prim", "prims", "quantized", "_quantized", "quantized_decomposed", "prepacked", "xnnpack",
    "mkldnn", "mkldnn_prepacked", "onednn", "mkl", "sparse", "cuda", "profiler", "_caffe2", "inductor",
    "rngprims", "higher_order", "attr", "static_runtime", "fb", "_nested", "nested", "rnn", "torch",
    "onnx", "debugprims", "cudnn", "cpu", "mps", "xpu", "autograd", "upgraders",
    "_nnapi", "metal", "metal_prepack", "vulkan", "vulkan_prepack",  # mobile backends built into libtorch
})
# PyTorch's domain libraries: their ops need that library's native extension, a known one.
DOMAIN_LIBRARIES = frozenset({"torchvision", "torchaudio", "torchtext", "torchrec", "fbgemm"})


def judge_op(namespace: str, name: str) -> OpJudgement:
    """``namespace::name`` as TorchScript code or bytecode calls it."""
    if namespace in NETWORK_NAMESPACES or (namespace in ("aten", "prim") and name in NETWORK_OPS):
        return OpJudgement(OpRisk.SYSTEM, f"{namespace}::{name} talks to other processes over the network")
    if namespace == "aten" and name in FILE_OPS:
        return OpJudgement(OpRisk.SYSTEM, f"{namespace}::{name} {FILE_OPS[name]}")
    return _by_namespace(namespace, f"operator {namespace}::{name}")


def judge_class(namespace: str, name: str) -> OpJudgement:
    """A TorchBind class ``torch.classes.<namespace>.<name>``: its methods are native code."""
    if namespace in NETWORK_NAMESPACES:
        return OpJudgement(OpRisk.SYSTEM, f"TorchBind class {namespace}.{name} is a distributed process group/store")
    return _by_namespace(namespace, f"TorchBind class {namespace}.{name}")


def _by_namespace(namespace: str, what: str) -> OpJudgement:
    if namespace in TORCH_NAMESPACES:
        return OpJudgement(OpRisk.BUILTIN, f"{what} is torch's own")
    if namespace in DOMAIN_LIBRARIES:
        return OpJudgement(OpRisk.LIBRARY, f"{what} exists only once {namespace}'s native extension is loaded")
    return OpJudgement(OpRisk.CUSTOM, f"{what} exists only once a native library registering namespace "
                                      f"{namespace!r} is loaded (torch.ops.load_library or an import)")


def split_operator(text: str) -> tuple[str, str] | None:
    """``aten::add.Tensor`` -> ("aten", "add"); None when ``text`` does not name an operator."""
    namespace, sep, rest = text.partition("::")
    name = rest.split(".", 1)[0]
    if not sep or not namespace.isidentifier() or not name.isidentifier():
        return None
    return namespace, name
