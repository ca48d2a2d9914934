"""`hfvet demo`: vet the bundled example repos through `hfvet serve` and the offline fixture hub."""

from __future__ import annotations

import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console  # a type: the console is made in app/cli/console.py
from rich.table import Table
from rich.text import Text

from app.cli import demo_service, exit_codes
from app.cli.console import console
from app.cli.demo_service import GateView
from app.cli.options import command_examples
from app.cli.progress import human_bytes
from app.core.findings import Severity
from app.core.report import Report
from app.render.text import VERDICT_STYLE
from app.services.vetting import vet_remote
from app.settings import Settings

if TYPE_CHECKING:
    from app.examples import ExampleRepo

DEFAULT_POLICY = Path("default")
STORE_FILE = "hfvet-demo.db"  # the demo's store, in the --keep folder beside the example repos
HUB_PORT = 8090  # the ports the next steps suggest: `hfvet hub serve` and `hfvet serve`'s defaults aside
SERVE_PORT = 8000


@command_examples(
    ('the offline demo, through hfvet serve', 'hfvet demo'),
    ('keep the example repos and the store, then browse them in the dashboard', 'hfvet demo --keep ./hfvet-demo'),
    ('without a server', 'hfvet demo --in-process'),
)
def demo(
    policy: Annotated[Path, typer.Option("--policy", help="Trust policy (file or shipped name).")] = DEFAULT_POLICY,
    keep: Annotated[
        Path | None,
        typer.Option("--keep", metavar="DIR",
                     help="Keep the example repos in DIR (for `hfvet scan` and `hfvet hub serve`) and the demo's "
                          f"store as DIR/{STORE_FILE} (for `hfvet serve` and its dashboard); the demo ends with "
                          "the commands that use them."),
    ] = None,
    service: Annotated[
        bool, typer.Option("--service/--in-process",
                           help="Vet through `hfvet serve` and POST /vet, then ask GET /gate (default), "
                                "or vet in this process without a server.")
    ] = True,
) -> None:
    """Offline demo: serve the bundled example repos with the fixture hub, start `hfvet serve`, vet each
    repo through POST /vet, print a table, then ask the deploy gate about the approved and the blocked repo."""
    Settings()  # checked before the examples and the hub: a bad setting stops it here, not half-way
    result = exit_codes.guard(lambda: run_demo(console(), policy=policy, keep=keep, service=service))
    unexpected = [r.example.repo_id for r in result.rows if not r.as_expected]
    unexpected += [f"gate {g.repo} ({g.status})" for g in result.gates if not g.as_expected]
    if unexpected:
        console(stderr=True).print(Text(f"unexpected verdicts: {', '.join(unexpected)}", style="bold red"))
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
        root = (keep or Path(tmp) / "repos").resolve()
        console.print(Text(f"writing example repos to {root}", style="dim"))
        examples = build_examples(root)
        with FixtureHub(root) as hub:
            console.print(Text(f"fixture hub at {hub.url}; vetting with policy {policy}", style="dim"))
            if service:
                store = (root if keep else Path(tmp)) / STORE_FILE
                result = _through_service(console, examples, hub.url, store, Path(tmp) / "serve.log", policy)
                print_next_steps(console, root if keep else None, store if keep else None)
                return result
            settings = Settings().model_copy(update={"hf_endpoint": hub.url, "hf_token": None})
            rows = [DemoRow(ex, _vet(ex, settings, policy)) for ex in examples]
    console.print(demo_table(rows))
    print_next_steps(console, root if keep else None, None)
    return DemoResult(rows, [])


def _through_service(
    console: Console, examples: list[ExampleRepo], hub_url: str, store: Path, log: Path, policy: Path
) -> DemoResult:
    store_url = f"sqlite:///{store}"
    token = demo_service.vetter_token(store_url)
    with demo_service.served_api(hub_url, store_url, policy, log) as url:
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


def print_next_steps(console: Console, repos: Path | None, store: Path | None) -> None:
    """Where to go from here: the kept repos and store, with the commands that use them, or how to keep them."""
    console.print(Text("\nNext steps:", style="bold"))
    activate = activate_hint()
    if activate:
        console.print(Text(f"  first, in your shell: source {activate}   (hfvet is installed there, not on your PATH)"))
    if repos is None:
        console.print(Text("  the demo's store was temporary: `hfvet demo --keep DIR` keeps the example repos and "
                           "the store, and ends with the commands that browse them in the dashboard"))
    else:
        console.print(Text(f"  example repos kept in {repos}; scan one locally:"))
        console.print(Text(f"    hfvet scan {repos / 'canada-quant' / 'DeepSeek-V4-Flash-W4A16-FP8-MTP'}"))
    if repos is not None and store is not None:
        hub = f"http://127.0.0.1:{HUB_PORT}"
        console.print(Text(f"  the demo's store kept as {store}; browse it with the dashboard:"))
        console.print(Text(f"    hfvet hub serve --root {repos} --port {HUB_PORT} &"))
        serve = f"HF_ENDPOINT={hub} HFVET_DATABASE_URL=sqlite:///{store} hfvet serve --port {SERVE_PORT}"
        console.print(Text(f"    {serve}"))
        console.print(Text(f"    then open http://127.0.0.1:{SERVE_PORT}/ui/"))
    console.print(Text("  on the real hub: `hfvet vet ORG/NAME` (HF_TOKEN for gated repos), `hfvet gate ORG/NAME`, "
                       "`hfvet download ORG/NAME --local-dir DIR`, and `hfvet serve` for the dashboard at /ui/"))


def activate_hint() -> Path | None:
    """The venv's activate script when `hfvet` on PATH is not the one running (scripts/demo.sh runs
    .venv/bin/hfvet from a shell without the venv): the next steps' `hfvet ...` need it first."""
    running = Path(sys.executable).parent / "hfvet"
    on_path = shutil.which("hfvet")
    if on_path and Path(on_path).resolve() == running.resolve():
        return None
    activate = Path(sys.prefix) / "bin" / "activate"
    return activate if sys.prefix != sys.base_prefix and activate.is_file() else None
