"""POST /vet: queue a vet of a repo at the commit a revision names now; GET /vet/{id}: its state."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Query, Response

from app.api import validation
from app.api.deps import ReaderDep, StateDep, VetterDep
from app.api.errors import ApiError
from app.api.schemas import JobOut, VetOut
from app.core.jobs import VetJob
from app.db.repository import report_document

router = APIRouter(tags=["vet"])
MAX_WAIT = 300.0
_JOB_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")  # what job queues hand out (uuid4 hex today)


@router.post("/vet", response_model=VetOut, status_code=202, responses={200: {"model": VetOut}})
def post_vet(
    app: StateDep,
    who: VetterDep,
    response: Response,
    repo: Annotated[str, Query(max_length=200, description="ORG/NAME on the hub.")],
    revision: Annotated[str, Query(max_length=256, description="Branch, tag or commit sha.")] = "main",
    wait: Annotated[float, Query(ge=0, le=MAX_WAIT, description="Seconds to wait for the report.")] = 0,
) -> VetOut:
    """Resolve `revision` to its commit, queue one vet per (repo, commit, policy); 200 with the report if
    it finishes within `wait`, 502 `vet-failed` (with the job) if it failed, else 202 with the job."""
    repo, revision = validation.repo_id(repo), validation.revision(revision)
    sha = app.resolve(repo, revision)  # hub errors map to clear 4xx/5xx; nothing is written before this
    job = app.jobs.submit(repo, revision, sha, requested_by=f"token:{who.name}")
    if wait > 0:
        job = app.jobs.wait(job.id, wait) or job
    if job.status == "failed":  # never a 2xx: a script that checks only the status must not read success
        raise ApiError(502, "vet-failed", f"the vet of {repo}@{sha} failed: {job.error}",
                       job=JobOut.of(job).model_dump(mode="json"))
    if job.status == "done":
        response.status_code = 200
    return _out(app, job)


@router.get("/vet/{job_id}", response_model=VetOut)
def get_vet(app: StateDep, _who: ReaderDep, job_id: str) -> VetOut:
    job = app.jobs.get(job_id) if _JOB_ID.fullmatch(job_id) else None  # PostgreSQL refuses a NUL: 404, not 5xx
    if job is None:
        raise ApiError(404, "job-not-found", f"no vet job {job_id[:64]!r}")
    return _out(app, job)


def _out(app: StateDep, job: VetJob) -> VetOut:
    report = None
    if job.report_id is not None:
        with app.store.session() as session:
            report = report_document(session, job.report_id)
    return VetOut(job=JobOut.of(job), report=report)
