"""Allowlist / denylist classification of pickle imports."""

from __future__ import annotations

import pytest

from app.core.scanners.pickle_engine.catalog import DANGEROUS_MODULES, SAFE_GLOBALS, Verdict, classify

ORDINARY = [
    ("torch._utils", "_rebuild_tensor_v2"), ("torch._utils", "_rebuild_parameter"),
    ("torch._utils", "_rebuild_parameter_with_state"), ("torch._utils", "_rebuild_qtensor"),
    ("torch", "FloatStorage"), ("torch", "BFloat16Storage"), ("torch.cuda", "HalfStorage"),
    ("torch.storage", "UntypedStorage"), ("torch", "device"), ("torch", "Size"), ("torch", "bfloat16"),
    ("torch", "float8_e4m3fn"), ("torch", "channels_last"), ("torch._tensor", "_rebuild_from_type_v2"),
    ("collections", "OrderedDict"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"), ("numpy", "ndarray"), ("numpy", "dtype"),
    ("numpy._core.multiarray", "scalar"), ("numpy._core.numeric", "_frombuffer"), ("_codecs", "encode"),
    ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "slice"), ("builtins", "bytearray"),
    ("builtins", "complex"), ("__builtin__", "set"), ("copy_reg", "_reconstructor"),
    ("argparse", "Namespace"), ("joblib.numpy_pickle", "NumpyArrayWrapper"), ("builtins", "ValueError"),
]

DANGEROUS = [
    ("builtins", "exec"), ("builtins", "eval"), ("builtins", "getattr"), ("__builtin__", "eval"),
    ("builtins", "dict.get"), ("posix", "system"), ("nt", "system"), ("os", "system"),
    ("subprocess", "Popen"), ("commands", "getoutput"), ("importlib", "import_module"),
    ("importlib.machinery", "SourceFileLoader"), ("pkgutil", "resolve_name"), ("runpy", "run_path"),
    ("torch", "load"), ("torch.hub", "load"), ("torch.storage", "_load_from_bytes"),
    ("torch.utils.collect_env", "run"), ("torch._inductor.codecache", "PyCodeCache"), ("numpy", "load"),
    ("numpy.f2py", "run_main"), ("operator", "attrgetter"), ("_operator", "methodcaller"),
    ("uuid", "_get_command_stdout"), ("logging.config", "listen"), ("pip._internal.cli.main", "main"),
    ("numpy", "__builtins__"), ("torch", "__globals__"), ("numpy", "core._internal.sys.modules"),
    ("numpy", "prod.os.system"), ("transformers", "AutoTokenizer.from_pretrained"),
    ("mlflow.projects.backend.local", "_run_entry_point"), ("pandas.io.parsers.readers", "read_csv"),
    ("some.lib", "run_command"), ("some.lib", "load_model"), ("torch._C", "_jit_pass_inline"),
]

UNKNOWN = [
    ("torch.nn.modules.linear", "Linear"), ("transformers.training_args", "TrainingArguments"),
    ("sklearn.tree._tree", "Tree"),
    ("pandas._libs.internals", "_unpickle_block"), ("torch._C._nn", "gelu"), ("re", "_compile"),
    ("collections", "ChainMap"),
]
# numpy.random._pickle.__randomstate_ctor and functools.partial left this list with issue 22: they
# are library-pack entries now, allowlisted only with their arguments checked on every call
# (tests/unit/core/scanners/pickle_engine/test_library_packs.py holds them to that).


@pytest.mark.parametrize(("module", "name"), ORDINARY)
def test_ordinary_checkpoint_globals_are_safe(module: str, name: str) -> None:
    assert classify(module, name).verdict is Verdict.SAFE


@pytest.mark.parametrize(("module", "name"), DANGEROUS)
def test_execution_primitives_are_dangerous(module: str, name: str) -> None:
    assert classify(module, name).verdict is Verdict.DANGEROUS


@pytest.mark.parametrize(("module", "name"), UNKNOWN)
def test_everything_else_is_unknown(module: str, name: str) -> None:
    result = classify(module, name)
    assert result.verdict is Verdict.UNKNOWN, result.reason


def test_builtins_is_denied_except_for_the_allowlisted_types() -> None:
    assert classify("builtins", "print").verdict is Verdict.DANGEROUS
    assert classify("builtins", "list").verdict is Verdict.SAFE


def test_submodules_of_denied_modules_are_denied() -> None:
    assert classify("subprocess.foo.bar", "x").verdict is Verdict.DANGEROUS
    assert classify("osx", "thing").verdict is Verdict.UNKNOWN  # a prefix of a name is not a module


def test_allowlist_exceptions_inside_denied_modules_are_deliberate() -> None:
    """Allowlisting a name inside a denied module overrides the denial: keep that set explicit."""
    def denied(module: str) -> bool:
        parts = module.split(".")
        return any(".".join(parts[:i]) in DANGEROUS_MODULES for i in range(1, len(parts) + 1))

    inside = {g for g in SAFE_GLOBALS if denied(g.rsplit(".", 1)[0])}
    # torch/jit/_pickle.py's builders: identity functions over a list, inside the denied torch.jit
    jit_pickle = {f"torch.jit._pickle.{n}" for n in ("build_intlist", "build_tensorlist", "build_doublelist",
                                                     "build_boollist", "build_tensor_from_id", "restore_type_tag")}
    assert jit_pickle <= inside
    inside -= jit_pickle
    types = ("set", "frozenset", "slice", "bytearray", "bytes", "complex", "int", "float", "str", "list",
             "dict", "tuple", "bool", "range", "object")
    assert inside == {f"builtins.{t}" for t in types} | {
        "joblib.numpy_pickle.NumpyArrayWrapper", "torch.serialization._get_layout",
        # joblib < 0.10 side-file wrappers and numpy < 1.0's _reconstruct (issue 22, wild corpus)
        "joblib.numpy_pickle.NDArrayWrapper", "joblib.numpy_pickle_compat.NDArrayWrapper",
        "joblib.numpy_pickle.ZNDArrayWrapper", "joblib.numpy_pickle_compat.ZNDArrayWrapper",
        "numpy.core._internal._reconstruct"}


def test_a_pickled_numpy_matrix_is_an_ordinary_array() -> None:
    # np.matrix.__reduce__ is ndarray's: _reconstruct(numpy.matrix, (0,), b"b") then BUILD. sklearn
    # and joblib dumps hold matrices; _reconstruct only accepts an allowlisted subtype, so the
    # class itself must be on the list or every such dump is a critical unsafe argument.
    import io
    import pickle

    import numpy as np

    from app.core.findings import FindingSink, Severity
    from app.core.limits import Limits
    from app.core.scanners.pickle_engine.analysis import analyze_pickles

    with pytest.warns(PendingDeprecationWarning):  # numpy discourages matrix; files still hold them
        data = pickle.dumps(np.matrix([[1.0, 2.0]]), protocol=2)
    sink = FindingSink("m.pkl", "pickle")
    analyze_pickles(io.BytesIO(data), sink, Limits())
    assert [f.rule for f in sink.findings if f.severity.rank >= Severity.MEDIUM.rank] == []
