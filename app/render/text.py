"""Human-readable report: verdict first, then findings grouped by file."""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Callable

from rich.console import Console
from rich.table import Table
from rich.text import Text

from app.core.closure import ClosureItem, by_runtime
from app.core.findings import Finding, Severity
from app.core.report import Report
from app.core.signature import listed_by_hub

SEVERITY_STYLE = {
    Severity.CRITICAL: "bold white on red",
    Severity.HIGH: "bold red",
    Severity.MEDIUM: "yellow",
    Severity.LOW: "cyan",
    Severity.INFO: "dim",
}
VERDICT_STYLE = {"approve": "bold green", "review": "bold yellow", "reject": "bold red"}


class TextRenderer:
    """Rich text for a terminal (styled there, plain when piped), as ``probe()`` would print it.

    ``probe`` makes the Console whose width and colour support the text takes: a plain ``Console()``
    by default; the command line passes its own (app/cli/console.py: never cut at 80 columns when piped).
    """

    def __init__(self, probe: Callable[[], Console] = Console) -> None:
        self.probe = probe

    def render(self, report: Report, *, show_info: bool = False) -> str:
        probe = self.probe()  # the terminal this run writes to: its width and colour support
        buffer = io.StringIO()
        console = Console(file=buffer, width=probe.width, color_system="auto" if probe.color_system else None,
                          force_terminal=probe.is_terminal, legacy_windows=False)
        print_report(report, console, show_info=show_info)
        return buffer.getvalue()


def print_report(report: Report, console: Console, *, show_info: bool = False) -> None:
    _print_header(report, console)
    shown = [f for f in report.findings if show_info or f.severity is not Severity.INFO]
    for path, findings in _group_by_file(shown).items():
        console.print(Text(path, style="bold underline"))
        for f in sorted(findings, key=lambda x: -x.severity.rank):
            console.print(_finding_line(f))
    hidden = len(report.findings) - len(shown)
    if hidden:
        console.print(Text(f"({hidden} info finding(s) hidden; use --show-info)", style="dim"))
    _print_closure(report, console)
    _print_stats(report, console)


def _print_closure(report: Report, console: Console) -> None:
    """What each runtime would import, run, install and fetch (the loader map's items), per runtime."""
    if not report.closure:
        return
    console.print(Text("load closure (what each runtime would import, run, install, fetch)", style="bold"))
    for runtime, items in by_runtime(report.closure).items():
        console.print(Text(f"  {runtime}", style="bold"))
        for item in items:
            console.print(Text(f"    {_closure_line(item)}"))


def _closure_line(item: ClosureItem) -> str:
    line = f"{item.kind} {item.target}"
    if item.repo:
        line += f" @ {item.revision}" if item.revision else " (unpinned)"
        if item.carries_trust:
            line += ", with trust_remote_code"
    gate = item.gate.value if item.gate.value != "always" else "always, no opt-in"
    line += f"  [{gate}; {item.surface} in {item.path}]"
    if item.runs:
        line += f" runs {', '.join(item.runs)}"
    return line


def _print_header(report: Report, console: Console) -> None:
    verdict = report.verdict.value
    title = Text(f"{report.repo or '(local files)'}", style="bold")
    if report.revision:
        title.append(f" @ {report.revision}", style="dim")
    console.print(title)
    policy = report.decision.policy
    digest = f" sha256:{policy.sha256[:12]}" if policy.sha256 else ""
    console.print(Text.assemble(("verdict: ", ""), (verdict.upper(), VERDICT_STYLE[verdict])),
                  Text(f"  policy: {policy.name}{digest}", style="dim"))
    for reason in report.decision.reasons:
        console.print(Text(f"  - [{reason.decision.value}] {reason.rule}: {reason.message}"))
    if report.signature is not None:
        style = {"verified": "green", "invalid": "bold red"}.get(report.signature.state, "dim")
        summary = report.signature.summary(listed_by_hub(report.files))
        console.print(Text.assemble(("signature: ", ""), (summary, style)))


def _group_by_file(findings: list[Finding]) -> dict[str, list[Finding]]:
    groups: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        groups[f.path].append(f)
    return dict(sorted(groups.items()))


def _finding_line(f: Finding) -> Text:
    line = Text("  ")
    line.append(f"{f.severity.value:<8}", style=SEVERITY_STYLE[f.severity])
    line.append(f" {f.rule}", style="bold")
    if f.member:
        line.append(f" [{f.member}]", style="magenta")
    line.append(f" {f.message}")
    if f.evidence:
        line.append(f"\n           {f.evidence}", style="dim")
    line.append(f"  ({f.scanner})", style="dim")
    return line


def _peer_summary(report: Report) -> str:
    """How often each corroborating engine ran or was skipped (per file: the JSON's files[].engines)."""
    counts: dict[str, list[int]] = {}
    for f in report.files:
        for engine, decision in f.engines.items():
            counts.setdefault(engine, [0, 0])[decision.startswith("skipped")] += 1
    return "; ".join(f"{engine} ran on {ran}, skipped on {skipped} (clean walks)"
                     for engine, (ran, skipped) in counts.items())


def _print_stats(report: Report, console: Console) -> None:
    s = report.stats
    table = Table(show_header=False, box=None, pad_edge=False)
    unscanned = [f.path for f in report.files if not f.scanned]
    table.add_row("files", f"{s.files} ({len(unscanned)} not fully scanned)")
    table.add_row("bytes read", f"{s.bytes_read:,} of {s.repo_bytes:,}")
    if peers := _peer_summary(report):
        table.add_row("peers", peers)
    table.add_row("time", f"{s.seconds:.2f}s")
    console.print(table)
