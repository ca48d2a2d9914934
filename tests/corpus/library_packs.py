"""Pickles of ordinary library objects, written the way each library's pickling writes them
(issue 22, item 4): gensim models (4.x and the 3.x/py2-era shapes of the wild corpus), sklearn
estimators and Bunch, scipy.sparse matrices inside an ``.npz``, numpy's random-state constructors.

gensim, sklearn and scipy are not installed: stand-in classes are registered under the library's
module names while ``pickle.dumps`` writes them (see ``stand_ins.py``), and numpy's random-state
shapes are assembled from opcodes as ``numpy/random/_pickle.py`` and ``mtrand.pyx``'s
``__reduce__`` emit them. Nothing here is ever loaded.
"""

from __future__ import annotations

import functools
import io
import pickle
import zipfile
from typing import Any

from tests.corpus.registry import Case, one_file, register_all
from tests.corpus.stand_ins import instance, modules, stand_in
from tests.samples import opcodes as op

FAMILY = "library-packs"

KeyedVectors = stand_in("gensim.models.keyedvectors", "KeyedVectors")
Word2VecKeyedVectors = stand_in("gensim.models.keyedvectors", "Word2VecKeyedVectors")
Word2Vec = stand_in("gensim.models.word2vec", "Word2Vec")
Vocab = stand_in("gensim.models.word2vec", "Vocab")
Dictionary = stand_in("gensim.corpora.dictionary", "Dictionary")
LdaModel = stand_in("gensim.models.ldamodel", "LdaModel")
LdaState = stand_in("gensim.models.ldamodel", "LdaState")
TfidfModel = stand_in("gensim.models.tfidfmodel", "TfidfModel")
Pipeline = stand_in("sklearn.pipeline", "Pipeline")
StandardScaler = stand_in("sklearn.preprocessing._data", "StandardScaler")
LogisticRegression = stand_in("sklearn.linear_model._logistic", "LogisticRegression")
Bunch = stand_in("sklearn.utils._bunch", "Bunch", (dict,))
CsrMatrix = stand_in("scipy.sparse._csr", "csr_matrix")


def _function(module: str, name: str) -> Any:
    def fn(*args: Any, **kwargs: Any) -> None:
        return None

    fn.__module__, fn.__qualname__, fn.__name__ = module, name, name
    return fn


smartirs_wlocal = _function("gensim.models.tfidfmodel", "smartirs_wlocal")
smartirs_wglobal = _function("gensim.models.tfidfmodel", "smartirs_wglobal")
smartirs_normalize = _function("gensim.models.tfidfmodel", "smartirs_normalize")


# -- numpy's random state, as numpy writes it
def legacy_random_state() -> bytes:
    """numpy < 1.17 (and gensim 3.x models): ``__RandomState_ctor()`` then BUILD with
    ``get_state()``'s tuple ('MT19937', key array, pos, has_gauss, cached_gaussian)."""
    state = op.MARK + op.uni("MT19937") + op.binbytes(bytes(2496)) + op.binint(624) + op.binint(0) + op.NONE + op.TUPLE
    return op.glob("numpy.random", "__RandomState_ctor") + op.EMPTY_TUPLE + op.REDUCE + state + op.BUILD


def _state_dict(name: str) -> bytes:
    return (op.EMPTY_DICT + op.MARK + op.uni("bit_generator") + op.uni(name) + op.uni("state")
            + op.EMPTY_DICT + op.uni("pos") + op.binint(624) + op.SETITEMS)


def random_state(ctor: str = "__bit_generator_ctor", name: str = "MT19937",
                 bit_generator: bytes | None = None) -> bytes:
    """numpy >= 2 ``RandomState.__reduce__``: ``__randomstate_ctor(name, __bit_generator_ctor)``
    then BUILD with ``get_state(legacy=False)`` (numpy/random/mtrand.pyx)."""
    args = op.uni(name) if bit_generator is None else bit_generator
    return (op.call(op.glob("numpy.random._pickle", "__randomstate_ctor"), args,
                    op.glob("numpy.random._pickle", ctor) if "." not in ctor else op.glob(*ctor.rsplit(".", 1)))
            + _state_dict(name) + op.BUILD)


