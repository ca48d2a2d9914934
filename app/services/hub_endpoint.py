"""The Hub endpoint's one decision: at which approved commit a repo is served, or why it is refused.

Asked by every answer of app.endpoint (model info, tree, paths-info, refs, HEAD/GET resolve), and
answered by the gate (app.services.gating) under the active policy, as GET /gate answers it:
- an exact commit is served if the gate approves it;
- a branch or tag is served at its head if that head is approved; when the head is not vetted but an
  older commit is approved (the gate's `moved`), at that commit or not at all (HFVET_HUB_BRANCH_MOVED);
- anything else is a ``Refusal`` that names the gate's reasons and the step to take, which the endpoint
  sends with the status and X-Error-Code that make huggingface_hub raise a clear exception.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from app.core import manifest_json
from app.core.gate import Approved, Denied, Moved, NotVetted
from app.core.manifest import ManifestFile
from app.core.manifest_json import ManifestFormatError
from app.services.commits import AmbiguousCommit
from app.services.gating import GateError, GateResult
from app.services.outcomes import Resolver
from app.services.vets import request_vet
from app.sources.hub_errors import HubError, HubRepoNotFound, HubRevisionNotFound

if TYPE_CHECKING:
    from app.jobs.interface import JobQueue

BranchMoved = Literal["newest-approved", "refuse"]
GateFn = Callable[[str, str], GateResult]  # (repo, revision): the gate's answer (app.services.gating.cached_gate)
QueueFn = Callable[[str, str], str]  # (repo, revision): queue a vet, return the commit it vets
RETRY_AFTER = 30  # seconds a client is told to wait for a queued vet (a vet of a large repo takes minutes)


@dataclass(frozen=True)
class Served:
    """``repo`` is served at ``commit``: only ``files`` exist there (the approved manifest, by path)."""

    repo: str
    commit: str
    files: dict[str, ManifestFile]
    note: str = ""  # said in a header when the commit is not what was asked (a branch's older approval)


class Refusal(Exception):
    """Not served; ``code`` is the Hub's X-Error-Code the client maps to its exception (None: a plain error)."""

    def __init__(self, status: int, code: str | None, reason: str, message: str, retry_after: int | None = None,
                 commit: str | None = None, detail: str = ""):
        super().__init__(message)
        self.status, self.code, self.reason, self.message = status, code, reason, message
        self.retry_after = retry_after
        self.commit = commit  # the served commit, when the refusal is of a path in it (EntryNotFound)
        self.detail = detail  # for the server's log only: the upstream's own words, its URL (never sent)


@dataclass(frozen=True)
class Endpoint:
    """What the decision needs: the gate, the setting for moved branches, and a vet queue when unvetted
    repos are to be vetted on demand (HFVET_HUB_VET_UNVETTED; None: refused)."""

    gate: GateFn
    branch_moved: BranchMoved = "newest-approved"
    queue: QueueFn | None = None

    def serve(self, repo: str, revision: str) -> Served:
        """The commit ``repo`` is served at for ``revision``, or a ``Refusal``."""
        result = self._gate(repo, revision)
        answer = result.answer
        if isinstance(answer, Approved):
            return Served(repo, answer.outcome.sha, files_of(result))
        if isinstance(answer, Moved):
            return self._moved(repo, revision, answer)
        if isinstance(answer, NotVetted):
            raise self._not_vetted(repo, revision, result)
        raise denied(repo, answer)

    def _gate(self, repo: str, revision: str) -> GateResult:
        try:
            return self.gate(repo, revision)
        except HubRevisionNotFound as exc:
            raise Refusal(404, "RevisionNotFound", "revision-not-found", f"hfvet: {repo} has no revision "
                          f"{revision!r} upstream", detail=str(exc)) from exc
        except HubRepoNotFound as exc:
            raise Refusal(404, "RepoNotFound", "repo-not-found", f"hfvet: {repo} is not on the upstream hub (or "
                          "not visible to hfvet's token)", detail=str(exc)) from exc
        except AmbiguousCommit as exc:
            raise Refusal(404, "RevisionNotFound", "ambiguous-revision", f"hfvet: {exc}") from exc
        except (GateError, HubError) as exc:  # the upstream hub cannot say where a branch is: fail closed
            raise Refusal(503, None, "hub-unavailable", f"hfvet cannot answer for {repo}@{revision} now: its "
                          "upstream hub did not answer; retry later", retry_after=RETRY_AFTER,
                          detail=str(exc)) from exc

    def _moved(self, repo: str, revision: str, answer: Moved) -> Served:
        newest = answer.newest_approved.sha
        if self.branch_moved == "refuse":
            raise Refusal(403, "GatedRepo", "moved", f"hfvet: {repo}@{revision} is at {answer.head}, which is not "
                          f"vetted: run `hfvet vet {repo} --revision {revision}`; the newest approved commit "
                          f"{newest} can be pulled by pin (revision={newest!r})")
        served = self.serve(repo, newest)
        note = f"{revision} is at {answer.head}, not vetted; served at the newest approved commit {newest}"
        return Served(served.repo, served.commit, served.files, note)

    def _not_vetted(self, repo: str, revision: str, result: GateResult) -> Refusal:
        suggest = f" (did you mean {' or '.join(result.suggestions)}?)" if result.suggestions else ""
        if self.queue is None:
            return Refusal(403, "GatedRepo", "not-vetted", f"hfvet: {repo}@{revision} is not vetted{suggest}: "
                           f"run `hfvet vet {repo} --revision {revision}`, then pull again")
        try:
            sha = self.queue(repo, revision)
        except HubError as exc:
            return Refusal(503, None, "hub-unavailable", f"hfvet cannot queue a vet of {repo}@{revision} now: "
                           "its upstream hub did not answer; retry later", retry_after=RETRY_AFTER, detail=str(exc))
        return Refusal(503, None, "queued", f"hfvet: {repo}@{revision} is not vetted; a vet of {sha} is queued: "
                       f"retry in a minute (`hfvet gate {repo} --revision {sha}` says when it is decided)",
                       retry_after=RETRY_AFTER)


def denied(repo: str, answer: Denied) -> Refusal:
    outcome = answer.outcome
    reasons = "; ".join(r.rstrip(". ") for r in outcome.reasons) or "no reasons recorded"
    step = (f"a reviewer may approve it: `hfvet review {repo} --revision {outcome.sha} --approve --reason ...`"
            if outcome.verdict == "review" else "it stays refused unless an admin overrides it with `hfvet review`")
    return Refusal(403, "GatedRepo", "denied", f"hfvet refused {repo}@{outcome.sha} ({outcome.verdict}, decided "
                   f"by {outcome.decided_by}): {reasons}; {step}")


def files_of(result: GateResult) -> dict[str, ManifestFile]:
    """The approved commit's stored manifest by path; a manifest that cannot be read serves nothing."""
    try:
        return {f.path: f for f in manifest_json.load(result.files)}
    except ManifestFormatError as exc:
        raise Refusal(403, "GatedRepo", "bad-manifest", f"hfvet: the stored manifest of {result.repo} cannot be "
                      f"served ({exc}): vet it again") from exc


QUEUED_BY = "hub-endpoint"  # the actor of the vets the endpoint queues (the audit log's vet-requested rows)


def queue_vet(jobs: JobQueue, resolve: Resolver) -> QueueFn:
    """A ``QueueFn`` that queues through app.services.vets.request_vet, as the endpoint."""
    return lambda repo, revision: request_vet(jobs, resolve, repo, revision, QUEUED_BY).sha
