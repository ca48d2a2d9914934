"""Library allowlist packs (issue 22, item 4): ordinary gensim, sklearn, scipy.sparse and numpy
random-state pickles pass; the same globals used any other way stay findings. Streams are written
the way each library's pickling writes them (tests/corpus/library_packs.py) or assembled from
opcodes; payloads are inert strings and nothing is loaded."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from modelscan.settings import DEFAULT_SETTINGS

from app.core.findings import FindingSink
from app.core.limits import Limits
from app.core.pipeline import VetOptions, vet
from app.core.scanners import all_scanners
from app.core.scanners.pickle_engine import library_packs
from app.core.scanners.pickle_engine.analysis import analyze_pickles
from app.core.scanners.pickle_engine.catalog import Verdict, classify
from app.core.scanners.picklescan_scanner import PicklescanScanner
from app.sources.local import LocalSource
from tests.corpus import library_packs as shapes
from tests.corpus.registry import all_cases
from tests.samples import opcodes as op
from tests.unit.core.scanners import peer_samples

ORDER = ["none", "info", "low", "medium", "high", "critical"]


def findings(data: bytes) -> list[tuple[str, str, str]]:
    sink = FindingSink("f.pkl", "hfvet-pickle")
    analyze_pickles(io.BytesIO(data), sink, Limits())
    return [(f.rule, f.severity.value, f.message) for f in sink.findings]


def worst(data: bytes) -> str:
    return max((sev for _, sev, _ in findings(data)), key=ORDER.index, default="none")


def rules(data: bytes) -> set[str]:
    return {rule for rule, _, _ in findings(data)}


# -- benign: what the libraries write
BENIGN = {
    "gensim4-word2vec": shapes.gensim4_word2vec,
    "gensim3-word2vec": shapes.gensim3_word2vec,
    "gensim-tfidf-partial": shapes.gensim_tfidf,
    "gensim-lda": shapes.gensim_lda,
    "sklearn-pipeline": shapes.sklearn_pipeline,
    "sklearn-bunch": shapes.sklearn_bunch,
    "numpy-generator": lambda: shapes.wrap(shapes.generator(), 4),
    "numpy-bit-generator": lambda: shapes.wrap(shapes.bit_generator(("numpy.random._mt19937", "MT19937")), 4),
    "numpy-randomstate": lambda: shapes.wrap(shapes.random_state(), 4),
    "numpy-randomstate-legacy": lambda: shapes.wrap(shapes.legacy_random_state()),
}


@pytest.mark.parametrize("name", sorted(BENIGN))
def test_library_objects_as_written_are_quiet(name: str) -> None:
    assert findings(BENIGN[name]()) == []


def test_the_benign_shapes_name_the_library_globals() -> None:
    """The stand-ins really write the library's globals (a renamed stand-in would test nothing)."""
    assert b"__builtin__\nhash" in shapes.gensim3_word2vec()
    assert b"numpy.random\n__RandomState_ctor" in shapes.gensim3_word2vec()
    assert b"gensim.models.word2vec" in shapes.gensim4_word2vec() and b"hash" in shapes.gensim4_word2vec()
    assert b"functools" in shapes.gensim_tfidf() and b"smartirs_wlocal" in shapes.gensim_tfidf()


@pytest.mark.parametrize(("module", "name"), [
    ("gensim.models.word2vec", "Word2Vec"), ("gensim.models.keyedvectors", "KeyedVectors"),
    ("gensim.models.keyedvectors", "Word2VecKeyedVectors"), ("gensim.corpora.dictionary", "Dictionary"),
    ("gensim.models.ldamodel", "LdaModel"), ("gensim.models.doc2vec", "DocvecsArray"),
    ("sklearn.utils._bunch", "Bunch"), ("sklearn.pipeline", "Pipeline"),
    ("scipy.sparse._csr", "csr_matrix"), ("scipy.sparse._coo", "coo_matrix"),
    ("numpy.random._pickle", "__randomstate_ctor"), ("functools", "partial"), ("__builtin__", "hash"),
])
def test_pack_entries_are_allowlisted(module: str, name: str) -> None:
    result = classify(module, name)
    assert result.verdict is Verdict.SAFE and result.reason.startswith("library pack"), result.reason


