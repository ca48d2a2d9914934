"""Classify a pickle import (``module.name``): safe, dangerous, or unknown.

Allowlist beats denylist (DESIGN §4): only the exact globals ordinary checkpoints use are
safe; known execution primitives are dangerous; everything else is unknown and still a
finding. The lists below are data, meant to be reviewed like policy.
"""

from __future__ import annotations

import _compat_pickle
import enum
import functools
import re
from dataclasses import dataclass

from app.core.scanners.pickle_engine import denylist, library_packs


def _words(text: str) -> list[str]:
    return text.split()


class Verdict(enum.Enum):
    SAFE = "safe"
    UNKNOWN = "unknown"
    DANGEROUS = "dangerous"


@dataclass(frozen=True)
class Classification:
    verdict: Verdict
    reason: str


_TORCH_DTYPES = _words(
    "float32 float float64 double float16 half bfloat16 complex32 chalf complex64 cfloat complex128 "
    "cdouble uint8 uint16 uint32 uint64 int8 int16 short int32 int int64 long bool qint8 quint8 qint32 "
    "quint4x2 quint2x4 float8_e4m3fn float8_e5m2 float8_e4m3fnuz float8_e5m2fnuz float8_e8m0fnu "
    "float4_e2m1fn_x2 bits1x8 bits2x4 bits4x2 bits8 bits16 "
    "int1 int2 int3 int4 int5 int6 int7 uint1 uint2 uint3 uint4 uint5 uint6 uint7"
)
_TORCH_ENUMS = _words(
    "strided sparse_coo sparse_csr sparse_csc sparse_bsr sparse_bsc _mkldnn jagged "
    "contiguous_format channels_last channels_last_3d preserve_format "
    "per_tensor_affine per_channel_affine per_tensor_symmetric per_channel_symmetric "
    "per_channel_affine_float_qparams"
)
_NUMPY_SCALARS = _words(
    "bool_ bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 "
    "longdouble complex64 complex128 str_ bytes_ void intc intp uintp"
)

# Exact globals ordinary checkpoints (torch state dicts, numpy arrays, optimizer state,
# argparse/config records) need. Nothing here executes attacker-chosen code.
SAFE_GLOBALS: frozenset[str] = frozenset(
    [
        "collections.OrderedDict", "collections.defaultdict", "collections.deque", "collections.Counter",
        "builtins.set", "builtins.frozenset", "builtins.slice", "builtins.bytearray", "builtins.bytes",
        "builtins.complex", "builtins.int", "builtins.float", "builtins.str", "builtins.list",
        "builtins.dict", "builtins.tuple", "builtins.bool", "builtins.range", "builtins.object",
        "copyreg._reconstructor", "argparse.Namespace", "_codecs.encode",
        "datetime.datetime", "datetime.date", "datetime.time", "datetime.timedelta", "datetime.timezone",
        "decimal.Decimal", "fractions.Fraction", "uuid.UUID",
        "pathlib.Path", "pathlib.PosixPath", "pathlib.WindowsPath", "pathlib.PurePosixPath",
        "pathlib.PureWindowsPath",
        "torch.device", "torch.Size", "torch.Tensor", "torch._tensor.Tensor",
        "torch.nn.parameter.Parameter", "torch.nn.parameter.Buffer",
        "torch._tensor._rebuild_from_type", "torch._tensor._rebuild_from_type_v2",
        "torch.storage.UntypedStorage", "torch.storage.TypedStorage", "torch.storage._TypedStorage",
        "torch.serialization._get_layout",
        # torch/jit/_pickle.py: identity functions over a list (TorchScript's typed-list tags)
        *(f"torch.jit._pickle.{n}" for n in _words("build_intlist build_tensorlist build_doublelist "
                                                    "build_boollist build_tensor_from_id restore_type_tag")),
        "numpy.ndarray", "numpy.dtype", "numpy.core.multiarray._reconstruct",
        # np.matrix pickles as _reconstruct(numpy.matrix, ...): an ndarray subclass, no code of its own at load
        "numpy.matrix", "numpy.matrixlib.defmatrix.matrix",
        "numpy._core.multiarray._reconstruct", "numpy.core.multiarray.scalar",
        "numpy._core.multiarray.scalar", "numpy.core.numeric._frombuffer",
        "numpy._core.numeric._frombuffer",
        "joblib.numpy_pickle.NumpyArrayWrapper",
        # joblib < 0.10 side-file wrappers (numpy_pickle_compat): __init__ only stores attributes; what
        # joblib's load_build then does with them is judged by joblib_reading (side file, subclass as state).
        "joblib.numpy_pickle.NDArrayWrapper", "joblib.numpy_pickle_compat.NDArrayWrapper",
        "joblib.numpy_pickle.ZNDArrayWrapper", "joblib.numpy_pickle_compat.ZNDArrayWrapper",
        # numpy < 1.0's name of _reconstruct, still importable: ndarray.__new__(subtype, shape, dtype).
        "numpy.core._internal._reconstruct",
        *(f"torch.{n}" for n in _TORCH_DTYPES + _TORCH_ENUMS),
        *(f"numpy.{n}" for n in _NUMPY_SCALARS),
    ]
)
# torch's tensor rebuild helpers and every storage type, old and new.
_SAFE_PATTERNS = (
    re.compile(r"torch\._utils\._rebuild_[A-Za-z0-9_]+"),
    re.compile(r"torch(\.cuda)?\.[A-Za-z0-9]*Storage"),
    re.compile(r"builtins\.[A-Z][A-Za-z]*(Error|Exception|Warning)"),  # exception records
)

