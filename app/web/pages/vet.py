"""The vet-a-repo form (vetter role) and the job page that follows it until the verdict."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form
from starlette.responses import JSONResponse, Response

from app.core.jobs import VetJob
from app.services.vets import job_outcome, request_vet
from app.web import inputs
from app.web.page import Page, PageError, PageRoute, page

router = APIRouter(route_class=PageRoute)
_JOB_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")


@router.get("/ui/vet", name="vet")
def vet_form(current: Annotated[Page, Depends(page)]) -> Response:
    return current.render("vet.html", can_vet=current.may("vetter"), draft={})


@router.post("/ui/vet")
def vet_post(current: Annotated[Page, Depends(page)], csrf: Annotated[str, Form()] = "",
             repo: Annotated[str, Form()] = "", revision: Annotated[str, Form()] = "main") -> Response:
    current.check_csrf(csrf)
    who = current.require("vetter")
    repo_id, wanted = inputs.repo_id(repo), inputs.revision(revision)
    job = request_vet(current.app.jobs, current.app.resolve, repo_id, wanted, who)  # a hub error: the error page
    return current.redirect(f"/ui/vet/{job.id}")


@router.get("/ui/vet/{job_id}", name="job")
def job_page(current: Annotated[Page, Depends(page)], job_id: str) -> Response:
    job = _job(current, job_id)
    return current.render("job.html", job=job, result=job_outcome(current.app.store, current.app.policy, job))


@router.get("/ui/vet/{job_id}/status", name="job-status")
def job_status(current: Annotated[Page, Depends(page)], job_id: str) -> Response:
    job = _job(current, job_id)
    return current.finish(JSONResponse(_status(current, job)))


def _job(current: Page, job_id: str) -> VetJob:
    job = current.app.jobs.get(job_id) if _JOB_ID.fullmatch(job_id) else None
    if job is None:
        raise PageError(404, "No such vet", f"There is no vet job {job_id[:64]!r}.")
    return job


def _status(current: Page, job: VetJob) -> dict[str, Any]:
    result = job_outcome(current.app.store, current.app.policy, job)
    return {"status": job.status, "finished": job.finished, "error": job.error,
            "verdict": None if result is None else result.verdict,
            "approved": None if result is None else result.approved,
            "repo_url": f"/ui/repos/{job.repo}?revision={job.sha}"}
