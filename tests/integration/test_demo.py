"""The README's main job: the demo vets every example through `hfvet serve` and the fixture hub, and
the deploy gate approves the vendor repo and refuses the third-party one."""

import re
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from app.cli.demo import STORE_FILE, print_next_steps, run_demo
from app.cli.main import app
from app.cli.progress import vet_progress
from app.core.verdict import Verdict

NVIDIA = "nvidia/DeepSeek-V4-Flash-NVFP4"
CANADA = "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP"


def test_demo_vets_every_example_through_the_service_and_shows_the_gate() -> None:
    out = StringIO()
    result = run_demo(Console(file=out, width=200))
    verdicts = {row.example.repo_id: row.report.verdict for row in result.rows}
    assert verdicts[NVIDIA] is Verdict.APPROVE
    assert verdicts[CANADA] is Verdict.REJECT
    assert all(row.as_expected for row in result.rows), verdicts
    for row in result.rows:
        assert len(row.report.revision or "") == 40  # pinned to a commit, not a branch
        assert row.report.decision.policy.sha256  # the policy that decided is recorded
        assert row.report.stats.bytes_read <= row.report.stats.repo_bytes
    gates = {g.repo: g for g in result.gates}
    assert gates[NVIDIA].status == 200 and gates[NVIDIA].doc["revision"] == result.rows[0].report.revision
    assert gates[CANADA].status == 403 and gates[CANADA].doc["verdict"] == "reject"
    text = out.getvalue()
    assert re.search(r"hfvet serve at http://127\.0\.0\.1:\d+", text)
    assert f"200 approved  pull exactly {gates[NVIDIA].doc['revision']}" in text
    assert "403 denied (reject)" in text and "third-party" in text


def test_the_in_process_demo_needs_no_server() -> None:
    out = StringIO()
    result = run_demo(Console(file=out, width=200), service=False)
    assert all(row.as_expected for row in result.rows) and result.gates == []
    assert CANADA in out.getvalue() and "hfvet serve at" not in out.getvalue()  # no server started


def test_progress_is_off_when_not_a_terminal() -> None:
    with vet_progress(3, "x", enabled=False) as progress:
        assert progress is None


def test_the_demo_keeps_its_store_when_asked_and_says_how_to_browse_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Piped, as in a CI log: ids and URLs whole; then the next steps, with the kept store's path."""
    monkeypatch.delenv("COLUMNS", raising=False)
    keep = tmp_path / "kept"
    result = CliRunner().invoke(app, ["demo", "--keep", str(keep)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert any(NVIDIA in line and "approve" in line for line in lines)  # one table row, not `-V4-Flash-NVFP4`
    assert any(CANADA in line and "reject" in line for line in lines)
    assert any(re.search(rf"'http://127\.0\.0\.1:\d+/gate\?repo={CANADA}'", line) for line in lines)
    store = keep.resolve() / STORE_FILE
    assert store.is_file() and (keep / CANADA / "README.md").is_file()
    assert f"HFVET_DATABASE_URL=sqlite:///{store}" in result.stdout and "/ui/" in result.stdout
    assert f"hfvet hub serve --root {keep.resolve()}" in result.stdout
    again = CliRunner().invoke(app, ["demo", "--keep", str(keep)])  # a kept store is reused, not refused
    assert again.exit_code == 0, again.output


def test_without_keep_the_demo_says_how_to_keep_its_store() -> None:
    out = StringIO()
    run_demo(Console(file=out, width=200), service=False)
    assert "Next steps:" in out.getvalue() and "hfvet demo --keep DIR" in out.getvalue()


def test_next_steps_say_to_activate_the_venv_when_hfvet_is_not_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """scripts/demo.sh runs .venv/bin/hfvet: in the user's shell `hfvet ...` works only once it is activated."""
    monkeypatch.setenv("PATH", "")
    out = StringIO()
    print_next_steps(Console(file=out, width=200), None, None)
    assert re.search(r"first, in your shell: source \S+/bin/activate", out.getvalue()), out.getvalue()
    assert out.getvalue().index("source") < out.getvalue().index("hfvet vet ORG/NAME")
