"""`hfvet policy ...`: validate, test, explain and diff trust policies. Mounted by app.cli.main."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.table import Table
from rich.text import Text

from app.cli import exit_codes
from app.cli.console import console
from app.cli.options import examples
from app.core.policy import LoadedPolicy, PolicyError, explain
from app.core.policy.cases import CaseResult, run_cases
from app.core.policy.docs import render_policy_docs
from app.core.policy.engine import Evaluation
from app.core.policy.facts import SignatureFact
from app.core.policy.probes import lax_approvals
from app.core.policy.replay import (
    Replay,
    StoredReport,
    policy_changes,
    read_report,
    replay,
    report_files,
)
from app.core.policy.schema import RESERVED_RULE_IDS
from app.errors import InputError
from app.render.text import VERDICT_STYLE
from app.services.policies import load_named
from app.settings import Settings

# Reasons the engine adds beside the rules' own (floor, default, waivers, signatures): shown below the table.
_ENGINE_REASONS = RESERVED_RULE_IDS
_STATUS_STYLE = {"fired": "bold", "error": "bold red", "waived": "magenta", "not-fired": "dim"}
_NAME_OR_FILE = "a YAML file or a shipped name (default, strict), as `hfvet scan --policy` takes"

policy_app = typer.Typer(
    help="Trust policies as code: check, test, explain a verdict, diff two policies.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


out = console  # made per call: the width follows this invocation's terminal, unlimited when piped


def _fail(exc: PolicyError) -> NoReturn:
    exit_codes.fail(*(str(issue) for issue in exc.issues))


def _load(policy: Path) -> LoadedPolicy:
    """A policy argument of any policy command, read as `scan`/`vet` read `--policy` (one function)."""
    try:
        return load_named(policy, Settings())
    except (PolicyError, InputError) as exc:
        exit_codes.fail(*_error_lines(exc))


@policy_app.command(epilog=examples(
    ("every shipped policy", "hfvet policy check"),
    ("a policy being written, and a shipped one by name", "hfvet policy check my-policy.yaml strict"),
))
def check(
    files: Annotated[
        list[Path] | None,
        typer.Argument(help=f"Policies, each {_NAME_OR_FILE} (default: every policies/*.yaml).", show_default=False),
    ] = None,
) -> None:
    """Validate policies; errors are printed as file:line: message (exit 2).

    A misspelt variable or field in a `when` (`fidnings`, `repo.teir`, `f.severty`) is an error that
    names the rule and the closest known name. Also warns (exit code unchanged) about an approve rule
    that would approve a third-party repo with a critical finding, unscanned code or an executable.
    """
    settings = Settings()
    paths = files or sorted(settings.policies_root().glob("*.yaml"))
    if not paths:
        _fail(PolicyError.single(str(settings.policies_root()), None, "no policy files found"))
    failed = False
    for path in paths:
        try:
            policy = load_named(path, settings)
        except (PolicyError, InputError) as exc:
            failed = True
            for line in _error_lines(exc):
                out().print(Text(line, style="red"))
            continue
        out().print(Text(f"ok  {policy.source}  {policy.name}  sha256:{policy.sha256}"))
        _warn_lax_approvals(Path(policy.source), policy)
        from app.core.policy.signatures import lookalike_signature_orgs  # the signature check: only here

        for warning in lookalike_signature_orgs(policy.model):
            out().print(Text(f"warning: {policy.source}: {warning}", style="yellow"))
    if failed:
        raise typer.Exit(exit_codes.EXIT_ERROR)


def _error_lines(exc: PolicyError | InputError) -> list[str]:
    return [str(issue) for issue in exc.issues] if isinstance(exc, PolicyError) else [str(exc)]


def _warn_lax_approvals(path: Path, policy: LoadedPolicy) -> None:
    # A warning, not an error: the floor holds anyway, but the rule likely means less than it says.
    for lax in lax_approvals(policy):
        out().print(Text(f"warning: {path}: {lax.message(policy.model.unsafe)}", style="yellow"))


@policy_app.command("test", epilog=examples(
    ("every fixture case of every shipped policy", "hfvet policy test"),
    ("the cases of one policy, or one case", "hfvet policy test policies/tests/strict"),
))
def test_cmd(
    target: Annotated[
        Path | None, typer.Argument(help="Case file or folder (default: policies/tests).")
    ] = None,
) -> None:
    """Run policy fixture cases: input facts -> expected verdict and reason ids (exit 1 on failure)."""
    target = target or Settings().policies_root() / "tests"
    if not target.exists():
        _fail(PolicyError.single(str(target), None, "no such file or folder"))
    results = run_cases(target)
    if not results:
        _fail(PolicyError.single(str(target), None, "no test cases found"))
    for result in results:
        _print_case(result, target)
    failed = sum(1 for r in results if not r.passed)
    out().print(f"{len(results) - failed} passed, {failed} failed")
    if failed:
        raise typer.Exit(exit_codes.EXIT_FAILED)


def _print_case(result: CaseResult, target: Path) -> None:
    name = result.path.relative_to(target) if target.is_dir() else result.path
    if result.passed:
        out().print(Text.assemble(("PASS ", "green"), f"{name}  {result.got}"))
        return
    out().print(Text.assemble(("FAIL ", "bold red"), str(name)))
    out().print(Text(f"     expected {result.expected}\n     got      {result.got}"))


@policy_app.command("explain", epilog=examples(
    ("the reasons the report recorded", "hfvet policy explain report.json"),
    ("every rule's outcome under another policy", "hfvet policy explain report.json --policy strict"),
    ("a report of your own", "hfvet scan ./snapshot --format json > report.json"),
))
def explain_cmd(
    report: Annotated[Path, typer.Argument(help="A stored report JSON (hfvet scan --format json).")],
    policy: Annotated[
        Path | None, typer.Option("--policy", help=f"Re-evaluate under this policy: {_NAME_OR_FILE}.")
    ] = None,
) -> None:
    """Which rules fired and why: the recorded reasons, or every rule's outcome under --policy."""
    try:
        stored = read_report(report)
    except PolicyError as exc:
        _fail(exc)
    if policy is None:
        _print_recorded(stored.data)
        return
    loaded = _load(policy)
    _print_evaluation(explain(loaded, stored.facts), loaded, stored.facts.signature)
    _print_recorded_line(stored.data)


