"""Vets asked for by a person or a script: queue a vet of ORG/NAME@REV (the API's `POST /vet` and the
dashboard's vet form), the references' vets with it, and what a job stored.

The faces check the repo id and the revision (app.core.ids, each translating the refusal into its own
error) and call these; nothing is queued before the hub names the commit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from app.core.gate import Outcome
from app.core.ids import is_commit
from app.core.jobs import VetJob
from app.core.policy import LoadedPolicy
from app.core.ports import SourceError
from app.core.principals import Principal
from app.core.repo_refs import MAX_REFERENCES
from app.db.repository import report_by_id, report_document
from app.db.reviews import newest_report
from app.db.session import Store
from app.errors import HfvetError
from app.services.outcomes import Resolver, outcome
from app.services.references import DEFAULT_BRANCH

if TYPE_CHECKING:
    from app.jobs.interface import JobQueue


def request_vet(jobs: JobQueue, resolve: Resolver, repo: str, revision: str, who: Principal | str) -> VetJob:
    """Queue a vet of ``repo`` at the commit ``revision`` names now (one per repo, commit and policy: a
    request for one already queued or running joins it), as ``who`` (a token's holder, or an actor named
    by the face). Hub errors propagate before anything is queued."""
    sha = resolve(repo, revision)
    return jobs.submit(repo, revision, sha, requested_by=who if isinstance(who, str) else who.actor)


def job_document(store: Store, job: VetJob) -> dict[str, Any] | None:
    """The §6.2 document of the report ``job`` stored; None while it runs (or when it failed)."""
    if job.report_id is None:
        return None
    with store.session() as session:
        return report_document(session, job.report_id)


def job_outcome(store: Store, policy: LoadedPolicy, job: VetJob) -> Outcome | None:
    """The outcome of the report ``job`` stored, as the gate sees it now; None while it runs (or failed)."""
    if job.report_id is None:
        return None
    with store.session() as session:
        report = report_by_id(session, job.report_id)
    return None if report is None else outcome(report, policy)


def commit_document(store: Store, repo: str, sha: str) -> dict[str, Any] | None:
    """The document of the newest stored report of ``repo`` at ``sha`` (its references do not depend on the
    policy), or None when the commit was never vetted."""
    with store.session() as session:
        found = newest_report(session, repo, sha)
    return None if found is None else found.document


def queue_references(jobs: JobQueue, resolve: Resolver, document: dict[str, Any],
                     who: Principal) -> tuple[list[VetJob], list[Unresolved]]:
    """Queue a vet of each repo ``document`` references (all or none: one transaction), and say which the
    hub cannot name. TooManyReferences (nothing resolved or queued) past MAX_REFERENCES."""
    wanted, unresolved = reference_commits(document, resolve)
    return (jobs.submit_all(wanted, requested_by=who.actor) if wanted else []), unresolved


class Unresolved(NamedTuple):
    repo: str
    revision: str
    error: str


Wanted = tuple[str, str, str]  # (repo, revision as asked, 40-hex sha): what JobQueue.submit_all takes


class TooManyReferences(HfvetError):
    """A report names more references than one request may resolve and queue (MAX_REFERENCES)."""


def reference_commits(document: dict[str, Any], resolve: Resolver,
                      limit: int = MAX_REFERENCES) -> tuple[list[Wanted], list[Unresolved]]:
    """The (repo, revision, sha) to vet for each reference a stored report lists, and those the hub cannot name.

    A reference without a revision is vetted at the default branch's commit, as a loader would fetch it.
    More than ``limit`` distinct references raise TooManyReferences before the hub is asked: one request
    must not turn into thousands of hub calls and vets (such a report is `too-many-references` anyway).
    """
    refs = document.get("references") or []
    wanted = dict.fromkeys((str(r["repo"]), str(r.get("revision") or DEFAULT_BRANCH))
                           for r in refs if isinstance(r, dict) and r.get("repo") and r["repo"] != document.get("repo"))
    if len(wanted) > limit:
        raise TooManyReferences(f"the report names {len(wanted)} other repos and revisions, more than the "
                                f"{limit} one request resolves and queues; vet them one by one")
    commits: list[Wanted] = []
    unresolved: list[Unresolved] = []
    for repo, revision in wanted:
        try:
            commits.append((repo, revision, revision if is_commit(revision) else resolve(repo, revision)))
        except (HfvetError, SourceError) as exc:
            unresolved.append(Unresolved(repo, revision, str(exc)))
    return commits, unresolved
