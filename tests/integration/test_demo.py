"""The README's main job: every example repo vetted through the fixture hub gets its expected verdict."""

from io import StringIO

from rich.console import Console

from app.cli.demo import run_demo
from app.cli.progress import vet_progress
from app.core.verdict import Verdict


def test_demo_vets_every_example_through_the_hub_as_expected() -> None:
    out = StringIO()
    rows = run_demo(Console(file=out, width=200))
    verdicts = {row.example.repo_id: row.report.verdict for row in rows}
    assert verdicts["nvidia/DeepSeek-V4-Flash-NVFP4"] is Verdict.APPROVE
    assert verdicts["canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP"] is Verdict.REJECT
    assert all(row.as_expected for row in rows), verdicts
    for row in rows:
        assert len(row.report.revision or "") == 40  # pinned to a commit, not a branch
        assert row.report.decision.policy.sha256  # the policy that decided is recorded
        assert row.report.stats.bytes_read <= row.report.stats.repo_bytes
    assert "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP" in out.getvalue()


def test_progress_is_off_when_not_a_terminal() -> None:
    with vet_progress(3, "x", enabled=False) as progress:
        assert progress is None