# Audit of the allowlist (DESIGN §4), entry by entry, for callables that call, instantiate
# or keep their arguments to call later; the argument at each listed position must itself be
# an allowlisted global (or None where the callable accepts no callable). Every other
# argument of an allowlisted callable, and the state BUILD gives its result, must not hold a
# non-allowlisted global either (analysis: pickle-unsafe-argument).
ARGUMENT_CALLERS: dict[str, tuple[int, ...]] = {
    # copyreg._reconstructor(cls, base, state): base.__new__(cls, state), then
    # base.__init__(obj, state) unless base is object. cls is only instantiated (below).
    "copyreg._reconstructor": (1,),
    # torch._tensor._rebuild_from_type(func, type, args, dict): func(*args).as_subclass(type);
    # _v2 also calls new_type.__setstate__(state) when the subclass defines one.
    "torch._tensor._rebuild_from_type": (0, 1),
    "torch._tensor._rebuild_from_type_v2": (0, 1),
    # torch._utils._rebuild_wrapper_subclass(cls, ...): Tensor._make_wrapper_subclass(cls, ...)
    # runs the subclass's __new__ machinery.
    "torch._utils._rebuild_wrapper_subclass": (0,),
    # collections.defaultdict(factory): the factory is called on every missing key, later.
    "collections.defaultdict": (0,),
    # numpy _reconstruct(subtype, shape, dtype): ndarray.__new__(subtype) runs the subtype's
    # __array_finalize__ (numpy/_core/src/multiarray: array_new / PyArray_NewFromDescr).
    "numpy.core.multiarray._reconstruct": (0,),
    "numpy._core.multiarray._reconstruct": (0,),
    "numpy.core._internal._reconstruct": (0,),
    # Not allowlisted, but call-forwarding: calling the result calls the wrapped callable.
    "functools.partial": (0,),
    "functools.partialmethod": (0,),
    # copyreg.__newobj__(cls, *args) / __newobj_ex__(cls, args, kwargs): cls.__new__(cls, ...).
    "copyreg.__newobj__": (0,),
    "copyreg.__newobj_ex__": (0,),
}
# Reviewed and found not to call their arguments (pure constructors of data):
# OrderedDict, deque, Counter (iterate pairs/items only); set/frozenset/list/dict/tuple/
# slice/range/bool/bytes/bytearray/str/int/float/complex (build from data; any object they
# convert was itself built by a judged call); argparse.Namespace (kwargs only, none via
# REDUCE); datetime/decimal/fractions/uuid/pathlib (parse data, no file access);
# torch.device/Size/Tensor/Parameter/Buffer/storages; the torch._utils._rebuild_* tensor
# helpers (storage, offsets, sizes, flags; backward_hooks and metadata are checked as
# ordinary arguments); torch.serialization._get_layout (looks a name up among torch's own
# layouts); numpy.dtype/ndarray/scalar/_frombuffer (data); joblib's NumpyArrayWrapper (its
# BUILD state's ``subclass`` is checked as state); _codecs.encode (text -> bytes, codec
# names looked up only under ``encodings``; evaluated by evaluate.py).
#
# Callables whose result is an instance of one of their arguments (that class's methods,
# __setstate__ above all, run on BUILD): the argument index.
INSTANTIATED_ARGUMENT: dict[str, int] = {
    "copyreg._reconstructor": 0,  # object.__new__(cls): no cls code yet, but BUILD runs its __setstate__
    "copyreg.__newobj__": 0,
    "copyreg.__newobj_ex__": 0,
}

