"""Bandit's checks over Python source held in memory (no files, no ``# nosec`` honoured)."""

from __future__ import annotations

import functools
import importlib.metadata
import io
import logging
import threading
import warnings
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from app.core.scanners.python_code.modern_syntax import readable

# Checks about code hygiene rather than about what hostile code does (assert, random,
# missing timeouts, unpinned hub downloads, "passwords" such as pad_token) only add noise.
EXCLUDED_TESTS = ("B101", "B311", "B113", "B615", "B105", "B106", "B107")
_RANKS = {"UNDEFINED": 0, "LOW": 1, "MEDIUM": 2, "HIGH": 3}
_LOCK = threading.Lock()  # bandit's test set is shared; its thread safety is undocumented


@dataclass(frozen=True)
class BanditIssue:
    test_id: str
    test_name: str
    severity: str  # LOW / MEDIUM / HIGH, as bandit rates it
    confidence: str
    line: int
    text: str


class BanditError(Exception):
    """Bandit could not analyse the source."""


@dataclass(frozen=True)
class _Bandit:
    core: dict[str, ModuleType]
    tests: Any


@functools.cache
def _bandit() -> _Bandit:
    """bandit's modules and test set, loaded once (plugin loading warns about a deprecated
    stevedore argument, which is not ours to fix)."""
    logging.getLogger("bandit").setLevel(logging.CRITICAL)  # it logs per-file chatter
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from bandit.core import config, meta_ast, metrics, node_visitor, test_set

        tests = test_set.BanditTestSet(config.BanditConfig(), {"exclude": EXCLUDED_TESTS})
    core = {"meta_ast": meta_ast, "metrics": metrics, "node_visitor": node_visitor}
    return _Bandit(core, tests)


def version() -> str:
    """bandit's installed version, read from its metadata: every report names it, most never run it."""
    return importlib.metadata.version("bandit")


def bandit_issues(path: str, source: bytes, min_rank: str = "MEDIUM") -> list[BanditIssue]:
    """Issues rated at least ``min_rank`` in both severity and confidence. Newer-grammar source
    (3.12+) is read as ``modern_syntax`` rewrites it, as the analysis reads it."""
    try:
        results = _results(path, source)
    except SyntaxError as exc:
        try:
            rewritten = readable(source)
        except (SyntaxError, ValueError, RecursionError):
            raise BanditError(f"{type(exc).__name__}: {exc}") from exc
        results = _results(path, rewritten if isinstance(rewritten, bytes) else rewritten.encode())
    floor = _RANKS[min_rank]
    return [
        BanditIssue(r.test_id, r.test, r.severity, r.confidence, r.lineno, r.text)
        for r in results
        if _RANKS.get(r.severity, 0) >= floor and _RANKS.get(r.confidence, 0) >= floor
    ]


def _results(path: str, source: bytes) -> list[Any]:
    """Bandit's raw results; raises SyntaxError when its ``ast`` cannot read the source."""
    bandit = _bandit()
    core = bandit.core
    with _LOCK:
        visitor = core["node_visitor"].BanditNodeVisitor(
            path, io.BytesIO(source), core["meta_ast"].BanditMetaAst(), bandit.tests, False, {},
            core["metrics"].Metrics(),
        )
        try:
            visitor.process(source)
        except (ValueError, RecursionError) as exc:
            raise BanditError(f"{type(exc).__name__}: {exc}") from exc
        return list(visitor.tester.results)
