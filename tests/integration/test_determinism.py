"""The same bytes give the same report at any worker count (issue 22, item 6).

Each scan runs in a fresh interpreter, as `hfvet scan` does: import state is new every time, which
is how a race between scan threads importing a library first (modelscan's circular import) showed:
a `scan-error` in one run and not the next, and on every run of a repo with a single `.npy` file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.corpus.registry import Case, all_cases

WORKERS = (1, 2, 8)
ENTRY = "import sys; from app.cli.entry import main; sys.argv[0] = 'hfvet'; main()"
HOSTILE_PER_FAMILY = 2  # the first cases of each hostile family, in registry order: every engine's findings
BENIGN = "hard-benign"


def _corpus() -> list[Case]:
    cases = all_cases()
    chosen = [c for c in cases if c.family == BENIGN]
    taken: dict[str, int] = {}
    for case in cases:
        if case.kind == "hostile" and taken.get(case.family, 0) < HOSTILE_PER_FAMILY:
            taken[case.family] = taken.get(case.family, 0) + 1
            chosen.append(case)
    return chosen


def _single_file_repo(folder: Path) -> Path:
    """One `.npy` with a pickled object array: numpy files are always corroborated by both peers."""
    case = next(c for c in all_cases() if c.key == "hard-benign/npy-object-labels")
    files = case.files()
    assert len(files) == 1
    return case.write(folder)


def _scan(folder: Path, workers: int, peers: str, home: Path) -> dict[str, Any]:
    # A different hash seed per run too: set and dict-of-str iteration orders differ from run to run.
    env = {**os.environ, "HFVET_SCAN_WORKERS": str(workers), "PYTHONHASHSEED": str(workers),
           "HFVET_PEERS": peers, "HFVET_POLICY": "default",
           "XDG_CACHE_HOME": str(home / "cache"), "XDG_DATA_HOME": str(home / "data")}
    done = subprocess.run([sys.executable, "-c", ENTRY, "scan", str(folder), "--format", "json",
                           "--no-store"], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode in {0, 1, 3}, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def comparable(report: dict[str, Any]) -> str:
    """The report as bytes, minus what is timing by nature (the vet's wall seconds)."""
    stats = {k: v for k, v in report["stats"].items() if k != "seconds"}
    return json.dumps({**report, "stats": stats}, sort_keys=False, indent=1)


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("determinism")
    corpus = root / "corpus"
    for case in _corpus():
        case.write(corpus / case.family / case.name)
    return {"corpus": corpus, "single-file": _single_file_repo(root / "single")}


# "always": the peers run on every pickle too, not only where hfvet's engine found something.
@pytest.mark.parametrize(("repo", "peers"), [("corpus", "auto"), ("corpus", "always"), ("single-file", "auto")])
def test_a_scan_is_the_same_report_at_every_worker_count(
    repo: str, peers: str, repos: dict[str, Path], tmp_path: Path
) -> None:
    reports = {n: comparable(_scan(repos[repo], n, peers, tmp_path)) for n in WORKERS}
    assert reports[1] == reports[2] == reports[8]
    first = json.loads(reports[1])
    assert first["stats"]["files"] == len(first["files"]) > 0
    # The same failure in every run would also agree: no engine may fail on a benign file (hostile
    # cases may fail an engine on purpose: broken streams, corrupt archives).
    errors = [f for f in first["findings"] if f["rule"] == "scan-error"]
    assert [f for f in errors if repo == "single-file" or f["path"].startswith(f"{BENIGN}/")] == []

def test_the_report_comparison_ignores_only_the_timing() -> None:
    report = {"findings": [{"rule": "x"}], "stats": {"files": 1, "seconds": 0.5}}
    slower = {"findings": [{"rule": "x"}], "stats": {"files": 1, "seconds": 9.0}}
    other = {"findings": [{"rule": "y"}], "stats": {"files": 1, "seconds": 0.5}}
    assert comparable(report) == comparable(slower)
    assert comparable(report) != comparable(other)