# Modules whose every global (and every submodule) can run code, read/write files, reach
# the network or load another serialized object.
DANGEROUS_MODULES: frozenset[str] = frozenset(
    _words("""
    builtins __builtin__ __builtins__ exceptions os posix nt posixpath ntpath sys subprocess
    _posixsubprocess pty tty socket _socket ssl select selectors runpy shutil ctypes _ctypes
    multiprocessing _multiprocessing signal _signal asyncio threading _thread concurrent sched atexit
    code codeop timeit cProfile profile _lsprof pdb bdb trace tracemalloc doctest idlelib pydoc
    _pyrepl rlcompleter imaplib ftplib smtplib poplib nntplib telnetlib http urllib urllib2 httplib
    webbrowser xmlrpc socketserver _osx_support _aix_support distutils importlib imp pkgutil
    zipimport pip setuptools pkg_resources site sitecustomize ensurepip venv
    pickle _pickle cPickle pickletools shelve dbm marshal dill cloudpickle joblib
    operator _operator inspect gc weakref types tempfile glob io _io fileinput
    mmap linecache zipfile tarfile gzip bz2 lzma zlib yaml requests httpx aiohttp urllib3
    huggingface_hub fsspec paramiko fabric invoke sh plumbum pexpect
    torch.hub torch.jit torch._dynamo torch._inductor torch.serialization torch.fx torch.package
    torch.distributed torch.multiprocessing torch.utils.cpp_extension torch.utils.collect_env
    torch.utils.data.datapipes torch.ops torch._ops torch.classes torch.library torch._export
    torch.export torch.compiler torch.testing torch.utils.model_zoo mlflow
    numpy.f2py numpy.testing numpy.distutils numpy.ctypeslib numpy.lib.npyio numpy.lib._npyio_impl
    numpy.lib._datasource numpy.lib.format numpy.lib.utils numpy.core._internal numpy._core._internal
    numpy.lib._utils_impl
    transformers.dynamic_module_utils transformers.pipelines diffusers.utils.dynamic_modules_utils
    """)
)
# Single dangerous callables (``subprocess.Popen``, ``pydoc.pipepager``, ``numpy.load``...) are
# not listed here: they are derived from library source into data/dangerous_callables.json
# (pickle_engine/denylist.py, scripts/derive_denylist.py), hand-picked ones beside them with a reason.
DANGEROUS_MODULE_PREFIXES: tuple[str, ...] = ("logging.config", "logging.handlers")
# Lower-case function names that run commands, load serialized objects or fetch data
# (mlflow ``_run_entry_point``, pandas ``read_csv``, ``load_model``...).
DANGEROUS_NAME_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"_*(run|exec|execute|spawn|popen|shell|invoke)(_[a-z0-9_]*)?"),
    re.compile(r"([a-z0-9_]*_)?(load|loads|download|urlopen)(_[a-z0-9_]*)?"),
    re.compile(r"_?read_[a-z0-9_]+"),
)

# Attribute names that mean "run, import or fetch something" wherever they appear.
DANGEROUS_NAMES: frozenset[str] = frozenset(
    _words("""
    system popen popen2 popen3 popen4 spawn spawnl spawnle spawnlp spawnlpe spawnv spawnve spawnvp
    spawnvpe execl execle execlp execlpe execv execve execvp execvpe fork forkpty startfile
    exec eval execfile compile __import__ import_module reload run_path run_module getoutput
    getstatusoutput check_output check_call from_pretrained from_single_file hf_hub_download
    snapshot_download urlopen urlretrieve load_library load_inline load_module exec_module
    resolve_name getattr setattr delattr globals locals vars breakpoint input open pipeline
    """)
)


# A class defined in the script that pickled it (sklearn pipelines from a notebook) is saved
# under this module name: an unknown import, not an introspection gadget. Its attribute names
# are judged as usual (``__main__.system`` is whatever the loading script imported).
SCRIPT_MODULE = "__main__"


@functools.lru_cache(maxsize=4096)
def classify(module: str, name: str) -> Classification:
    """Worst verdict over the name as written and as Python 3 remaps old (py2) names."""
    results = [_classify_one(m, n) for m, n in _spellings(module, name)]
    order = (Verdict.DANGEROUS, Verdict.UNKNOWN, Verdict.SAFE)
    return min(results, key=lambda c: order.index(c.verdict))


@functools.lru_cache(maxsize=4096)
def canonical(module: str, name: str) -> str:
    """The Python 3 dotted name a protocol < 3 load imports (copy_reg -> copyreg)."""
    mapped = _compat_pickle.NAME_MAPPING.get((module, name))
    if mapped is None:
        mapped = (_compat_pickle.IMPORT_MAPPING.get(module, module), name)
    return f"{mapped[0]}.{mapped[1]}"