def _print_recorded(data: dict[str, Any]) -> None:
    _print_recorded_line(data)
    table = Table("rule", "decision", "message", title="recorded reasons")
    for reason in data.get("reasons") or []:
        decision = str(reason.get("decision"))
        table.add_row(str(reason.get("rule")), Text(decision, VERDICT_STYLE.get(decision, "")),
                      str(reason.get("message")))
    out().print(table)


def _print_recorded_line(data: dict[str, Any]) -> None:
    policy = data.get("policy") or {}
    verdict = str(data.get("verdict"))
    out().print(Text.assemble(
        f"{data.get('repo') or '(no repo id)'}@{(data.get('revision') or '?')[:12]}  recorded: ",
        (verdict, VERDICT_STYLE.get(verdict, "")),
        f"  under {policy.get('name')} sha256:{policy.get('sha256')}",
    ))


def _signature_line(signature: SignatureFact | None) -> str:
    """The vendor signature state the replay saw: what `signature-required`/`-invalid` judged."""
    if signature is None:
        return "signature: no check recorded"
    signer = f", signer {signature.signer.identity}" if signature.signer else ""
    by = "verified by" if signature.state == "verified" else "signed by the policy's"
    matched = f" ({by} {signature.signer.matched})" if signature.signer and signature.signer.matched else ""
    problem = f": {signature.problem}" if signature.problem else ""
    return f"signature: {signature.file} {signature.state}{signer}{matched}{problem}"


def _print_evaluation(evaluation: Evaluation, policy: LoadedPolicy, signature: SignatureFact | None) -> None:
    lookalike = f", lookalike of {evaluation.lookalike_of}" if evaluation.lookalike_of else ""
    out().print(Text(f"tier: {evaluation.tier}{lookalike}"))
    table = Table("#", "rule", "status", "decision", "why", title=f"rules of {policy.name}")
    for i, result in enumerate(evaluation.results, 1):
        contributed = result.decision.value if result.decision else result.rule.decision
        why = result.detail or result.rule.description
        table.add_row(str(i), result.rule.id, Text(result.status, _STATUS_STYLE[result.status]),
                      contributed, why)
    out().print(table)
    decision = evaluation.decision
    for reason in decision.reasons:
        if reason.rule in _ENGINE_REASONS:
            out().print(Text(f"{reason.rule}: {reason.message}"))
    out().print(Text(_signature_line(signature)))
    out().print(Text.assemble(
        "verdict: ", (decision.verdict.value, VERDICT_STYLE[decision.verdict.value]),
        f"  under {policy.name} sha256:{policy.sha256}",
    ))


