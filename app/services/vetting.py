"""Vetting use cases shared by the CLI, the API and the job workers: pick a source, scanners, a decision.

Nothing here draws on a terminal or exits: progress is handed in, errors are ``HfvetError``s.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.limits import Limits
from app.core.pipeline import VetOptions, default_decide, vet
from app.core.ports import DecideFn, ProgressFn, RepoCheck, SignatureStep, Source
from app.core.report import Report
from app.core.scanners import all_scanners
from app.core.signature_step import unlisted_check
from app.errors import InputError
from app.services.identity import identity_check
from app.services.policies import policy_for
from app.settings import Settings
from app.sources.local import LocalSource

if TYPE_CHECKING:  # the store's libraries load only when a report is stored (a local scan stores none)
    from app.core.jobs import VetJob
    from app.core.policy.loader import LoadedPolicy
    from app.db.session import Store

# (number of files, label) -> a context yielding the per-file callback, or None for no progress.
ProgressFactory = Callable[[int, str], AbstractContextManager[ProgressFn | None]]


def default_limits(settings: Settings) -> Limits:
    """The limits of a vet nobody chose a deadline for: the server's, the workers', the CLI's default."""
    return Limits(max_vet_seconds=settings.vet_deadline)


def scan_local(
    path: Path,
    *,
    settings: Settings,
    repo_id: str | None = None,
    revision: str | None = None,
    policy_path: Path | None = None,
    limits: Limits | None = None,
    progress: ProgressFactory | None = None,
) -> Report:
    """Vet a downloaded snapshot directory or a single file (``revision``: the commit it claims to be)."""
    if not path.exists():
        raise InputError(f"no such file or directory: {path}")
    policy = policy_for(policy_path, settings)
    decide, signature = _judges(policy)
    limits = limits or default_limits(settings)
    source = LocalSource(path, repo_id=repo_id, revision=revision, limits=limits)
    return _run(source, repo_id or path.name, decide, limits, progress, settings.scan_workers, settings=settings,
                signature=signature)


def vet_remote(
    repo_id: str,
    *,
    settings: Settings,
    revision: str = "main",
    policy_path: Path | None = None,
    limits: Limits | None = None,
    progress: ProgressFactory | None = None,
    store: Store | None = None,
) -> Report:
    """Vet a repo on a hub (the real one, a mirror, or the fixture hub) at a pinned commit.

    With a ``store``, an approved repo whose hub identity changed gets an `identity-changed` finding,
    the policy sees which referenced repos the store approves (branches resolved on the same hub),
    and its `lineage` (mirror of an approved vendor commit, the card's base claim checked), which the
    report records; without one, no reference is approved and no lineage is checked.

    ``limits.max_vet_seconds`` (default: ``settings.vet_deadline``) covers the whole vet, the manifest's
    listing included: past it, a hub call still under way fails (``HubTimeout``) and files not yet
    started are ``vet-timeout``. A hub that went silent mid-vet (``HubStalled``) fails the vet: no
    report. The report's ``identity.servedBy`` lists the hosts that served bytes.
    """
    from app.sources.hub import Deadline, HubClient, HubSource, resolve_revision  # the network client: here only

    started = time.monotonic()
    limits = limits or default_limits(settings)
    seconds = limits.max_vet_seconds
    budget = Deadline(started + seconds, f"the vet's {seconds:g}s budget (--timeout, HFVET_VET_DEADLINE)")
    policy = policy_for(policy_path, settings)  # a bad policy fails before any hub traffic
    hub = HubClient.from_settings(settings).until(budget)
    source = HubSource.open(repo_id, revision, hub=hub)
    decide: DecideFn = default_decide
    signature: SignatureStep = unlisted_check
    if policy is not None:
        from app.core.policy.engine import make_decide
        from app.services.lineage import StoreLineage
        from app.services.references import Bounds, StoreJudge  # the store's rules: only when a policy decides

        # The gate's budget: past it references count as not approved (the vet's too-many-references rejects).
        judge = None if store is None else StoreJudge(store, policy, lambda r, rev: resolve_revision(r, rev, hub),
                                                      bounds=Bounds(settings.gate_hub_budget))
        from app.core.policy.signatures import signature_step

        lineage = None if store is None else StoreLineage(store, policy)  # mirror and base facts, recorded
        decide = make_decide(policy, None if judge is None else judge.of((repo_id, source.commit)), lineage)
        signature = signature_step(policy)
    checks = [identity_check(store, repo_id)] if store is not None else []
    report = _run(source, repo_id, decide, limits, progress, settings.hub_workers, started, checks, settings,
                  signature)
    source.fail_if_stalled()  # unread because the hub went silent: no verdict, an error
    return replace(report, identity={**report.identity, "servedBy": source.served_by})


def job_vet(settings: Settings, store: Store) -> Callable[[VetJob], Report]:
    """The vet the server's queue and `hfvet worker`s run for a job: exactly its commit, under the active
    policy, within the default deadline (``settings.vet_deadline``)."""

    def run(job: VetJob) -> Report:
        return vet_remote(job.repo, settings=settings, revision=job.sha, policy_path=settings.policy, store=store,
                          limits=default_limits(settings))

    return run


def _run(
    source: Source,
    label: str,
    decide: DecideFn,
    limits: Limits | None,
    progress: ProgressFactory | None,
    workers: int,
    started: float | None = None,
    repo_checks: Sequence[RepoCheck] = (),
    settings: Settings | None = None,
    signature: SignatureStep = unlisted_check,
) -> Report:
    total = len(source.manifest().files)
    with (progress or _no_progress)(total, label) as on_file:
        options = VetOptions(limits=limits, workers=workers, started=started,
                             peers=settings.peers if settings else "auto")
        return vet(source, all_scanners(), decide=decide, options=options, progress=on_file, repo_checks=repo_checks,
                   signature=signature)


def _judges(policy: LoadedPolicy | None) -> tuple[DecideFn, SignatureStep]:
    """The decision and the signature step of ``policy`` (None: the interim verdict, no identities)."""
    if policy is None:
        return default_decide, unlisted_check
    from app.core.policy.engine import make_decide  # the policy engine (and its CEL parser): only when one decides
    from app.core.policy.signatures import signature_step

    return make_decide(policy), signature_step(policy)


def _no_progress(_total: int, _label: str) -> AbstractContextManager[ProgressFn | None]:
    return nullcontext(None)


def record(store: Store, report: Report, *, requested_revision: str | None, actor: str) -> int:
    """Store a vet's report (with its manifest) so the gate can answer for its commit."""
    from sqlalchemy.exc import SQLAlchemyError

    from app.db.attestations import attest_report
    from app.db.repository import save_report
    from app.services.store import StoreError

    try:
        with store.session() as session:  # signed in the same transaction: stored signed, or not at all
            report_id = save_report(session, report, requested_revision=requested_revision, actor=actor)
            attest_report(session, report_id, store.signer)
            return report_id
    except SQLAlchemyError as exc:  # the transaction rolled back whole: nothing half-written
        raise StoreError(f"cannot store the report: {type(exc).__name__}: {exc}") from exc
