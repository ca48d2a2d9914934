"""Reviews through the service on SQLite and on the real PostgreSQL: what is stored, what the gate says."""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time

import pytest
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from app.core.findings import Finding, Severity
from app.core.gate import Approved, Denied
from app.core.policy import LoadedPolicy
from app.core.report import Report
from app.core.review import Review
from app.db import reviews as reviews_db
from app.db.models import AuditRow, ReportRow, ReviewRow
from app.db.repository import save_report
from app.db.session import Store
from app.services.gating import gate
from app.services.reviews import ReviewRefused, ReviewRequest, submit_review
from tests.integration.vetted import APPROVE_REPO, REJECT_REPO, REVIEW_REPO, Vetted, policy, vet_examples

DEFAULT = policy("default")


@pytest.fixture(scope="module")
def vetted(tmp_path_factory: pytest.TempPathFactory) -> Vetted:
    return vet_examples(tmp_path_factory.mktemp("hub"))



def record(store: Store, report: Report) -> str:
    with store.session() as session:
        save_report(session, report, requested_revision="main", actor="test")
    assert report.revision is not None
    return report.revision


def review(store: Store, repo: str, sha: str, decision: str, role: str = "reviewer", who: str = "token:alice",
           reason: str = "read the remote code: plain modules", active: LoadedPolicy = DEFAULT) -> bool:
    result = submit_review(store, active, ReviewRequest(repo, sha, decision, reason, who, role))
    return result.outcome.approved


def answer(store: Store, repo: str, sha: str, active: LoadedPolicy = DEFAULT) -> Approved | Denied:
    found = gate(repo, sha, store=store, policy=active, resolve=_no_hub).answer
    assert isinstance(found, Approved | Denied)
    return found


def counts(store: Store) -> tuple[int, int]:
    with store.session() as session:
        reviews = session.execute(select(func.count()).select_from(ReviewRow)).scalar_one()
        audits = session.execute(select(func.count()).select_from(AuditRow).where(AuditRow.action == "review"))
        return reviews, audits.scalar_one()


def _no_hub(repo: str, revision: str) -> str:
    raise AssertionError("an exact commit must not touch the hub")


def test_a_reviewer_approves_a_review_verdict_and_the_gate_flips(store: Store, vetted: Vetted) -> None:
    sha = record(store, vetted.review)
    before = answer(store, REVIEW_REPO, sha)
    assert isinstance(before, Denied) and before.outcome.verdict == "review"
    assert review(store, REVIEW_REPO, sha, "approve") is True
    after = answer(store, REVIEW_REPO, sha)
    assert isinstance(after, Approved)
    assert after.outcome.decided_by == "token:alice (reviewer)" and after.outcome.decided_at > before.outcome.decided_at
    with store.session() as session:
        audit = session.execute(select(AuditRow).where(AuditRow.action == "review")).scalar_one()
        stored = session.execute(select(ReviewRow)).scalar_one()
    assert (audit.actor, audit.subject) == ("token:alice", f"{REVIEW_REPO}@{sha}") and "approve" in audit.detail
    assert (stored.verdict, stored.policy_sha256, stored.role) == ("review", DEFAULT.sha256, "reviewer")


def test_a_reviewers_reject_stays_refused(store: Store, vetted: Vetted) -> None:
    sha = record(store, vetted.review)
    assert review(store, REVIEW_REPO, sha, "reject", reason="remote code calls home") is False
    refused = answer(store, REVIEW_REPO, sha)
    assert isinstance(refused, Denied) and refused.outcome.reasons[0].endswith("remote code calls home")


def test_overriding_a_reject_needs_an_admin_and_a_refusal_stores_nothing(store: Store, vetted: Vetted) -> None:
    sha = record(store, vetted.reject)
    with pytest.raises(ReviewRefused) as refused:
        review(store, REJECT_REPO, sha, "approve")
    assert refused.value.kind == "admin-required" and counts(store) == (0, 0)
    assert review(store, REJECT_REPO, sha, "approve", role="admin", who="token:root") is True
    approved = answer(store, REJECT_REPO, sha)
    assert isinstance(approved, Approved) and approved.outcome.decided_by == "token:root (admin)"


@pytest.mark.parametrize(("repo", "decision", "kind"), [
    (REVIEW_REPO, "approve", "already-approved"), (REJECT_REPO, "reject", "already-rejected")])
def test_giving_the_outcome_a_commit_has_already_is_refused(store: Store, vetted: Vetted, repo: str,
                                                            decision: str, kind: str) -> None:
    report = vetted.review if repo == REVIEW_REPO else vetted.reject
    sha = record(store, report)
    if repo == REVIEW_REPO:
        review(store, repo, sha, "approve")
    with pytest.raises(ReviewRefused) as refused:
        review(store, repo, sha, decision, role="admin")
    assert refused.value.kind == kind
    assert counts(store) == ((1, 1) if repo == REVIEW_REPO else (0, 0))


