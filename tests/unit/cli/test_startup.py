"""Light commands start light (issue 13 item 5), guarded by what they import, not by a timer.

`hfvet --help` lists the commands from their summaries without importing them, and a scan of a
plain pickle imports no library of a format it does not hold. Timings: bench/bench_startup.py.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[3]
PROBE = """
import sys
from app.cli.main import main
sys.argv = ["hfvet", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print("\\nLOADED", " ".join(sorted({name.split(".")[0] for name in sys.modules} | set(sys.modules))))
"""


def imported_by(*args: str, env: dict[str, str] | None = None) -> set[str]:
    """Module names (and their top-level packages) a fresh `hfvet ARGS` process imported."""
    result = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=ROOT, capture_output=True, text=True,
                            timeout=120, check=False, env=None if env is None else {**os.environ, **env})
    marker = result.stdout.rsplit("\nLOADED ", 1)
    assert len(marker) == 2, result.stdout + result.stderr
    return set(marker[1].split())


HEAVY = {"numpy", "yara", "sqlalchemy", "fastapi", "h5py", "py7zr", "gguf", "bandit", "jinja2", "celpy",
         "rapidfuzz", "modelscan", "picklescan", "app.core.scanners", "app.services"}


def test_help_imports_no_command_and_no_heavy_library() -> None:
    loaded = imported_by("--help")
    assert not loaded & HEAVY, sorted(loaded & HEAVY)
    assert not {ref.module for ref in cli_main.COMMANDS.values()} & loaded


def test_scanning_a_plain_pickle_imports_no_other_formats_libraries(tmp_path: Path) -> None:
    tiny = tmp_path / "tiny.pkl"
    tiny.write_bytes(pickle.dumps({"weights": [1, 2, 3]}))
    loaded = imported_by("scan", str(tiny), "--policy", "interim")  # the policy engine is policy check's
    assert "app.core.scanners.pickle_scanner" in loaded  # it did scan
    # numpy and h5py too: the peers are skipped on a pickle hfvet read whole (modelscan's pickle scanner
    # package imports h5py), and numpy loads only for a .npy header or a pickled dtype.
    unused = {"py7zr", "gguf", "fastapi", "sqlalchemy", "alembic", "bandit", "jinja2", "celpy", "numpy", "h5py"}
    assert not loaded & unused, sorted(loaded & unused)


def test_policy_check_imports_no_scanner_store_or_web_library() -> None:
    loaded = imported_by("policy", "check", str(ROOT / "policies" / "default.yaml"))
    assert "app.core.policy" in loaded  # it did check
    assert not loaded & {"app.core.scanners", "numpy", "yara", "sqlalchemy", "fastapi"}, sorted(loaded & HEAVY)


def test_with_warm_caches_scan_and_policy_check_never_load_celpy(tmp_path: Path) -> None:
    """celpy (whose first Environment builds the Lark parser) loads only when a parse tree is not cached.

    `policy check` parses every policy's rules and leaves their trees in the cache; after it, neither
    a scan with the default policy nor `policy check` itself imports celpy, so no parser is built.
    """
    tiny = tmp_path / "tiny.pkl"
    tiny.write_bytes(pickle.dumps({"weights": [1, 2, 3]}))
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert "celpy" in imported_by("policy", "check", env=env)  # cold: the trees are parsed
    assert list((tmp_path / "cache" / "hfvet" / "cel-trees").glob("*.json"))
    scanned = imported_by("scan", str(tiny), env=env)
    assert {"app.core.scanners.pickle_scanner", "app.core.policy.engine"} <= scanned  # scanned, then decided
    # Nor the lookalike-org libraries: a local scan has no org to compare.
    lookalike_and_cel = {"celpy", "rapidfuzz", "confusable_homoglyphs.confusables"}
    assert not scanned & lookalike_and_cel, sorted(scanned & lookalike_and_cel)
    checked = imported_by("policy", "check", env=env)
    assert "app.core.policy.loader" in checked
    assert "celpy" not in checked


def help_text(monkeypatch: pytest.MonkeyPatch, *, real_commands: bool) -> str:
    if real_commands:
        monkeypatch.setattr(cli_main, "listed_command", cli_main.load_command)
    result = CliRunner().invoke(cli_main.app, ["--help"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_help_lists_exactly_what_the_imported_commands_would_show(monkeypatch: pytest.MonkeyPatch) -> None:
    listed = help_text(monkeypatch, real_commands=False)
    assert listed == help_text(monkeypatch, real_commands=True), "update the summaries in app/cli/main.py"


def test_every_summary_is_the_first_paragraph_of_the_command_help() -> None:
    for name, ref in cli_main.COMMANDS.items():
        command = cli_main.load_command(name)
        assert (command.help or "").split("\n\n")[0] == ref.summary, name
        assert "...." not in ref.summary, name  # an ellipsis then a full stop reads as a typo
