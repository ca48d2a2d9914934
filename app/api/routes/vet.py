"""POST /vet: queue a vet of a repo at the commit a revision names now; GET /vet/{id}: its state."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response

from app.api import validation
from app.api.deps import ReaderDep, StateDep, VetterDep
from app.api.errors import ApiError
from app.api.openapi import errors, link
from app.api.schemas import JobOut, ReferenceJobsOut, UnresolvedOut, VetOut
from app.core.ids import REPO_PATTERN, REVISION_PATTERN
from app.core.jobs import VetJob
from app.core.principals import Principal
from app.services.vets import TooManyReferences, commit_document, job_document, queue_references, request_vet

router = APIRouter(tags=["vet"])
MAX_WAIT = 300.0
_JOB = "$response.body#/job"
_LINKS = {
    "job": link("get_vet_vet__job_id__get", "The job's state, and its report once done", job_id=f"{_JOB}/id"),
    "gate": link("get_gate_gate_get", "The gate's answer for the commit vetted",
                 repo=f"{_JOB}/repo", revision=f"{_JOB}/revision"),
    "review": link("post_review_reviews_post", "A review of the commit vetted",
                   body={"repo": f"{_JOB}/repo", "revision": f"{_JOB}/revision"}),
}
_JOB_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")  # what job queues hand out (uuid4 hex today)
JobId = Annotated[str, Path(description="`job.id` of POST /vet",
                            json_schema_extra=validation.documented(validation.JOB_ID_PATTERN))]


@router.post("/vet", response_model=VetOut, status_code=202, responses={
    200: {"model": VetOut, "description": "The vet finished within `wait`: the job and its report", "links": _LINKS},
    202: {"description": "Queued or running: the job", "links": _LINKS},
    **errors(401, 403, 404, 422, 502, 503,
             s404="`repo-not-found`, `revision-not-found`: the hub has no such repo, branch or tag",
             s422="`invalid-repo`, `invalid-revision`...; `too-many-references`: `with_references=1` for a report "
             "naming more than 64 other repos and revisions (none is resolved or queued)",
             s502="`vet-failed`: the vet failed within `wait` (the error carries the job); `hub-error`, "
             "`hub-protocol-error`")})
def post_vet(
    app: StateDep,
    who: VetterDep,
    response: Response,
    repo: Annotated[str, Query(max_length=200, description=validation.REPO_RULES,
                               json_schema_extra=validation.documented(REPO_PATTERN))],
    revision: Annotated[str, Query(max_length=256, description=validation.REVISION_RULES,
                                   json_schema_extra=validation.documented(REVISION_PATTERN))] = "main",
    wait: Annotated[float, Query(ge=0, le=MAX_WAIT, description="Seconds to wait for the report.")] = 0,
    with_references: Annotated[bool, Query(description="Also queue a vet of each repo the report references, "
                                           "at the commit its revision names now (needs the report: see `wait`).")]
    = False,
) -> VetOut:
    """Resolve `revision` to its commit, queue one vet per (repo, commit, policy); 200 with the report if
    it finishes within `wait`, 502 `vet-failed` (with the job) if it failed, else 202 with the job.
    `with_references=1` also queues the referenced repos' vets (in one transaction) once a report of the
    commit exists: this one's, or an earlier vet's."""
    repo, revision = validation.repo_id(repo), validation.revision(revision)
    job = request_vet(app.jobs, app.resolve, repo, revision, who)  # hub errors map to clear 4xx/5xx
    if wait > 0:
        job = app.jobs.wait(job.id, wait) or job
    if job.status == "failed":  # never a 2xx: a script that checks only the status must not read success
        raise ApiError(502, "vet-failed", f"the vet of {repo}@{job.sha} failed: {job.error}",
                       job=JobOut.of(job).model_dump(mode="json"))
    if job.status == "done":
        response.status_code = 200
    out = _out(app, job)
    if with_references:
        out.references = _queue_references(app, out.report or commit_document(app.store, repo, job.sha), who)
    return out


def _queue_references(app: StateDep, report: dict[str, Any] | None, who: Principal) -> ReferenceJobsOut:
    """Queue a vet of each repo ``report`` references (all or none: one transaction)."""
    if report is None:
        return ReferenceJobsOut(jobs=[], unresolved=[], pending=True)
    try:
        jobs, unresolved = queue_references(app.jobs, app.resolve, report, who)
    except TooManyReferences as exc:
        raise ApiError(422, "too-many-references", str(exc)) from exc
    return ReferenceJobsOut(jobs=[JobOut.of(j) for j in jobs], pending=False,
                            unresolved=[UnresolvedOut(repo=u.repo, revision=u.revision, error=u.error)
                                        for u in unresolved])


@router.get("/vet/{job_id}", response_model=VetOut, responses=errors(401, 404, 422, s404="`job-not-found`"))
def get_vet(app: StateDep, _who: ReaderDep, job_id: JobId) -> VetOut:
    job = app.jobs.get(job_id) if _JOB_ID.fullmatch(job_id) else None  # PostgreSQL refuses a NUL: 404, not 5xx
    if job is None:
        raise ApiError(404, "job-not-found", f"no vet job {job_id[:64]!r}")
    return _out(app, job)


def _out(app: StateDep, job: VetJob) -> VetOut:
    return VetOut(job=JobOut.of(job), report=job_document(app.store, job))
