"""Hostile samples written from raw opcodes and hand-made containers (scanners.md §4, §7).

Nothing here is ever loaded; payloads are inert strings ("echo pwned").
Each sample names the rule hfvet-pickle must raise for it.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import pickle
import tarfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import py7zr

from tests.samples import benign
from tests.samples import opcodes as op

DANGEROUS = "pickle-dangerous-global"
UNRESOLVED = "pickle-unresolved-global"
BROKEN = "pickle-broken-stream"
MUTATION = "pickle-global-mutation"


@dataclass(frozen=True)
class Sample:
    name: str
    filename: str
    build: Callable[[], bytes]
    expect: str  # a rule hfvet-pickle must report (at high or critical)

    def write(self, folder: Path) -> Path:
        return op.write(folder / self.filename, self.build())


def by_protocol(protocol: int) -> bytes:
    """posix.system("echo pwned") in the idiom of each protocol."""
    if protocol == 0:
        return op.glob("posix", "system") + b"p0\n" + op.MARK + op.uni0(op.PAYLOAD) + op.TUPLE + op.REDUCE + op.STOP
    if protocol == 1:
        return op.glob("posix", "system") + op.binput(0) + op.MARK + op.uni(op.PAYLOAD) + op.TUPLE + op.REDUCE + op.STOP
    if protocol in (2, 3):
        return op.proto(protocol) + op.glob("posix", "system") + op.uni(op.PAYLOAD) + op.TUPLE1 + op.REDUCE + op.STOP
    body = op.stack_global("posix", "system") + op.MEMOIZE + op.short_uni(op.PAYLOAD) + op.MEMOIZE
    return op.proto(protocol) + op.frame(body + op.TUPLE1 + op.REDUCE + op.STOP)


def long_first_argument() -> bytes:
    """Protocol 0 without PROTO: a 6 KB first string pushes the payload past the 4 KB sniff window."""
    return op.uni0("A" * 6000) + op.POP + hostile_p0_body()


def hostile_p0_body() -> bytes:
    return op.glob("posix", "system") + op.MARK + op.uni0(op.PAYLOAD) + op.TUPLE + op.REDUCE + op.STOP


def inst_call() -> bytes:
    return op.MARK + op.uni0(op.PAYLOAD) + b"iposix\nsystem\np0\n" + op.STOP


def obj_call() -> bytes:
    return op.proto(1) + op.MARK + op.glob("posix", "system") + op.uni(op.PAYLOAD) + b"o" + op.STOP


def memo_stack_global() -> bytes:
    """STACK_GLOBAL whose operands come back through the memo (BINPUT/MEMOIZE + BINGET)."""
    body = (op.short_uni("posix") + op.binput(7) + op.POP + op.short_uni("system") + op.MEMOIZE + op.POP
            + op.binget(7) + op.binget(1) + op.STACK_GLOBAL + op.short_uni(op.PAYLOAD) + op.TUPLE1 + op.REDUCE)
    return op.proto(4) + body + op.STOP


def runtime_names() -> bytes:
    """Module and name computed by _codecs.encode(rot13) at load time."""
    rot = op.glob("_codecs", "encode")
    module = op.call(rot, op.uni("cbfvk"), op.uni("rot13"))
    name = op.call(rot, op.uni("flfgrz"), op.uni("rot13"))
    return op.proto(4) + module + name + op.STACK_GLOBAL + op.uni(op.PAYLOAD) + op.TUPLE1 + op.REDUCE + op.STOP


def typed_operand(operand: bytes) -> bytes:
    call = op.uni(op.PAYLOAD) + op.TUPLE1 + op.REDUCE
    return op.proto(4) + op.short_uni("posix") + operand + op.STACK_GLOBAL + call + op.STOP


def nested_loads(module: str = "pickle", name: str = "loads") -> bytes:
    inner = by_protocol(2)
    return op.proto(2) + op.call(op.glob(module, name), op.binbytes(inner)) + op.STOP


def broken_after_payload() -> bytes:
    return by_protocol(2)[:-1] + b"\xff\xfe garbage"


def truncated_payload() -> bytes:
    return by_protocol(2)[:-4]  # cut inside the argument


def broken_second_pickle() -> bytes:
    return pickle.dumps({"ok": 1}, protocol=2) + op.proto(2) + op.MARK + b"\x00"


def importlib_chain() -> bytes:
    """importlib.import_module('os') then getattr(module, 'system')(...)."""
    module = op.call(op.glob("importlib", "import_module"), op.uni("os"))
    func = op.call(op.glob("builtins", "getattr"), module, op.uni("system"))
    return op.proto(2) + op.call(func, op.uni(op.PAYLOAD)) + op.STOP


def resolve_name() -> bytes:
    func = op.call(op.glob("pkgutil", "resolve_name"), op.uni("os:system"))
    return op.proto(2) + op.call(func, op.uni(op.PAYLOAD)) + op.STOP


NUMPY_BUILTINS_POC = bytes.fromhex(  # modelscan issue #330, as published; written, never loaded
    "80049566000000000000008c056e756d70798c0473697a659394948c056e756d70798c0c5f5f6275696c74696e735f5f"
    "93949468017d7d8c0573686170656803738662680168018c046576616c86528c1d5f5f696d706f72745f5f28226f7322"
    "292e73797374656d28226964222985522e"
)


def build_slot_injection() -> bytes:
    """BUILD slot-state on numpy.prod, then names that walk into the injected attribute."""
    body = (op.glob("numpy", "prod") + op.NONE + op.MARK + op.uni0("a") + op.uni0("os") + op.DICT
            + op.TUPLE2 + op.BUILD + op.POP + op.glob("numpy", "prod.a") + b"p0\n" + op.POP
            + b"g0\n" + op.short_uni("system") + op.STACK_GLOBAL + op.uni(op.PAYLOAD) + op.TUPLE1 + op.REDUCE)
    return op.proto(4) + body + op.STOP


def dict_get_builtins() -> bytes:
    func = op.call(op.glob("builtins", "dict.get"), op.glob("numpy", "__builtins__"), op.uni("exec"))
    return op.proto(2) + op.call(func, op.uni("print(1)")) + op.STOP


def ext_code() -> bytes:
    return op.proto(2) + b"\x82\x07" + op.uni(op.PAYLOAD) + op.TUPLE1 + op.REDUCE + op.STOP


def setitem_on_global() -> bytes:
    return op.proto(2) + op.glob("collections", "OrderedDict") + op.uni("k") + op.uni("v") + op.SETITEM + op.STOP


def torch_zip(top: str = "archive", **patch: bool) -> bytes:
    members = {f"{top}/data.pkl": by_protocol(2), f"{top}/version": b"3\n", f"{top}/data/0": b"\x00" * 16}
    data = op.zip_bytes(members)
    return op.patch_zip(data, f"{top}/data.pkl", **patch) if patch else data


def torch_zip_extra_pickle() -> bytes:
    good, _ = benign.torch_pickle()
    members = {"archive/data.pkl": good, "archive/constants.pkl": by_protocol(2), "archive/payload": by_protocol(4)}
    return op.zip_bytes(members)


def torch_zip_deflated_broken() -> bytes:
    return op.zip_bytes({"archive/data.pkl": broken_after_payload()}, op.zipfile.ZIP_DEFLATED)


def legacy_torch_payload() -> bytes:
    parts = [pickle.dumps(op.TORCH_MAGIC, protocol=2), pickle.dumps(1001, protocol=2),
             pickle.dumps({"protocol_version": 1001}, protocol=2), by_protocol(2), pickle.dumps([], protocol=2)]
    return b"".join(parts) + b"\x00" * 64


def npy_object(descr: str = "'|O'") -> bytes:
    header = ("{'descr': " + descr + ", 'fortran_order': False, 'shape': (1,), }").encode()
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + by_protocol(2)


def npz_object() -> bytes:
    return op.zip_bytes({"ok.npy": benign.npy(op_np_arange()), "evil.npy": npy_object()})


def op_np_arange() -> object:
    import numpy as np

    return np.arange(4, dtype="f4")


def joblib_object_array_payload() -> bytes:
    """A joblib file whose object array (a nested pickle after the BUILD) carries the payload."""
    clean = benign.joblib_like()
    dtype = op.call(op.glob("numpy", "dtype"), op.short_uni("O8"), op.NEWFALSE, op.NEWTRUE)
    state = (op.EMPTY_DICT + op.MARK + op.short_uni("shape") + op.binint1(1) + op.TUPLE1 + op.short_uni("dtype")
             + dtype + op.short_uni("order") + op.short_uni("C") + op.SETITEMS)
    wrapper = op.glob("joblib.numpy_pickle", "NumpyArrayWrapper") + op.EMPTY_TUPLE + op.NEWOBJ + state + op.BUILD
    head = clean[: clean.rindex(op.SETITEMS + op.STOP)]
    return head + op.short_uni("o") + wrapper + by_protocol(4) + op.SETITEMS + op.STOP


def compressed(kind: str) -> Callable[[], bytes]:
    pack = {"zlib": zlib.compress, "gzip": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[kind]
    return lambda: pack(by_protocol(4))


def sevenzip(inner: bytes, name: str) -> bytes:
    out = io.BytesIO()
    with py7zr.SevenZipFile(out, "w") as archive:
        archive.writestr(inner, name)
    return out.getvalue()


def zip_in_zip() -> bytes:
    inner = torch_zip("archive")
    return op.zip_bytes({"nested/inner.zip": inner, "readme.txt": b"hello"}, op.zipfile.ZIP_DEFLATED)


def zip_in_targz() -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        data = torch_zip("model")
        info = tarfile.TarInfo("ckpt/model.pt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


_WRAPPERS = [
    ("builtins", "exec"), ("builtins", "eval"), ("__builtin__", "eval"), ("builtins", "__import__"),
    ("builtins", "compile"), ("builtins", "open"), ("nt", "system"), ("os", "popen"), ("subprocess", "Popen"),
    ("subprocess", "check_output"), ("pty", "spawn"), ("runpy", "_run_code"), ("timeit", "timeit"),
    ("cProfile", "run"), ("profile", "run"), ("pdb", "run"), ("bdb", "Bdb.run"), ("code", "InteractiveInterpreter"),
    ("trace", "Trace.run"), ("doctest", "debug_script"), ("idlelib.pyshell", "ModifiedInterpreter"),
    ("pydoc", "pipepager"), ("_pyrepl.pager", "pipe_pager"), ("uuid", "_get_command_stdout"),
    ("_osx_support", "_read_output"), ("imaplib", "IMAP4_stream"), ("webbrowser", "open"),
    ("logging.config", "listen"), ("distutils.spawn", "spawn"), ("pip", "main"), ("pip._internal", "main"),
    ("setuptools.sandbox", "run_setup"), ("asyncio.subprocess", "create_subprocess_shell"),
    ("multiprocessing.util", "spawnv_passfds"), ("ctypes", "CDLL"), ("shutil", "rmtree"), ("socket", "socket"),
    ("signal", "signal"), ("sys", "exit"), ("marshal", "loads"), ("dill", "loads"), ("cloudpickle", "loads"),
    ("joblib", "load"), ("torch", "load"), ("torch.hub", "load"), ("torch.jit", "load"),
    ("torch.storage", "_load_from_bytes"), ("torch.utils.collect_env", "run"), ("torch._dynamo", "reset"),
    ("numpy", "load"), ("numpy.f2py", "compile"), ("numpy.testing._private.utils", "runstring"),
    ("operator", "attrgetter"), ("_operator", "methodcaller"), ("importlib", "import_module"),
    ("zipimport", "zipimporter"), ("commands", "getoutput"), ("mlflow.projects.backend.local", "_run_entry_point"),
    ("pandas.io.parsers.readers", "read_csv"), ("transformers", "AutoTokenizer.from_pretrained"),
    ("huggingface_hub", "hf_hub_download"), ("numpy", "core._internal.sys.modules"), ("numpy", "prod.os.system"),
    ("functools", "reduce"),
]


SAMPLES: tuple[Sample, ...] = (
    *(Sample(f"posix-system-p{p}", f"payload_p{p}.pkl", lambda p=p: by_protocol(p), DANGEROUS) for p in range(6)),
    Sample("inst", "inst.pkl", inst_call, DANGEROUS),
    Sample("long-first-argument", "notes.txt", long_first_argument, DANGEROUS),
    Sample("long-first-argument-in-zip", "bundle.zip",
           lambda: op.zip_bytes({"docs/notes": long_first_argument()}), DANGEROUS),
    Sample("obj", "obj.pkl", obj_call, DANGEROUS),
    Sample("memo-stack-global", "memo.pkl", memo_stack_global, DANGEROUS),
    *(Sample(f"wrapper-{m}.{n}", f"wrapper_{i}.pkl", lambda m=m, n=n: op.system_call(m, n), DANGEROUS)
      for i, (m, n) in enumerate(_WRAPPERS)),
    Sample("nested-pickle-loads", "nested.pkl", nested_loads, DANGEROUS),
    Sample("nested-_pickle-loads", "nested2.pkl", lambda: nested_loads("_pickle", "loads"), DANGEROUS),
    Sample("broken-after-payload", "broken.pkl", broken_after_payload, DANGEROUS),
    Sample("broken-after-payload-rule", "broken2.pkl", broken_after_payload, BROKEN),
    Sample("truncated", "truncated.pkl", truncated_payload, BROKEN),
    Sample("broken-second-pickle", "stacked.pkl", broken_second_pickle, BROKEN),
    Sample("importlib-chain", "importlib.pkl", importlib_chain, DANGEROUS),
    Sample("pkgutil-resolve-name", "resolve.pkl", resolve_name, DANGEROUS),
    Sample("numpy-builtins-poc", "numpy_builtins.pkl", lambda: NUMPY_BUILTINS_POC, DANGEROUS),
    Sample("numpy-builtins-build", "numpy_build.pkl", lambda: NUMPY_BUILTINS_POC, MUTATION),
    Sample("build-slot-injection", "slots.pkl", build_slot_injection, MUTATION),
    Sample("build-slot-injection-names", "slots2.pkl", build_slot_injection, UNRESOLVED),
    Sample("dict-get-builtins", "dictget.pkl", dict_get_builtins, DANGEROUS),
    Sample("runtime-names", "rot13.pkl", runtime_names, UNRESOLVED),
    Sample("stack-global-bytes", "sg_bytes.pkl", lambda: typed_operand(op.short_binbytes(b"system")), UNRESOLVED),
    Sample("stack-global-int", "sg_int.pkl", lambda: typed_operand(op.binint1(42)), UNRESOLVED),
    Sample("stack-global-bytearray", "sg_ba.pkl", lambda: typed_operand(op.bytearray8(b"system")), UNRESOLVED),
    Sample("ext-code", "ext.pkl", ext_code, UNRESOLVED),
    Sample("setitem-on-global", "setitem.pkl", setitem_on_global, MUTATION),
    *(Sample(f"torch-zip-{top}", f"pytorch_model_{i}.bin", lambda top=top: torch_zip(top), DANGEROUS)
      for i, top in enumerate(("archive", "pytorch_model", "model-00001-of-00002", "x"))),
    Sample("torch-zip-bad-crc", "badcrc.pt", lambda: torch_zip(crc=True), DANGEROUS),
    Sample("torch-zip-encrypted-flag", "flag.pt", lambda: torch_zip(flag=True), DANGEROUS),
    Sample("torch-zip-name-mismatch", "rename.pt", lambda: torch_zip(rename=True), DANGEROUS),
    Sample("torch-zip-all-tricks", "tricks.pt", lambda: torch_zip(crc=True, flag=True, rename=True), DANGEROUS),
    Sample("torch-zip-extra-pickles", "extra.pt", torch_zip_extra_pickle, DANGEROUS),
    Sample("torch-zip-deflated-broken", "deflated.pt", torch_zip_deflated_broken, BROKEN),
    Sample("legacy-torch-4th-pickle", "legacy.pt", legacy_torch_payload, DANGEROUS),
    *(Sample(f"raw-pickle-as-{ext or 'noext'}", f"weights{ext}", lambda: by_protocol(2), DANGEROUS)
      for ext in (".bin", ".safetensors", ".npy", "", ".model", ".pt", ".ckpt")),
    Sample("npy-object-array", "evil.npy", npy_object, DANGEROUS),
    Sample("npy-structured-object", "evil_struct.npy", lambda: npy_object("[('a', '<f4'), ('b', '|O')]"), DANGEROUS),
    Sample("npy-comma-object", "evil_comma.npy", lambda: npy_object("'f4,O'"), DANGEROUS),
    Sample("npz-object-member", "evil.npz", npz_object, DANGEROUS),
    Sample("joblib-object-array", "model.joblib", joblib_object_array_payload, DANGEROUS),
    *(Sample(f"joblib-{kind}", f"model_{kind}.joblib", compressed(kind), DANGEROUS)
      for kind in ("zlib", "gzip", "bz2", "xz")),
    Sample("7z-pickle", "model.7z", lambda: sevenzip(by_protocol(2), "model.pkl"), DANGEROUS),
    Sample("7z-torch-zip", "weights.7z", lambda: sevenzip(torch_zip(), "pytorch_model.bin"), DANGEROUS),
    Sample("zip-in-zip", "bundle.zip", zip_in_zip, DANGEROUS),
    Sample("zip-in-tar-gz", "bundle.tar.gz", zip_in_targz, DANGEROUS),
)