@pytest.mark.parametrize(("repo", "sha", "reason", "kind"), [
    (REVIEW_REPO, "f" * 40, "fine", "not-vetted"),
    ("nobody/never", "f" * 40, "fine", "not-vetted"),
    (REVIEW_REPO, "main", "fine", "invalid-revision"),  # a branch is no commit: named as POST /reviews names it
    (REVIEW_REPO, None, "   ", "invalid-review"),
    (REVIEW_REPO, None, "x" * 2001, "invalid-review"),
])
def test_bad_reviews_are_refused_and_change_nothing(store: Store, vetted: Vetted, repo: str, sha: str | None,
                                                    reason: str, kind: str) -> None:
    vetted_sha = record(store, vetted.review)
    with pytest.raises(ReviewRefused) as refused:
        review(store, repo, sha or vetted_sha, "approve", reason=reason)
    assert refused.value.kind == kind and counts(store) == (0, 0)
    assert isinstance(answer(store, REVIEW_REPO, vetted_sha), Denied)


def test_an_approval_of_review_does_not_survive_a_policy_that_rejects(store: Store, vetted: Vetted) -> None:
    sha = record(store, vetted.review)
    review(store, REVIEW_REPO, sha, "approve")
    strict = policy("strict")  # re-decides the same findings: auto_map is a reject there
    refused = answer(store, REVIEW_REPO, sha, active=strict)
    assert isinstance(refused, Denied) and refused.outcome.verdict == "reject"
    assert "needs a new review" in refused.outcome.reasons[0]
    with pytest.raises(ReviewRefused, match="admin"):
        review(store, REVIEW_REPO, sha, "approve", active=strict)
    assert isinstance(answer(store, REVIEW_REPO, sha), Approved)  # back under default it still applies


def test_an_approval_carries_to_a_later_vet_of_the_same_findings_while_the_verdict_holds(
    store: Store, vetted: Vetted
) -> None:
    sha = record(store, vetted.review)
    review(store, REVIEW_REPO, sha, "approve")
    record(store, vetted.strict_reject)  # a later vet of the same bytes (under strict), not reviewed
    assert isinstance(answer(store, REVIEW_REPO, sha), Approved)  # default still says `review` of them
    refused = answer(store, REVIEW_REPO, sha, active=policy("strict"))
    assert isinstance(refused, Denied)
    assert "the policy verdict changed from review to reject" in refused.outcome.reasons[0]


def test_concurrent_reviews_of_one_commit_serialize_and_the_newest_wins(
    store: Store, vetted: Vetted, monkeypatch: pytest.MonkeyPatch
) -> None:
    sha = record(store, vetted.review)
    read_newest = reviews_db.newest_review

    def slow_read(session: Session, report_id: int) -> Review | None:
        found = read_newest(session, report_id)
        time.sleep(0.05)  # a slow decision between reading the state and writing the review
        return found

    monkeypatch.setattr(reviews_db, "newest_review", slow_read)
    barrier = threading.Barrier(8)
    accepted: list[str] = []

    def reviewer(i: int) -> None:
        decision = "approve" if i % 2 else "reject"
        barrier.wait()
        try:
            review(store, REVIEW_REPO, sha, decision, who=f"token:r{i}")
            accepted.append(decision)
        except ReviewRefused as exc:
            assert exc.kind in ("already-approved", "already-rejected")

    threads = [threading.Thread(target=reviewer, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    with store.session() as session:
        decisions = list(session.execute(select(ReviewRow.decision).order_by(ReviewRow.id)).scalars())
    assert decisions and sorted(decisions) == sorted(accepted)
    # each review was decided against the one before it: never two of the same in a row
    assert all(a != b for a, b in itertools.pairwise(decisions))
    assert isinstance(answer(store, REVIEW_REPO, sha), Approved if decisions[-1] == "approve" else Denied)


def test_a_reviewers_reject_survives_a_re_vet_of_the_same_commit(store: Store, vetted: Vetted) -> None:
    # A vetter may re-vet any commit: that must not undo a reviewer's veto of it (vetter < reviewer).
    sha = record(store, vetted.approve)
    assert review(store, APPROVE_REPO, sha, "reject", reason="the uploader's key leaked") is False
    record(store, vetted.approve)  # the same commit vetted again, the policy approves it again
    refused = answer(store, APPROVE_REPO, sha)
    assert isinstance(refused, Denied) and refused.outcome.reasons[0].endswith("the uploader's key leaked")
    with pytest.raises(ReviewRefused) as again:
        review(store, APPROVE_REPO, sha, "reject")
    assert again.value.kind == "already-rejected"
    assert review(store, APPROVE_REPO, sha, "approve", reason="key rotated, bytes re-checked") is True
    assert isinstance(answer(store, APPROVE_REPO, sha), Approved)


def test_an_approval_is_withdrawn_by_a_re_vet_with_a_new_finding_and_kept_by_one_stored_without_a_fingerprint(
    store: Store, vetted: Vetted
) -> None:
    sha = record(store, vetted.review)
    review(store, REVIEW_REPO, sha, "approve")
    record(store, vetted.review)
    with store.session() as session:  # as a report stored before fingerprints were kept
        newest = session.execute(select(func.max(ReportRow.id))).scalar_one()
        session.execute(update(ReportRow).where(ReportRow.id == newest).values(findings_sha256=None))
    assert isinstance(answer(store, REVIEW_REPO, sha), Approved)  # compared finding by finding: the same
    extra = Finding("modeling.py", "python-code", "rule-new", Severity.HIGH, "opens a socket", evidence="line 3")
    record(store, dataclasses.replace(vetted.review, findings=(*vetted.review.findings, extra)))
    refused = answer(store, REVIEW_REPO, sha)
    assert isinstance(refused, Denied)
    assert "the re-vet found 1 new finding: rule-new (high) in modeling.py" in refused.outcome.reasons[0]
