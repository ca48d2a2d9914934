"""Endpoint.serve: the gate's answer for (repo, revision) as the commit served, or the refusal the client sees."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime

import pytest

from app.core import manifest_json
from app.core.gate import Answer, Approved, Denied, Moved, NotVetted, Outcome
from app.core.manifest import ManifestFile
from app.services.commits import AmbiguousCommit
from app.services.gating import GateError, GateResult
from app.services.hub_endpoint import Endpoint, GateFn, Refusal, Served
from app.sources.hub_errors import HubError, HubRepoNotFound, HubRevisionNotFound, HubUnreachable
from tests.integration.api.stored import policy

REPO = "nvidia/model"
OLD, HEAD = "a" * 40, "b" * 40
FILES = (ManifestFile("config.json", 2, blob_id="c" * 40), ManifestFile("model.safetensors", 9, sha256="d" * 64))
DEFAULT = policy("default")


def outcome(sha: str, *, approved: bool, verdict: str = "approve", reasons: tuple[str, ...] = ()) -> Outcome:
    return Outcome(sha, approved, verdict, reasons, datetime(2026, 1, 1, tzinfo=UTC), "policy default")


def result(answer: Answer, *, files: bool = False, suggestions: tuple[str, ...] = ()) -> GateResult:
    return GateResult(REPO, "main", answer, DEFAULT, manifest_json.dump(FILES) if files else [],
                      suggestions=suggestions)


class Gate:
    """A fake gate: an answer per revision (a GateResult, or an exception to raise); ``asked`` in order."""

    def __init__(self, answers: dict[str, GateResult | Exception]) -> None:
        self.answers = answers
        self.asked: list[tuple[str, str]] = []

    def __call__(self, repo: str, revision: str) -> GateResult:
        self.asked.append((repo, revision))
        answer = self.answers[revision]
        if isinstance(answer, Exception):
            raise answer
        return answer


class Queue:
    def __init__(self, error: Exception | None = None) -> None:
        self.queued: list[tuple[str, str]] = []
        self.error = error

    def __call__(self, repo: str, revision: str) -> str:
        self.queued.append((repo, revision))
        if self.error is not None:
            raise self.error
        return HEAD


def refused(endpoint: Endpoint, revision: str = "main") -> Refusal:
    with pytest.raises(Refusal) as raised:
        endpoint.serve(REPO, revision)
    return raised.value


def approved_gate() -> GateFn:
    return Gate({"main": result(Approved(outcome(HEAD, approved=True)), files=True)})


def test_an_approved_revision_is_served_with_its_manifest() -> None:
    served = Endpoint(approved_gate()).serve(REPO, "main")
    assert served == Served(REPO, HEAD, {f.path: f for f in FILES})
    assert served.note == ""


def test_a_denied_revision_is_refused_with_its_reasons_and_the_next_step() -> None:
    reasons = ("lookalike org", "pickle import os.system")
    gate = Gate({"main": result(Denied(outcome(HEAD, approved=False, verdict="reject", reasons=reasons)))})
    refusal = refused(Endpoint(gate))
    assert (refusal.status, refusal.code, refusal.reason) == (403, "GatedRepo", "denied")
    assert "lookalike org; pickle import os.system" in refusal.message
    assert f"{REPO}@{HEAD}" in refusal.message
    assert "overrides it with `hfvet review`" in refusal.message


def test_a_revision_waiting_for_review_names_the_review_step() -> None:
    gate = Gate({"main": result(Denied(outcome(HEAD, approved=False, verdict="review", reasons=("remote code",))))})
    refusal = refused(Endpoint(gate))
    assert refusal.reason == "denied"
    assert f"hfvet review {REPO} --revision {HEAD} --approve" in refusal.message


def test_a_denial_without_reasons_says_so() -> None:
    gate = Gate({"main": result(Denied(outcome(HEAD, approved=False, verdict="reject")))})
    assert "no reasons recorded" in refused(Endpoint(gate)).message


def test_not_vetted_without_a_queue_is_refused_and_names_the_vet_step() -> None:
    gate = Gate({"main": result(NotVetted("main"), suggestions=("nvidia/model-x",))})
    refusal = refused(Endpoint(gate))
    assert (refusal.status, refusal.code, refusal.reason, refusal.retry_after) == (403, "GatedRepo", "not-vetted",
                                                                                     None)
    assert f"hfvet vet {REPO} --revision main" in refusal.message
    assert "did you mean nvidia/model-x?" in refusal.message


def test_not_vetted_with_a_queue_queues_a_vet_and_asks_to_retry() -> None:
    queue = Queue()
    refusal = refused(Endpoint(Gate({"main": result(NotVetted("main"))}), queue=queue))
    assert queue.queued == [(REPO, "main")]
    assert (refusal.status, refusal.code, refusal.reason) == (503, None, "queued")
    assert refusal.retry_after is not None and refusal.retry_after > 0
    assert f"a vet of {HEAD} is queued" in refusal.message


def test_a_queue_that_cannot_reach_the_hub_answers_503() -> None:
    queue = Queue(HubUnreachable("down"))
    refusal = refused(Endpoint(Gate({"main": result(NotVetted("main"))}), queue=queue))
    assert (refusal.status, refusal.reason) == (503, "hub-unavailable")
    assert refusal.retry_after is not None


@pytest.mark.parametrize("answer", [Approved(outcome(HEAD, approved=True)),
                                    Denied(outcome(HEAD, approved=False, verdict="reject"))])
def test_the_queue_is_only_called_for_an_unvetted_revision(answer: Answer) -> None:
    queue = Queue()
    with contextlib.suppress(Refusal):  # a denial is refused, without queueing
        Endpoint(Gate({"main": result(answer, files=True)}), queue=queue).serve(REPO, "main")
    assert queue.queued == []


def moved_gate() -> Gate:
    return Gate({"main": result(Moved(HEAD, outcome(OLD, approved=True))),
                 OLD: result(Approved(outcome(OLD, approved=True)), files=True)})


def test_a_moved_branch_is_served_at_the_newest_approved_commit_by_default() -> None:
    gate = moved_gate()
    served = Endpoint(gate).serve(REPO, "main")
    assert (served.commit, set(served.files)) == (OLD, {f.path for f in FILES})
    assert HEAD in served.note and OLD in served.note
    assert gate.asked == [(REPO, "main"), (REPO, OLD)]  # the older commit is gated in its own right


def test_a_moved_branch_is_refused_when_so_configured() -> None:
    gate = moved_gate()
    refusal = refused(Endpoint(gate, branch_moved="refuse"))
    assert (refusal.status, refusal.code, refusal.reason) == (403, "GatedRepo", "moved")
    assert f"hfvet vet {REPO} --revision main" in refusal.message
    assert f"revision={OLD!r}" in refusal.message
    assert gate.asked == [(REPO, "main")]


def test_a_moved_branch_whose_older_approval_is_now_denied_is_refused() -> None:
    gate = Gate({"main": result(Moved(HEAD, outcome(OLD, approved=True))),
                 OLD: result(Denied(outcome(OLD, approved=False, verdict="reject", reasons=("revoked",))))})
    refusal = refused(Endpoint(gate))
    assert (refusal.status, refusal.reason) == (403, "denied")


@pytest.mark.parametrize(("error", "status", "code", "reason"), [
    (HubRevisionNotFound("no such branch"), 404, "RevisionNotFound", "revision-not-found"),
    (HubRepoNotFound("no such repo"), 404, "RepoNotFound", "repo-not-found"),
    (AmbiguousCommit(REPO, "abc1234", ["abc1234" + "0" * 33, "abc1234" + "1" * 33]), 404, "RevisionNotFound",
     "ambiguous-revision"),
    (HubUnreachable("connection refused"), 503, None, "hub-unavailable"),
    (HubError("bad answer"), 503, None, "hub-unavailable"),
    (GateError("budget spent"), 503, None, "hub-unavailable"),
])
def test_hub_and_gate_errors_map_to_the_clients_errors(error: Exception, status: int, code: str | None,
                                                       reason: str) -> None:
    refusal = refused(Endpoint(Gate({"main": error})))
    assert (refusal.status, refusal.code, refusal.reason) == (status, code, reason)
    assert (refusal.retry_after is not None) == (status == 503)


def test_an_unreadable_stored_manifest_serves_nothing() -> None:
    bad = GateResult(REPO, "main", Approved(outcome(HEAD, approved=True)), DEFAULT,
                     [{"path": "../escape", "size": 1, "sha256": "d" * 64}])
    refusal = refused(Endpoint(Gate({"main": bad})))
    assert (refusal.status, refusal.code, refusal.reason) == (403, "GatedRepo", "bad-manifest")