def bit_generator(cls: tuple[str, str] = ("numpy.random._pcg64", "PCG64")) -> bytes:
    """``BitGenerator.__reduce__``: ``__bit_generator_ctor(type(self))`` then BUILD with
    ``(state, seed_seq)``; the SeedSequence through Cython's ``__pyx_unpickle_SeedSequence``."""
    # Cython's __reduce_cython__: (__pyx_unpickle_SeedSequence, (type, checksum, None), state) when the
    # state holds objects, so BUILD (__setstate_cython__) sets the fields.
    fields = op.MARK + op.binint(0) + op.EMPTY_TUPLE + op.binint(4) + op.binint(0) + op.TUPLE
    seed = op.call(op.glob("numpy.random.bit_generator", "__pyx_unpickle_SeedSequence"),
                   op.glob("numpy.random.bit_generator", "SeedSequence"), op.binint(0x1234), op.NONE)
    seed += fields + op.BUILD
    return (op.call(op.glob("numpy.random._pickle", "__bit_generator_ctor"), op.glob(*cls))
            + op.MARK + _state_dict(cls[1]) + seed + op.TUPLE + op.BUILD)


def generator() -> bytes:
    """numpy >= 2 ``Generator.__reduce__``: ``__generator_ctor(bit_generator_instance)``."""
    return op.call(op.glob("numpy.random._pickle", "__generator_ctor"), bit_generator())


def wrap(body: bytes, protocol: int = 2) -> bytes:
    return op.proto(protocol) + body + op.STOP


# -- gensim
def gensim4_word2vec() -> bytes:
    """gensim 4 ``SaveLoad.save``: ``pickle.dump(self, protocol=4)``: NEWOBJ + BUILD of ``__dict__``,
    ``hashfxn=hash`` (a builtin held, never called at load) and a numpy RandomState in ``random``."""
    wv = instance(KeyedVectors, vector_size=100, index_to_key=["a", "b"], key_to_index={"a": 0, "b": 1},
                  next_index=0, norms=None, mapfile_path=None)
    model = instance(Word2Vec, wv=wv, hashfxn=hash, random=_RandomStateShape(), callbacks=(), workers=3,
                     lifecycle_events=[{"msg": "training", "datetime": "2024-01-01", "gensim": "4.3.3"}],
                     corpus_count=2, sg=0, window=5)
    with modules(KeyedVectors, Word2Vec, *_NUMPY_RANDOM):
        return pickle.dumps(model, protocol=4)


def gensim3_word2vec() -> bytes:
    """A gensim 3.x model as its test data ships it (py2, protocol 2): ``__builtin__.hash``,
    numpy's pre-1.17 ``__RandomState_ctor``, the old ``Vocab`` records and keyed vectors."""
    vocab = {w: instance(Vocab, count=3, index=i, sample_int=42) for i, w in enumerate(["the", "cat"])}
    wv = instance(Word2VecKeyedVectors, vocab=vocab, index2word=["the", "cat"], vector_size=10)
    model = instance(Word2Vec, wv=wv, hashfxn=hash, random=_LegacyRandomState(), sg=1,
                     __scan_vocab_called=True)
    with modules(Word2VecKeyedVectors, Word2Vec, Vocab, *_NUMPY_RANDOM):
        return pickle.dumps(model, protocol=2, fix_imports=True)


def gensim_tfidf() -> bytes:
    """gensim's TfidfModel keeps ``functools.partial(smartirs_*, scheme=...)``: partial pickles as
    REDUCE ``partial(func)`` then BUILD ``(func, args, keywords, __dict__)``."""
    model = instance(TfidfModel, num_docs=2, num_nnz=4, smartirs="ntc",
                     wlocal=functools.partial(smartirs_wlocal, local_scheme="n"),
                     wglobal=functools.partial(smartirs_wglobal, global_scheme="t"),
                     normalize=functools.partial(smartirs_normalize, norm_scheme="c"),
                     idfs={0: 1.0, 1: 0.5}, dfs={0: 1, 1: 2})
    with modules(TfidfModel, smartirs_wlocal, smartirs_wglobal, smartirs_normalize):
        return pickle.dumps(model, protocol=4)


def gensim_lda() -> bytes:
    state = instance(LdaState, eta=0.1, sstats=[[0.0]], numdocs=2, dtype="float32")
    dictionary = instance(Dictionary, token2id={"a": 0}, id2token={}, dfs={0: 1}, num_docs=1, num_pos=1,
                          num_nnz=1)
    model = instance(LdaModel, state=state, id2word=dictionary, num_topics=2, random_state=_RandomStateShape(),
                     dispatcher=None, distributed=False)
    with modules(LdaState, Dictionary, LdaModel, *_NUMPY_RANDOM):
        return pickle.dumps(model, protocol=4)


