"""Public shapes of `POST /reviews`, apart from the database rows."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.core.ids import SHORT_COMMIT_PATTERN
from app.services.reviews import MAX_REASON, ReviewResult


class ReviewIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    repo: str = Field(max_length=200, description="ORG/NAME on the hub.")
    # Checked by the service (app.services.commits), which says what is wrong in words (`invalid-revision`),
    # where a pydantic pattern would answer with the regex.
    revision: str = Field(max_length=40, json_schema_extra={"pattern": SHORT_COMMIT_PATTERN},
                          description="The vetted commit: its 40-hex sha, or the first 7 or more hex digits of it "
                                      "(a prefix several vetted commits share is refused: `ambiguous-revision`).")
    decision: Literal["approve", "reject"]
    reason: str = Field(min_length=1, max_length=MAX_REASON, description="Why; kept in the audit log.")


class ReviewOut(BaseModel):
    id: int
    repo: str
    revision: str
    report_id: int  # the report reviewed: the newest of that commit
    decision: str
    reason: str
    reviewer: str
    role: str
    at: datetime
    reviewed_verdict: str  # the policy verdict the reviewer saw
    policy: dict[str, str]
    approved: bool  # the commit's effective outcome now
    links: dict[str, str]

    @classmethod
    def of(cls, body: ReviewIn, result: ReviewResult, policy: dict[str, str]) -> ReviewOut:
        review = result.review
        return cls(id=review.id, repo=body.repo, revision=result.sha, report_id=review.report_id,
                   decision=review.decision, reason=review.reason, reviewer=review.reviewer, role=review.role,
                   at=review.at, reviewed_verdict=review.verdict or "review", policy=policy,
                   approved=result.outcome.approved,
                   links={"gate": f"/gate?repo={body.repo}&revision={result.sha}"})
