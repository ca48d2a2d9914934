"""Public shapes of the API, apart from the database rows."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.core.jobs import JobStatus, VetJob


class JobOut(BaseModel):
    # A vet job as the API shows it: VetJob's fields by name (``of`` takes them so), except the commit, shown
    # as ``revision``, and the policy, as one object; plus links. The report id stays inside (GET /vet/{id}
    # carries the report itself). No docstring: it would become the schema's description.
    id: str
    repo: str
    requested_revision: str
    revision: str  # the 40-hex commit this job vets
    policy: dict[str, str]
    status: JobStatus
    requested_by: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    attempts: int
    error: str | None
    links: dict[str, str]

    @classmethod
    def of(cls, job: VetJob) -> JobOut:
        shown = {name: value for name, value in vars(job).items() if name in cls.model_fields}
        return cls(**shown, revision=job.sha, policy={"name": job.policy_name, "sha256": job.policy_sha256},
                   links={"self": f"/vet/{job.id}", "gate": f"/gate?repo={job.repo}&revision={job.sha}"})


class UnresolvedOut(BaseModel):
    repo: str
    revision: str
    error: str


class ReferenceJobsOut(BaseModel):
    """`with_references=1`: the vets queued for the repos the report references."""

    jobs: list[JobOut]  # one per referenced (repo, commit); a vet already queued or running is joined
    unresolved: list[UnresolvedOut]  # references the hub could not pin to a commit: nothing queued for them
    pending: bool  # no report of this commit yet (the vet is still running): nothing queued; ask again with `wait`


class VetOut(BaseModel):
    job: JobOut
    report: dict[str, Any] | None  # the §6.2 report once the job is done
    references: ReferenceJobsOut | None = None  # only with `with_references=1`


class EffectiveOut(BaseModel):
    """A stored outcome as the gate sees it now, under the active policy."""

    revision: str
    verdict: str
    approved: bool
    reasons: list[str]
    decided_by: str
    decided_at: datetime


class RepoItemOut(BaseModel):
    repo: str
    org: str
    name: str
    tier: str  # under the active policy's tiers
    first_seen: datetime
    revisions: int
    latest: EffectiveOut | None  # the newest stored report's outcome
    links: dict[str, str]


class RepoListOut(BaseModel):
    items: list[RepoItemOut]
    limit: int
    next_cursor: str | None  # pass as `cursor` for the next page; null on the last page
    links: dict[str, str]


class ReportEntryOut(BaseModel):
    """One stored report of one commit: what was recorded, and what it means under the active policy."""

    id: int
    verdict: str  # as recorded
    policy: dict[str, str | None]  # the policy that recorded it
    decided_at: datetime
    requested_revision: str | None
    requested_by: str
    effective: EffectiveOut


class CommitOut(BaseModel):
    revision: str
    reports: list[ReportEntryOut]  # newest first


class RepoDetailOut(BaseModel):
    repo: str
    org: str
    name: str
    tier: str
    identity: dict[str, str | None]  # hub `_id`, author, createdAt, as first seen
    first_seen: datetime
    policy: dict[str, str]  # the active policy the effective verdicts are under
    revisions: list[CommitOut]  # newest decided first
    links: dict[str, str]


class ErrorDetail(BaseModel):
    model_config = ConfigDict(extra="allow")  # some errors carry more (`vet-failed`: the job)

    code: str  # stable: docs/api.md#errors lists them
    message: str  # for a person


class ErrorOut(BaseModel):
    """Every error answer: `{"error": {"code", "message"}}`."""

    error: ErrorDetail


class GateOut(BaseModel):
    """GET /gate's answer, at every status (docs/gate.md): `approved` adds `files` and `pins`, `moved`
    adds `head` and `newest_approved`."""

    model_config = ConfigDict(extra="allow")

    repo: str
    requested: str | None
    approved: bool
    status: Literal["approved", "denied", "not-vetted", "moved"]
    policy: dict[str, str]
    reasons: list[str]
    revision: str | None = None  # the commit answered for (absent when the branch moved)
    warnings: list[str] = Field(
        default_factory=list,
        description="Said beside the answer, never changing it; absent when there is none. Without `revision`: "
                    "the newest vetted commit is rejected or waiting for review while an older commit, answered "
                    "here, stays deployable by pin.")