# -- hostile: the same globals used any other way
@pytest.mark.parametrize(("module", "name", "arg"), [("posix", "system", op.PAYLOAD), ("builtins", "eval", "1+1")])
def test_partial_over_a_command_stays_critical(module: str, name: str, arg: str) -> None:
    # functools.partial(os.system, "echo pwned")(): partial's __call__ calls its func
    # (Modules/_functoolsmodule.c partial_call); the wrapped callable is what runs.
    wrapped = op.call(op.glob("functools", "partial"), op.glob(module, name), op.uni(arg))
    data = shapes.wrap(wrapped + op.EMPTY_TUPLE + op.REDUCE)
    assert worst(data) == "critical"
    assert {"pickle-unsafe-argument", "pickle-dangerous-global"} <= rules(data)


def test_partial_over_an_unknown_function_is_critical() -> None:
    # partial(somelib.helper): only allowlisted callables may be wrapped; the wrapped one runs later.
    data = shapes.wrap(op.call(op.glob("functools", "partial"), op.glob("somelib", "helper")))
    assert worst(data) == "critical"
    assert "pickle-unsafe-argument" in rules(data)


def test_partial_build_state_cannot_swap_the_callable() -> None:
    # partial.__setstate__((func, args, kwds, dict)) replaces func (Modules/_functoolsmodule.c
    # partial_setstate): a benign REDUCE argument then a state whose func is a class its pack
    # vouches for only as NEWOBJ + BUILD (its __init__ is not proven safe).
    state = (op.MARK + op.glob("gensim.models.word2vec", "Word2Vec") + op.EMPTY_TUPLE + op.EMPTY_DICT + op.NONE
             + op.TUPLE)
    data = shapes.wrap(op.call(op.glob("functools", "partial"), op.glob("gensim.models.tfidfmodel",
                                                                         "smartirs_wlocal")) + state + op.BUILD)
    assert worst(data) == "critical"
    assert any("sets the callable it calls" in m for _, _, m in findings(data))


def test_randomstate_ctor_with_an_attacker_callable_is_critical() -> None:
    # numpy/random/_pickle.py __randomstate_ctor: RandomState(bit_generator_ctor(name)): the second
    # argument is called with the first. builtins.hash is allowlisted as a value, never as this.
    data = shapes.wrap(shapes.random_state(ctor="builtins.hash"))
    assert worst(data) == "critical"
    assert any("argument 1 is called" in m for _, _, m in findings(data))
    assert worst(shapes.wrap(shapes.random_state(ctor="somelib.run_it"))) == "critical"


def test_randomstate_ctor_with_a_foreign_bit_generator_is_critical() -> None:
    # __bit_generator_ctor(bit_generator): a class is instantiated as given (numpy/random/_pickle.py).
    assert worst(shapes.wrap(shapes.random_state(name="echo pwned"))) == "critical"
    foreign = op.call(op.glob("numpy.random._pickle", "__bit_generator_ctor"), op.glob("somelib", "Evil"))
    assert worst(shapes.wrap(foreign)) == "critical"
    packed = op.call(op.glob("numpy.random._pickle", "__bit_generator_ctor"),
                     op.glob("gensim.models.word2vec", "Word2Vec"))
    assert any("not one of numpy's bit generators" in m for _, _, m in findings(shapes.wrap(packed)))


def test_legacy_randomstate_ctor_takes_no_arguments() -> None:
    # numpy/random/__init__.py __RandomState_ctor() takes none: arguments are not numpy's pickle.
    data = shapes.wrap(op.call(op.glob("numpy.random", "__RandomState_ctor"), op.uni(op.PAYLOAD)))
    assert worst(data) == "critical"


def test_seed_sequence_helper_only_builds_a_seed_sequence() -> None:
    # Cython's __pyx_unpickle_SeedSequence(type, checksum, state) runs type.__new__(type).
    data = shapes.wrap(op.call(op.glob("numpy.random.bit_generator", "__pyx_unpickle_SeedSequence"),
                               op.glob("somelib", "Evil"), op.binint(1), op.NONE))
    assert worst(data) == "critical"