# -- sklearn
def sklearn_pipeline() -> bytes:
    """``BaseEstimator.__getstate__`` adds ``_sklearn_version``; ``pickle.dump`` (protocol 5 today)."""
    scaler = instance(StandardScaler, with_mean=True, with_std=True, copy=True, n_features_in_=2,
                      _sklearn_version="1.5.2")
    clf = instance(LogisticRegression, C=1.0, penalty="l2", classes_=[0, 1], coef_=[[0.1, 0.2]],
                   _sklearn_version="1.5.2")
    pipe = instance(Pipeline, steps=[("scale", scaler), ("clf", clf)], memory=None, verbose=False,
                    _sklearn_version="1.5.2")
    with modules(Pipeline, StandardScaler, LogisticRegression):
        return pickle.dumps(pipe, protocol=5)


def sklearn_bunch() -> bytes:
    """``sklearn.utils.Bunch``, a dict subclass: NEWOBJ, SETITEMS of its keys, BUILD of its __dict__."""
    bunch = Bunch(data=[[1.0, 2.0]], target=[0], feature_names=["a", "b"], DESCR="toy")
    bunch.__dict__["_deprecated_key_to_warnings"] = {}
    with modules(Bunch):
        return pickle.dumps(bunch, protocol=4)


# -- scipy.sparse inside an .npz (np.savez of an object array holding the matrix)
def scipy_sparse_npz() -> bytes:
    matrix = instance(CsrMatrix, _shape=(2, 2), maxprint=50, indices=[0, 1], indptr=[0, 1, 2], data=[1.0, 2.0])
    with modules(CsrMatrix):
        body = pickle.dumps(matrix, protocol=3)
    header = b"{'descr': '|O', 'fortran_order': False, 'shape': (), }"
    header += b" " * (117 - len(header)) + b"\n"  # magic, version, length and header: 128 bytes
    npy = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + body
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("matrix.npy", npy)
    return buf.getvalue()


# -- stand-ins for numpy's random state inside a library object
def _ctor(name: str) -> Any:
    return _function("numpy.random._pickle" if name != "__RandomState_ctor" else "numpy.random", name)


_RANDOMSTATE_CTOR = _ctor("__randomstate_ctor")
_BIT_GENERATOR_CTOR = _ctor("__bit_generator_ctor")
_LEGACY_CTOR = _ctor("__RandomState_ctor")
_NUMPY_RANDOM = (_RANDOMSTATE_CTOR, _BIT_GENERATOR_CTOR, _LEGACY_CTOR)


class _RandomStateShape:
    """numpy >= 2 ``RandomState.__reduce__`` (mtrand.pyx)."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_RANDOMSTATE_CTOR, ("MT19937", _BIT_GENERATOR_CTOR),
                {"bit_generator": "MT19937", "state": {"key": list(range(4)), "pos": 624},
                 "has_gauss": 0, "gauss": 0.0})


class _LegacyRandomState:
    """numpy < 1.17 ``RandomState.__reduce__``: ``(np.random.__RandomState_ctor, (), get_state())``."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_LEGACY_CTOR, (), ("MT19937", bytes(16), 624, 0, 0.0))


def _benign(name: str, path: str, build: Any, why: str) -> Case:
    return Case(FAMILY, name, "benign", one_file(path, build), why=why, vendor="approve")


register_all([
    _benign("gensim4-word2vec", "word2vec.model", gensim4_word2vec,
            "gensim 4 Word2Vec: NEWOBJ + BUILD, hashfxn=hash held as a value, numpy RandomState ctor"),
    _benign("gensim3-word2vec", "w2v_py2.model", gensim3_word2vec,
            "gensim 3.x py2 pickle: __builtin__.hash, numpy.random.__RandomState_ctor, Vocab records"),
    _benign("gensim-tfidf-partial", "tfidf.model", gensim_tfidf,
            "TfidfModel: functools.partial over gensim's smartirs_* weighting functions"),
    _benign("gensim-lda", "lda.model", gensim_lda, "LdaModel with LdaState, Dictionary and a RandomState"),
    _benign("sklearn-pipeline", "model.pkl", sklearn_pipeline, "sklearn Pipeline(StandardScaler, LogisticRegression)"),
    _benign("sklearn-bunch", "dataset.pkl", sklearn_bunch, "sklearn Bunch (dict subclass: NEWOBJ, SETITEMS, BUILD)"),
    _benign("scipy-sparse-npz", "matrices.npz", scipy_sparse_npz,
            "np.savez of an object array holding a scipy.sparse csr_matrix"),
    _benign("numpy-generator", "rng.pkl", lambda: wrap(generator(), 4),
            "numpy Generator: __generator_ctor(__bit_generator_ctor(PCG64) + state, SeedSequence)"),
    _benign("numpy-randomstate-legacy", "rng_legacy.pkl", lambda: wrap(legacy_random_state()),
            "numpy < 1.17 RandomState: __RandomState_ctor() + BUILD get_state() tuple"),
])
