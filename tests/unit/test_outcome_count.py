"""tests/outcome_count.py fails a run that collects more tests than it reports, as `scripts/test.sh` runs them
(xdist, --dist loadgroup), and leaves a healthy run's exit code alone. Each case is a small suite in its own
folder, run by a pytest of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEADLINE = "collected and reported tests differ"

# Five cases under one node id, as schemathesis' cases were (issue 27): xdist's loadgroup schedules one id once.
SHARED_IDS = '''
import pytest

class Case(pytest.Item):
    def runtest(self):
        pass

class Cases(pytest.File):
    def collect(self):
        for _ in range(5):
            yield Case.from_parent(self, name="same")

def pytest_collect_file(parent, file_path):
    if file_path.name == "cases.txt":
        return Cases.from_parent(parent, path=file_path)
'''

# Every kind of outcome, one deselected test, and a teardown error (the same test again, not another one).
HEALTHY = '''
import pytest

@pytest.fixture
def broken_setup():
    raise RuntimeError("setup")

@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown")

def test_passes(): pass
def test_fails(): assert False
def test_skips(): pytest.skip("no")
@pytest.mark.skip(reason="no")
def test_skipped_at_setup(): pass
@pytest.mark.xfail(strict=False)
def test_xfails(): assert False
@pytest.mark.xfail(strict=False)
def test_xpasses(): pass
def test_setup_error(broken_setup): pass
def test_teardown_error(broken_teardown): pass
@pytest.mark.parametrize("n", range(3))
def test_cases(n): pass
def test_deselected(): pass
'''

# A plugin that swallows one test: collected, never run, never reported.
LOST = '''
def pytest_runtest_protocol(item, nextitem):
    return True if item.name == "test_lost" else None
'''


def run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "tests.outcome_count", "-q", *args]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=300, check=False)


def suite(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # its own rootdir: not this project's settings
    return tmp_path


def test_shared_node_ids_under_xdist_fail_the_run_and_are_named(tmp_path: Path) -> None:
    folder = suite(tmp_path, {"conftest.py": SHARED_IDS, "cases.txt": "", "test_one.py": "def test_a(): pass\n"})
    result = run(folder, "-n", "2", "--dist", "loadgroup")
    assert result.returncode == 1, result.stdout + result.stderr  # every test that ran passed
    assert HEADLINE in result.stdout
    assert "6 tests collected, 2 reported an outcome" in result.stdout
    assert "node ids collected more than once (1): cases.txt::same" in result.stdout


def test_a_test_that_never_reports_fails_the_run(tmp_path: Path) -> None:
    folder = suite(tmp_path, {"conftest.py": LOST, "test_two.py": "def test_kept(): pass\ndef test_lost(): pass\n"})
    result = run(folder)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "2 tests collected, 1 reported an outcome" in result.stdout
    assert "collected, never reported (1): test_two.py::test_lost" in result.stdout


def test_every_outcome_counts_once_and_the_exit_code_is_pytests_own(tmp_path: Path) -> None:
    folder = suite(tmp_path, {"test_all.py": HEALTHY})
    result = run(folder, "-n", "2", "--dist", "loadgroup", "--deselect", "test_all.py::test_deselected")
    assert HEADLINE not in result.stdout, result.stdout
    assert result.returncode == 1  # test_fails and the errors, as pytest alone says (11 collected; the summary
    # counts test_teardown_error twice, passed and error, and this count once)
    assert "1 failed, 5 passed, 2 skipped, 1 xfailed, 1 xpassed, 2 errors" in result.stdout, result.stdout
    passing = suite(tmp_path, {"test_all.py": "def test_a(): pass\n"})
    assert run(passing, "-n", "2").returncode == 0