@policy_app.command(epilog=examples(
    ("what strict would change for these reports", "hfvet policy diff default strict reports/"),
    ("a proposed policy against every commit in the store", "hfvet policy diff default my-policy.yaml --stored"),
))
def diff(
    old: Annotated[Path, typer.Argument(help=f"The current policy: {_NAME_OR_FILE}.")],
    new: Annotated[Path, typer.Argument(help=f"The proposed policy: {_NAME_OR_FILE}.")],
    reports: Annotated[
        list[Path] | None, typer.Argument(help="Stored report JSON files or folders of them.")
    ] = None,
    from_store: Annotated[
        bool, typer.Option("--stored", help="Also replay the newest report of every commit in the verdict store.")
    ] = False,
) -> None:
    """Replay stored reports under OLD and NEW; list every verdict that changes and the rules why."""
    old_policy, new_policy = _load(old), _load(new)
    for note in policy_changes(old_policy, new_policy):
        out().print(Text(f"policy: {note}"))
    try:
        stored = [read_report(p) for p in report_files(reports or [])]
        if from_store:
            stored += exit_codes.guard(_store_reports)
    except PolicyError as exc:
        _fail(exc)
    results = replay(old_policy, new_policy, stored)
    changed = [r for r in results if r.changed]
    if changed:
        out().print(_changes_table(changed))
    out().print(f"{len(changed)} of {len(results)} verdict(s) change: "
                  f"{old_policy.name} {old_policy.sha256[:12]} -> {new_policy.name} {new_policy.sha256[:12]}")
    if not changed:
        out().print(Text(_no_change_hint(old_policy, new_policy, len(results)), style="dim"))


def _store_reports() -> list[StoredReport]:
    from app.services.replay import stored_reports  # the store's modules: only for --stored
    from app.services.store import open_store

    store = open_store(Settings())
    try:
        return stored_reports(store)
    finally:
        store.close()


def _changes_table(changed: list[Replay]) -> Table:
    table = Table("report", "repo@revision", "old", "new", "rules responsible", title="changed verdicts")
    for r in changed:
        repo = r.report.facts.repo
        where = f"{repo.id or '(no repo id)'}@{(repo.revision or '?')[:12]}"
        old, new = r.old.verdict.value, r.new.verdict.value
        source = r.report.source
        label = source if source.startswith("store:") else Path(source).name
        table.add_row(label, where, Text(old, VERDICT_STYLE[old]),
                      Text(new, VERDICT_STYLE[new]), "\n".join(r.responsible()))
    return table


def _no_change_hint(old: LoadedPolicy, new: LoadedPolicy, replayed: int) -> str:
    """Why an empty diff is empty, and what would show a difference."""
    if old.sha256 == new.sha256:
        return f"no difference: {old.source} and {new.source} are the same policy (same sha256)"
    if not replayed:
        return ("no reports replayed, so only the policies' rules were compared (the `policy:` lines). Give "
                "report JSON files or folders (hfvet scan PATH --format json > report.json), or --stored for "
                "the newest report of every commit in the verdict store")
    differs = "; the rule changes above decide none of them" if policy_changes(old, new) else ""
    return (f"no difference: both policies give the same verdict on all {replayed} report(s){differs}. To see "
            "where they part, replay more reports (--stored: every commit in the verdict store), or write fixture "
            "cases that reach the changed rules (policies/tests/, run by hfvet policy test)")


@policy_app.command(epilog=examples(
    ("rewrite policies/README.md", "hfvet policy docs"),
    ("fail (exit 1) when it is stale, as CI does", "hfvet policy docs --check"),
))
def docs(
    check_only: Annotated[
        bool, typer.Option("--check", help="Exit 1 if policies/README.md is stale.")
    ] = False,
) -> None:
    """Regenerate policies/README.md from the schema and the CEL variable table."""
    path = Settings().policies_root() / "README.md"
    text = render_policy_docs()
    if check_only:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            out().print(Text(f"{path} is stale: run `hfvet policy docs`", style="red"))
            raise typer.Exit(exit_codes.EXIT_FAILED)
        return
    path.write_text(text, encoding="utf-8")
    out().print(Text(f"wrote {path}"))
