"""`hfvet scan` and `hfvet vet`: vet a local snapshot or a hub repo and print the report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import SecretStr

from app.cli import exit_codes, ids
from app.cli.console import console
from app.cli.options import FormatOpt, OutputFormat, PolicyOpt, RepoArg, ShowInfoOpt, TimeoutOpt, command_examples
from app.cli.progress import vet_progress
from app.core.ids import is_commit, is_short_sha
from app.core.limits import Limits
from app.core.ports import SourceError
from app.core.report import Report
from app.errors import HfvetError
from app.render import RENDERERS
from app.render.text import TextRenderer
from app.services.vetting import default_limits, record, scan_local, vet_remote
from app.setting_checks import bad_url_lines
from app.settings import Settings

if TYPE_CHECKING:
    from app.db.session import Store


@command_examples(
    ('a downloaded snapshot, as the third party it is unless --repo says', 'hfvet scan ./snapshot'),
    ("a huggingface_hub cache snapshot, stored under its repo for the record",
     "hfvet scan ~/.cache/huggingface/hub/models--org--name/snapshots/<sha> --repo org/name"),
    ('one file, as JSON for a script', 'hfvet scan model.bin --format json > report.json'),
)
def scan(
    path: Annotated[Path, typer.Argument(help="A downloaded snapshot directory or a single file.")],
    repo: Annotated[
        str | None, typer.Option("--repo", help="ORG/NAME identity for the trust policy (default: unknown).")
    ] = None,
    policy: PolicyOpt = None,
    fmt: FormatOpt = OutputFormat.text,
    show_info: ShowInfoOpt = False,
    timeout: TimeoutOpt = None,
    revision: Annotated[
        str | None,
        typer.Option("--revision", "-r", help="The 40-hex commit the snapshot is (default: the folder name of "
                     "a huggingface_hub cache snapshot, snapshots/<sha>)."),
    ] = None,
    no_store: Annotated[bool, typer.Option("--no-store", help="Do not record the report in the store.")] = False,
) -> None:
    """Vet a local snapshot directory or a single file. Nothing is loaded or executed.

    With --repo and a known commit the report is stored, for the record and `policy diff --stored`;
    the gate never approves from a local scan (only `hfvet vet` reads the hub's own bytes).
    """
    repo = None if repo is None else ids.repo_id(repo)
    revision = revision or snapshot_commit(path)
    if revision is not None and not is_commit(revision):
        exit_codes.fail(f"--revision must be a 40-hex commit sha, not {revision!r}")
    settings = Settings()
    limits = _limits(settings, timeout)
    store = None if no_store or not (repo and revision) else exit_codes.guard(lambda: _open_store(settings))
    report = exit_codes.guard(
        lambda: scan_local(path, settings=settings, repo_id=repo, revision=revision, policy_path=policy,
                           limits=limits, progress=vet_progress)
    )
    if store is not None:
        exit_codes.guard(lambda: record(store, report, requested_revision=revision, actor=_actor()))
        store.close()
    emit(report, fmt, show_info)
    raise typer.Exit(exit_codes.for_verdict(report.verdict))


@command_examples(
    ('a repo on the Hugging Face Hub (HF_TOKEN for gated repos)', 'hfvet vet nvidia/DeepSeek-V4-Flash-NVFP4'),
    ("a tag, under the strict policy, as SARIF for code scanning",
     "hfvet vet nvidia/DeepSeek-V4-Flash-NVFP4 --revision v1.0 --policy strict --format sarif"),
    ('a mirror or the fixture hub', 'HF_ENDPOINT=http://127.0.0.1:8090 hfvet vet nvidia/DeepSeek-V4-Flash-NVFP4'),
)
def vet(
    repo: RepoArg,
    revision: Annotated[str, typer.Option("--revision", "-r", help="Branch, tag or commit sha.")] = "main",
    policy: PolicyOpt = None,
    fmt: FormatOpt = OutputFormat.text,
    show_info: ShowInfoOpt = False,
    endpoint: Annotated[
        str | None, typer.Option("--endpoint", help="Hub URL (default: $HF_ENDPOINT, else huggingface.co).")
    ] = None,
    token: Annotated[str | None, typer.Option("--token", help="Hub token (default: $HF_TOKEN).")] = None,
    timeout: TimeoutOpt = None,
    no_store: Annotated[bool, typer.Option("--no-store", help="Do not record the verdict in the store.")] = False,
    with_references: Annotated[
        bool, typer.Option("--with-references", help="Then vet and store each repo the report references (adapter "
                           "base model, auto_map code, card base_model...), at the commit its revision names now; "
                           "one level deep, one line each on stderr. The printed report and exit code stay this "
                           "repo's; `hfvet gate` re-decides it with the references' approval.")
    ] = False,
) -> None:
    """Vet a repo from the hub at a pinned commit, reading only what a loader would execute.

    The report is stored (HFVET_DATABASE_URL; SQLite by default) so `hfvet gate` can answer for it.
    """
    repo, revision = ids.repo_id(repo), ids.revision(revision)  # before the store or the hub is asked
    if with_references and no_store:
        exit_codes.fail("--with-references records the references' vets in the store: drop --no-store")
    if lines := bad_url_lines({"--endpoint": endpoint}):
        exit_codes.fail(*lines)
    settings = _with_hub(Settings(), endpoint, token)
    limits = _limits(settings, timeout)
    store = None if no_store else exit_codes.guard(lambda: _open_store(settings))  # fail before hub traffic
    revision = exit_codes.guard(lambda: _expanded(settings, store, repo, revision))
    report = exit_codes.guard(
        lambda: vet_remote(
            repo, settings=settings, revision=revision, policy_path=policy, limits=limits, progress=vet_progress,
            store=store,
        )
    )
    attested = None
    if store is not None:
        exit_codes.guard(lambda: record(store, report, requested_revision=revision, actor=_actor()))
        attested = _signed_by(store)
        if with_references:
            _vet_references(report, settings, store, policy, limits)
        store.close()
    emit(report, fmt, show_info)
    if attested and fmt == OutputFormat.text:
        typer.echo(f"attested (key {attested[:16]}): `hfvet attest {report.repo} --revision {report.revision}` "
                   "prints the signed verdict", err=True)
    raise typer.Exit(exit_codes.for_verdict(report.verdict))


def _expanded(settings: Settings, store: Store | None, repo: str, revision: str) -> str:
    """A short id of a vetted commit as its full sha, as the gate reads it (app.services.commits); anything
    else as given, for the hub. The store is read for it even with --no-store, which only keeps the report out."""
    if is_commit(revision) or not is_short_sha(revision):
        return revision
    from app.services.commits import expand_commit

    reader = store or _open_store(settings)
    try:
        return expand_commit(reader, repo, revision) or revision
    finally:
        if store is None:
            reader.close()


def _vet_references(report: Report, settings: Settings, store: Store, policy: Path | None, limits: Limits) -> None:
    """Vet and store each referenced repo; one that cannot be vetted is said on stderr, and the rest go on."""
    from app.services.references import DEFAULT_BRANCH  # the store's modules: only when references are vetted

    for repo, revision in dict.fromkeys((r.repo, r.revision or DEFAULT_BRANCH) for r in report.references):
        try:
            done = vet_remote(repo, settings=settings, revision=revision, policy_path=policy, limits=limits,
                              store=store)
            record(store, done, requested_revision=revision, actor=_actor())
        except (HfvetError, SourceError) as exc:
            typer.echo(f"reference {repo}@{revision}: not vetted: {exc}", err=True)
            continue
        typer.echo(f"reference {repo}@{revision}: {done.verdict.value} at {done.revision}", err=True)
    if report.references:
        typer.echo(f"`hfvet gate {report.repo} --revision {report.revision}` judges it with these now", err=True)


def snapshot_commit(path: Path) -> str | None:
    """The commit of a huggingface_hub cache snapshot folder (.../snapshots/<sha>), if PATH is one."""
    folder = path if path.is_dir() else path.parent
    name = folder.resolve().name if folder.exists() else folder.name
    return name if folder.parent.name == "snapshots" and is_commit(name) else None


def emit(report: Report, fmt: str, show_info: bool) -> None:
    """The report on stdout; text as wide as this invocation's console allows (whole ids and URLs when piped)."""
    renderer = TextRenderer(probe=console) if fmt == OutputFormat.text else RENDERERS[fmt]
    sys.stdout.write(renderer.render(report, show_info=show_info))


def _limits(settings: Settings, timeout: float | None) -> Limits:
    """--timeout when given, else the deadline every vet has (HFVET_VET_DEADLINE)."""
    return Limits(max_vet_seconds=timeout) if timeout is not None else default_limits(settings)


def _with_hub(settings: Settings, endpoint: str | None, token: str | None) -> Settings:
    """Command-line options win over the environment."""
    changes: dict[str, object] = {} if endpoint is None else {"hf_endpoint": endpoint}
    if token is not None:
        changes["hf_token"] = SecretStr(token)
    return settings.model_copy(update=changes)


def _open_store(settings: Settings) -> Store:
    from app.cli.keycheck import warn_if_key_exposed
    from app.services.store import open_store  # the database libraries: only when a report is stored

    store = open_store(settings, signing=True)
    warn_if_key_exposed(settings)
    return store


def _signed_by(store: Store) -> str | None:
    """The id of the key that signed what was just stored (None: no key, or it expired and signed nothing)."""
    from datetime import UTC, datetime

    signer = store.signer
    return None if signer is None or signer.expired_on(datetime.now(UTC).date()) else signer.key_id


def _actor() -> str:
    import getpass

    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"