def test_builtin_held_as_a_value_but_called_stays_critical() -> None:
    # load_reduce: builtins.hash(...) called by the stream itself.
    assert worst(shapes.wrap(op.call(op.glob("builtins", "hash"), op.uni("x")))) == "critical"
    # memoized, then fetched again and called (BINGET): the same global, another path.
    assert worst(shapes.wrap(_memoized_then_called("hash", "x"))) == "critical"


@pytest.mark.parametrize("name", ["eval", "exec", "getattr", "open", "__import__"])
def test_dangerous_builtins_are_critical_even_as_values(name: str) -> None:
    # Only reviewed builtins are allowed as values; a gensim hashfxn of eval would run when the
    # model hashes a word (gensim Word2Vec.seeded_vector calls self.hashfxn(...)).
    held = shapes.wrap(op.glob("gensim.models.word2vec", "Word2Vec") + op.EMPTY_TUPLE + op.NEWOBJ + op.EMPTY_DICT
                       + op.uni("hashfxn") + op.glob("builtins", name) + op.SETITEM + op.BUILD)
    assert worst(held) == "critical"
    assert worst(shapes.wrap(_memoized_then_called(name, "1"))) == "critical"


def _memoized_then_called(name: str, arg: str) -> bytes:
    """GLOBAL builtins.<name>, BINPUT, POP; later BINGET and REDUCE: imported as a value, called elsewhere."""
    return (op.glob("builtins", name) + op.binput(0) + op.POP + op.binget(0) + op.MARK + op.uni(arg) + op.TUPLE
            + op.REDUCE)


def test_pack_class_with_a_dangerous_callable_in_its_arguments_is_critical() -> None:
    # load_reduce: Pipeline(posix.system): sklearn's Pipeline keeps its steps and calls them later.
    data = shapes.wrap(op.call(op.glob("sklearn.pipeline", "Pipeline"), op.glob("somelib", "run_it")))
    assert worst(data) == "critical"


def test_pack_class_called_where_only_newobj_is_vouched_is_high() -> None:
    # REDUCE runs Word2Vec.__init__ (trains a model: not proven to only restore state); its pack
    # vouches for NEWOBJ + BUILD only.
    data = shapes.wrap(op.call(op.glob("gensim.models.word2vec", "Word2Vec"), op.uni("corpus.txt")))
    assert ("pickle-unknown-call", "high") in {(r, s) for r, s, _ in findings(data)}


def test_build_on_what_a_pack_does_not_vouch_for_build_is_high() -> None:
    # load_build runs __setstate__ (or setattr) on whatever the stack holds: the result of a packed
    # function, or a namedtuple record, is vouched for its call only.
    called = op.call(op.glob("gensim.utils", "identity"), op.uni("x"))
    data = shapes.wrap(called + op.EMPTY_DICT + op.uni("k") + op.uni("v") + op.SETITEM + op.BUILD)
    assert ("pickle-object-mutation", "high") in {(r, s) for r, s, _ in findings(data)}
    assert any("does not vouch for" in m for _, _, m in findings(data))


def test_pack_class_state_must_be_a_dict() -> None:
    # The derivation judged __setstate__ on a state dict (sklearn's state.pop(...)): an object as
    # state would run its own methods of those names.
    obj = op.glob("gensim.models.word2vec", "Word2Vec") + op.EMPTY_TUPLE + op.NEWOBJ
    data = shapes.wrap(op.glob("sklearn.pipeline", "Pipeline") + op.EMPTY_TUPLE + op.NEWOBJ + obj + op.BUILD)
    assert ("pickle-object-mutation", "high") in {(r, s) for r, s, _ in findings(data)}


@pytest.mark.parametrize(("module", "name"), [("posix", "system"), ("somelib", "helper")])
def test_pack_class_state_holding_a_foreign_callable_is_critical(module: str, name: str) -> None:
    # sklearn's FunctionTransformer calls self.func in transform(): allowed as state, but what it
    # holds must itself be allowlisted (an unknown function is pickle-unsafe-argument).
    cls = op.glob("sklearn.preprocessing._function_transformer", "FunctionTransformer")
    state = op.EMPTY_DICT + op.uni("func") + op.glob(module, name) + op.SETITEM
    data = shapes.wrap(cls + op.EMPTY_TUPLE + op.NEWOBJ + state + op.BUILD)
    assert worst(data) == "critical"
    assert "pickle-unsafe-argument" in rules(data)