def _spellings(module: str, name: str) -> list[tuple[str, str]]:
    # Unpickling protocol < 3 maps py2 names (commands.getoutput -> subprocess.getoutput).
    mapped = _compat_pickle.NAME_MAPPING.get((module, name))
    if mapped is None:
        mapped = (_compat_pickle.IMPORT_MAPPING.get(module, module), name)
    if mapped == (module, name):
        return [(module, name)]
    # A py2-only module (copy_reg, __builtin__) only ever imports under its py3 name.
    return [mapped] if module in _compat_pickle.IMPORT_MAPPING else [(module, name), mapped]


def _classify_one(module: str, name: str) -> Classification:
    full = f"{module}.{name}"
    parts = module.split(".") + name.split(".")
    if parts[0] == SCRIPT_MODULE:
        parts = parts[1:]  # the loading script's own classes; what follows is still judged
    if any(_is_dunder(p) for p in parts):
        return Classification(Verdict.DANGEROUS, "dunder attribute access (introspection gadget)")
    if full in SAFE_GLOBALS or any(p.fullmatch(full) for p in _SAFE_PATTERNS):
        return Classification(Verdict.SAFE, "allowlisted")
    derived = denylist.lookup(full)
    if derived:
        return Classification(Verdict.DANGEROUS, derived.describe(full))
    reviewed = library_packs.module_override(full)  # builtins.hash held as a value (library_packs.py)
    if reviewed:
        return Classification(Verdict.SAFE, f"library pack ({reviewed.library}): {reviewed.reason}")
    denied = _denied_module(module)
    if denied:
        return Classification(Verdict.DANGEROUS, f"module {denied!r} can run code or touch the system")
    imported = denylist.module_import(module)
    if imported:
        return Classification(Verdict.DANGEROUS, imported[1].describe(imported[0]))
    reason = _dangerous_attribute_path(module, name)
    if module == SCRIPT_MODULE and _denied_module(name):
        reason = f"{name!r} in the loading script reaches module {_denied_module(name)!r}"
    if reason:
        return Classification(Verdict.DANGEROUS, reason)
    last = name.rsplit(".", 1)[-1]
    if any(p.fullmatch(last) for p in DANGEROUS_NAME_PATTERNS):
        return Classification(Verdict.DANGEROUS, f"{last!r} names a command, load or fetch primitive")
    if module == "torch._C" and re.search(r"jit|import|load", name):
        return Classification(Verdict.DANGEROUS, "torch._C loader / TorchScript entry point")
    packed = library_packs.lookup(full)  # never over a dangerous verdict above
    if packed:
        return Classification(Verdict.SAFE, f"library pack ({packed.library}): {packed.reason}")
    return Classification(Verdict.UNKNOWN, "not on the allowlist")


def _denied_module(module: str) -> str | None:
    parts = module.split(".")
    for i in range(1, len(parts) + 1):
        prefix = ".".join(parts[:i])
        if prefix in DANGEROUS_MODULES:
            return prefix
    return next((p for p in DANGEROUS_MODULE_PREFIXES if module == p or module.startswith(p + ".")), None)


def _dangerous_attribute_path(module: str, name: str) -> str | None:
    """A dotted name walks attributes, every hop a getattr: ``numpy`` + ``os.getcwd`` reaches
    os through numpy, ``torch`` + ``hub.load`` reaches torch.hub through its first hop."""
    parts = name.split(".")
    if any(p in DANGEROUS_NAMES for p in parts):
        return f"name {name!r} is an execution, import or download primitive"
    for i in range(len(parts) - 1):  # x + "platform.architecture": a derived callable hops away
        hops = ".".join(parts[i:])
        derived = denylist.lookup(hops)
        if derived:
            return f"attribute path {name!r} reaches {hops}: {derived.describe(hops)}"
    for i in range(0 if len(parts) > 1 else 1, len(parts)):  # a lone "code" attribute is not module code
        reached = _denied_module(".".join(parts[i:]))
        if reached:
            return f"attribute path {name!r} reaches module {reached!r}"
    for i in range(1, len(parts)):
        reached = _denied_module(".".join([module, *parts[:i]]))
        if reached:
            return f"attribute path {module}.{name} goes through module {reached!r}"
    return None


def _is_dunder(part: str) -> bool:
    return len(part) > 4 and part.startswith("__") and part.endswith("__")
