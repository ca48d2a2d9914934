"""The corpora written before the registry, registered under family names (adapted, not copied).

- pickle-*, torch-containers, numpy-joblib, archives: tests/samples/hostile.py, split by what
  each sample exercises (its name's prefix)
- pickle-calls: the call opcodes of tests/unit/core/scanners/pickle_engine/test_calls.py
- text-disguised: protocol-0 payloads under text names (test_text_is_not_weights.py)
- savedmodel: the hostile graph of savedmodel_samples.py
- benign-samples / benign-text: tests/samples/benign.py and tests/samples/text_shapes.py
"""

from __future__ import annotations

from tests.corpus.registry import Case, one_file, register_all
from tests.samples import benign, hostile, text_shapes
from tests.unit.core.scanners import savedmodel_samples
from tests.unit.core.scanners.pickle_engine.test_calls import CALLS
from tests.unit.core.scanners.test_text_is_not_weights import HOSTILE_TEXT

# Samples that repeat another sample's bytes only to assert a second rule on them.
_SAME_BYTES = {"broken-after-payload-rule", "numpy-builtins-build", "build-slot-injection-names"}


# hostile.py sample name prefix -> family (first match wins)
_HOSTILE_FAMILIES = (
    ("wrapper-", "pickle-wrappers"),  # dangerous callables reached through wrappers and aliases
    (("broken", "truncated"), "pickle-broken-streams"),  # the call runs before the stream breaks
    (("torch-", "legacy-torch", "raw-pickle-as-"), "torch-containers"),
    (("npy-", "npz-", "joblib-"), "numpy-joblib"),
    (("7z-", "zip-in-"), "archives"),
    (("numpy-builtins", "build-slot", "dict-get", "setitem", "importlib", "pkgutil", "nested-"), "pickle-gadgets"),
    ("", "pickle-opcodes"),  # protocols, INST/OBJ, memo and STACK_GLOBAL tricks, EXT, computed names
)


def _hostile_family(name: str) -> str:
    return next(family for prefix, family in _HOSTILE_FAMILIES if name.startswith(prefix))


def _hostile_samples() -> list[Case]:
    return [Case(_hostile_family(s.name), s.name, "hostile", one_file(s.filename, s.build), rule=s.expect)
            for s in hostile.SAMPLES if s.name not in _SAME_BYTES]


def _calls() -> list[Case]:
    return [Case("pickle-calls", name, "hostile", one_file(f"{name}.pkl", lambda data=data: data),
                 why="a load calls a callable no allowlist vouches for", rule="pickle-unknown-call")
            for name, data in CALLS]


def _disguised() -> list[Case]:
    return [Case("text-disguised", name, "hostile", one_file("labels.txt", lambda data=data: data),
                 why="a protocol-0 payload is printable: named like text, still unpickled by some loader",
                 rule="pickle-dangerous-global")
            for name, data in HOSTILE_TEXT.items()]


def _savedmodel() -> list[Case]:
    hostile_pb = savedmodel_samples.saved_model(savedmodel_samples.hostile_graph())
    benign_pb = savedmodel_samples.saved_model(savedmodel_samples.benign_graph())
    return [
        Case("savedmodel", "pyfunc-and-writefile", "hostile", one_file("saved_model.pb", lambda: hostile_pb),
             why="PyFunc runs Python when the graph runs", rule="savedmodel-python-op"),
        Case("benign-samples", "savedmodel-matmul", "benign", one_file("saved_model.pb", lambda: benign_pb),
             vendor="approve"),
    ]


def _benign() -> list[Case]:
    samples = [Case("benign-samples", s.name, "benign", one_file(s.filename, s.build), vendor="approve")
               for s in benign.SAMPLES]
    text = [Case("benign-text", name, "benign", one_file(name, lambda t=text: t.encode()), vendor="approve")
            for name, text in text_shapes.SHAPES.items()]
    return samples + text


register_all([*_hostile_samples(), *_calls(), *_disguised(), *_savedmodel(), *_benign()])
