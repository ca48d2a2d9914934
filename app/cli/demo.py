"""`hfvet demo`: vet the bundled example repos through `hfvet serve` and the offline fixture hub."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from app.cli import demo_service, exit_codes
from app.cli.demo_service import GateView
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
    service: Annotated[
        bool, typer.Option("--service/--in-process",
                           help="Vet through `hfvet serve` and POST /vet, then ask GET /gate (default), "
                                "or vet in this process without a server.")
    ] = True,
) -> None:
    """Offline demo: serve the bundled example repos with the fixture hub, start `hfvet serve`, vet each
    repo through POST /vet, print a table, then show the deploy gate for nvidia/... and canada-quant/...."""
    Settings()  # checked before the examples and the hub: a bad setting stops it here, not half-way
    result = exit_codes.guard(lambda: run_demo(Console(), policy=policy, keep=keep, service=service))
    unexpected = [r.example.repo_id for r in result.rows if not r.as_expected]
    unexpected += [f"gate {g.repo} ({g.status})" for g in result.gates if not g.as_expected]
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


@dataclass(frozen=True)
class DemoResult:
    rows: list[DemoRow]
    gates: list[GateView]  # empty for the in-process flow


def run_demo(
    console: Console, *, policy: Path = DEFAULT_POLICY, keep: Path | None = None, service: bool = True
) -> DemoResult:
    """Write the examples, serve them on a loopback port, vet each one, print a table (and the gate)."""
    from app.examples import build_examples  # example builders and the fixture hub: only the demo needs them
    from app.hubfixture import FixtureHub

    with tempfile.TemporaryDirectory(prefix="hfvet-demo-") as tmp:
        root = keep or Path(tmp) / "repos"
        console.print(Text(f"writing example repos to {root}", style="dim"))
        examples = build_examples(root)
        with FixtureHub(root) as hub:
            console.print(Text(f"fixture hub at {hub.url}; vetting with policy {policy}", style="dim"))
            if service:
                return _through_service(console, examples, hub.url, Path(tmp), policy)
            settings = Settings().model_copy(update={"hf_endpoint": hub.url, "hf_token": None})
            rows = [DemoRow(ex, _vet(ex, settings, policy)) for ex in examples]
    console.print(demo_table(rows))
    return DemoResult(rows, [])


def _through_service(
    console: Console, examples: list[ExampleRepo], hub_url: str, workdir: Path, policy: Path
) -> DemoResult:
    store_url = f"sqlite:///{workdir / 'store.db'}"
    token = demo_service.vetter_token(store_url)
    with demo_service.served_api(hub_url, store_url, policy, workdir / "serve.log") as url:
        console.print(Text(f"hfvet serve at {url} (store {store_url}); POST /vet?repo=...&wait=... per repo",
                           style="dim"))
        rows = [DemoRow(ex, demo_service.vet_through_api(url, token, ex.repo_id)) for ex in examples]
        console.print(demo_table(rows))
        gates = [demo_service.gate_through_api(url, repo) for repo in demo_service.GATED]
        demo_service.print_gates(console, url, gates)
    return DemoResult(rows, gates)


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
