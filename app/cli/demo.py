"""`hfvet demo`: vet the bundled example repos through the offline fixture hub."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from app.cli import exit_codes
from app.cli.progress import human_bytes
from app.core.findings import Severity
from app.core.report import Report
from app.render.text import VERDICT_STYLE
from app.services.vetting import vet_remote
from app.settings import Settings

if TYPE_CHECKING:
    from app.examples import ExampleRepo

DEFAULT_POLICY = Path("default")


def demo(
    policy: Annotated[Path, typer.Option("--policy", help="Trust policy (file or shipped name).")] = DEFAULT_POLICY,
    keep: Annotated[
        Path | None, typer.Option("--keep", help="Write the example repos here and keep them (for hfvet scan).")
    ] = None,
) -> None:
    """Offline demo: vet the bundled example repos through the fixture hub and print a table."""
    rows = exit_codes.guard(lambda: run_demo(Console(), policy=policy, keep=keep))
    unexpected = [r.example.repo_id for r in rows if not r.as_expected]
    if unexpected:
        Console(stderr=True).print(Text(f"unexpected verdicts: {', '.join(unexpected)}", style="bold red"))
        raise typer.Exit(exit_codes.EXIT_FAILED)


@dataclass(frozen=True)
class DemoRow:
    example: ExampleRepo
    report: Report

    @property
    def as_expected(self) -> bool:
        return self.report.verdict is self.example.expected_verdict


def run_demo(console: Console, *, policy: Path = DEFAULT_POLICY, keep: Path | None = None) -> list[DemoRow]:
    """Write the examples, serve them on a loopback port, vet each one, print a table."""
    from app.examples import build_examples  # example builders and the fixture hub: only the demo needs them
    from app.hubfixture import FixtureHub

    with tempfile.TemporaryDirectory(prefix="hfvet-demo-") as tmp:
        root = keep or Path(tmp)
        console.print(Text(f"writing example repos to {root}", style="dim"))
        examples = build_examples(root)
        with FixtureHub(root) as hub:
            console.print(Text(f"fixture hub at {hub.url}; vetting with policy {policy}", style="dim"))
            settings = Settings().model_copy(update={"hf_endpoint": hub.url, "hf_token": None})
            rows = [DemoRow(ex, _vet(ex, settings, policy)) for ex in examples]
    console.print(demo_table(rows))
    return rows


def _vet(example: ExampleRepo, settings: Settings, policy: Path) -> Report:
    return vet_remote(example.repo_id, settings=settings, policy_path=policy)


def demo_table(rows: list[DemoRow]) -> Table:
    table = Table(title="hfvet demo: example repos vetted through the fixture hub", show_lines=True)
    for column in ("repo", "revision", "verdict", "top reasons", "read / size"):
        table.add_column(column, overflow="fold")
    for row in rows:
        r = row.report
        verdict = Text(r.verdict.value, style=VERDICT_STYLE[r.verdict.value])
        if not row.as_expected:
            verdict.append(f" (expected {row.example.expected_verdict.value})", style="bold red")
        table.add_row(
            Text(r.repo or "?"),
            (r.revision or "?")[:12],
            verdict,
            Text(_top_reasons(r)),
            f"{human_bytes(r.stats.bytes_read)} / {human_bytes(r.stats.repo_bytes)}",
        )
    return table


def _top_reasons(report: Report, limit: int = 3) -> str:
    """The rule ids that decided the verdict, most severe first, with the worst finding."""
    reasons = sorted(report.decision.reasons, key=lambda x: -x.decision.rank)
    deciding = [x.rule for x in reasons if x.decision is report.verdict][:limit]
    worst = max(report.findings, key=lambda f: f.severity.rank, default=None)
    if worst is not None and worst.severity.rank >= Severity.HIGH.rank:
        deciding.append(f"e.g. {worst.rule} in {worst.path}")
    return "\n".join(deciding) or "-"
