"""The README's main job: the demo vets every example through `hfvet serve` and the fixture hub, and
the deploy gate approves the vendor repo and refuses the third-party one."""

import re
from io import StringIO

from rich.console import Console

from app.cli.demo import run_demo
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
    assert CANADA in out.getvalue() and "hfvet serve" not in out.getvalue()


def test_progress_is_off_when_not_a_terminal() -> None:
    with vet_progress(3, "x", enabled=False) as progress:
        assert progress is None
