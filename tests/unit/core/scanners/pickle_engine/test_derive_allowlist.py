"""scripts/derive_allowlist.py on a small library written at test time: which uses its load-time
methods vouch for, and why not. The library is parsed, never imported."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[5]
SCRIPT = ROOT / "scripts" / "derive_allowlist.py"

LIB = {
    "__init__.py": "",
    "models.py": '''
        import os
        import pickle
        import warnings
        import numpy as np
        from collections import namedtuple

        Node = namedtuple("Node", "left right")

        class Plain:
            """No load-time method of its own: object's defaults."""

        class Estimator:
            def __init__(self, alpha=1.0):
                self.alpha = alpha

            def __setstate__(self, state):
                version = state.pop("_version", "old")
                if version != "1":
                    warnings.warn("version mismatch")
                self.__dict__.update(state)

        class Trainer:
            def __init__(self, corpus):
                self.vectors = np.zeros(3)
                self.train(corpus)

            def train(self, corpus):
                os.system("echo " + corpus)

        class Restorer:
            def __setstate__(self, state):
                self.__dict__ = pickle.loads(state["blob"])

        class CallsState:
            def __setstate__(self, state):
                self.__dict__.update(state)
                self.callback()

        class Collected:
            def __del__(self):
                os.remove(self.path)

        class Child(Estimator):
            pass

        Alias = Estimator

        def weight(tf, scheme):
            if scheme == "l":
                return 1 + np.log2(tf)
            return tf.max(axis=0)

        def loader(path):
            return pickle.load(open(path, "rb"))
    ''',
}


@pytest.fixture(scope="module")
def derived(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    root = tmp_path_factory.mktemp("src") / "toylib"
    root.mkdir()
    for name, text in LIB.items():
        (root / name).write_text(textwrap.dedent(text))
    module = _script()
    out, defined = module.derive({"toylib": root}, ["toylib"], ["toylib.models.weight", "toylib.models.loader"])
    assert "toylib.models.Trainer" in defined
    return dict(out.get("toylib", {}))


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("derive_allowlist", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["derive_allowlist"] = module
    spec.loader.exec_module(module)
    return module


def uses(derived: dict[str, list[str]], name: str) -> set[str]:
    return set(derived[name][0].split()) if name in derived else set()


def test_state_only_classes_are_vouched_for_every_use(derived: dict[str, list[str]]) -> None:
    assert uses(derived, "toylib.models.Plain") == {"new", "call", "build", "items"}
    # state.pop / warnings.warn / self.__dict__.update only restore state
    assert uses(derived, "toylib.models.Estimator") == {"new", "call", "build", "items"}
    assert uses(derived, "toylib.models.Child") == uses(derived, "toylib.models.Estimator")
    assert uses(derived, "toylib.models.Alias") == uses(derived, "toylib.models.Estimator")
    assert "alias of toylib.models.Estimator" in derived["toylib.models.Alias"][1]
    assert uses(derived, "toylib.models.Node") == {"new", "call"}


def test_a_training_init_refuses_call_only(derived: dict[str, list[str]]) -> None:
    assert uses(derived, "toylib.models.Trainer") == {"new", "build", "items"}
    assert "os.system" in derived["toylib.models.Trainer"][1]  # the reason names the sink it reaches


def test_unsafe_load_time_methods_refuse_their_use(derived: dict[str, list[str]]) -> None:
    assert "build" not in uses(derived, "toylib.models.Restorer")  # pickle.loads in __setstate__
    assert "build" not in uses(derived, "toylib.models.CallsState")  # a callable from state
    assert "toylib.models.Collected" not in derived  # __del__ removes a file: no use at all


def test_functions_are_packed_only_when_asked_and_safe(derived: dict[str, list[str]]) -> None:
    assert uses(derived, "toylib.models.weight") == {"call"}
    assert "toylib.models.loader" not in derived


def test_versions_merge_to_what_every_version_vouches_for() -> None:
    module = _script()
    old = {"lib": {"lib.A": ["new build", "r1"], "lib.B": ["new call build", "r1"]}}
    new = {"lib": {"lib.A": ["new call build", "r2"]}}
    merged = module.merge_versions([("lib 2", new, {"lib.A", "lib.B"}), ("lib 1", old, {"lib.A", "lib.B"})])
    assert merged["lib"]["lib.A"][0] == "new build"
    assert "lib.B" not in merged["lib"]  # defined by lib 2, which vouches for none of its uses