# -- the data file
def test_no_pack_entry_is_dangerous_to_the_catalog() -> None:
    """A pack never overrides the denylist: every entry still classifies as the pack's."""
    for name, entry in library_packs.entries().items():
        module, _, attr = name.rpartition(".")
        result = classify(module, attr)
        assert result.verdict is Verdict.SAFE, (name, result.reason)
        assert entry.overrides_module == (name == "builtins.hash")


def test_the_data_file_has_one_entry_per_line_with_versions() -> None:
    text = library_packs.DATA_FILE.read_text(encoding="utf-8")
    data = json.loads(text)
    assert {s.split("@")[0] for s in data["sources"]} >= {"gensim", "sklearn", "scipy", "numpy"}
    assert all("@" in s and s.split("@")[1] for s in data["sources"])
    derived = sum(len(section) for section in data["derived"].values())
    assert text.count("\n") >= derived + len(data["hand_picked"])
    for section in data["derived"].values():
        for uses, reason in section.values():
            assert set(uses.split()) <= set(library_packs.USES) and reason


def test_state_holding_functions_are_not_vouched() -> None:
    """Classes that keep a callable to call later are vouched only where their derivation says so;
    sklearn's FunctionTransformer is allowed as state, and what it holds is judged (test above)."""
    assert library_packs.lookup("gensim.models.word2vec.Word2Vec") is not None
    entry = library_packs.lookup("gensim.models.word2vec.Word2Vec")
    assert entry is not None and not entry.allows("call")
    assert library_packs.lookup("gensim.models.phrases.Phrases") is None or \
        not library_packs.lookup("gensim.models.phrases.Phrases").allows("call")  # __init__ reaches pickle.loads


# -- the peers: a denylist hit on an import hfvet checks per use is explained, not dropped
def _peer_findings(tmp_path: Path, name: str, data: bytes) -> list[tuple[str, str, str]]:
    (tmp_path / name).write_bytes(data)
    report = peer_samples.vet_with(PicklescanScanner(), tmp_path)
    return sorted((f.rule, f.severity.value, f.evidence or "") for f in report.findings)


def test_picklescan_partial_hit_stays_as_explained_evidence(tmp_path: Path) -> None:
    # picklescan denies functools.partial by name (picklescan/scanner.py _unsafe_globals); hfvet's
    # engine checks what each partial wraps, so the hit is info with the reason, never silence.
    found = _peer_findings(tmp_path, "tfidf.model", shapes.gensim_tfidf())
    assert ("picklescan:checked-global", "info", "functools.partial") in found
    assert not [f for f in found if f[1] in ("high", "critical")]


def test_picklescan_still_flags_what_a_partial_wraps(tmp_path: Path) -> None:
    wrapped = op.call(op.glob("functools", "partial"), op.glob("posix", "system"), op.uni(op.PAYLOAD))
    found = _peer_findings(tmp_path, "model.pkl", shapes.wrap(wrapped + op.EMPTY_TUPLE + op.REDUCE))
    assert ("picklescan:dangerous-global", "critical", "posix.system") in found


def test_modelscan_denies_no_pack_entry() -> None:
    """modelscan's denylist names none of the pack entries today; an upgrade that starts to must be
    handled like picklescan's functools.partial (explained, not dropped)."""
    denied = {f"{module}.{name}" for level in DEFAULT_SETTINGS["unsafe_globals"].values()
              for module, names in level.items() for name in (names if names != "*" else ["*"])}
    modules = {d.removesuffix(".*") for d in denied if d.endswith(".*")}
    for name in library_packs.entries():
        assert name not in denied and name.rpartition(".")[0] not in modules, name


@pytest.mark.parametrize("case", ["gensim-tfidf-partial", "gensim3-word2vec", "scipy-sparse-npz"])
def test_vendor_repos_of_library_pickles_are_approved_with_every_peer(case: str, tmp_path: Path) -> None:
    files = {c.name: c for c in all_cases() if c.family == shapes.FAMILY}[case].files()
    for path, data in files.items():
        (tmp_path / path).write_bytes(data)
    report = vet(LocalSource(tmp_path), all_scanners(), options=VetOptions(peers="always"))
    assert not [f for f in report.findings if f.severity.value in ("high", "critical")], report.findings
