"""`referenced_repos[].vetted/approved/sha`: data the service hands in; unknown is never approved."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.findings import Severity
from app.core.policy import load_policy
from app.core.policy.activation import referenced_repos
from app.core.policy.engine import evaluate_referencing
from app.core.policy.facts import FindingFact, ReferenceFact
from app.core.repo_refs import RepoReference
from tests.unit.core.policy.helpers import POLICIES, facts

DEFAULT = load_policy(POLICIES / "default.yaml")
STRICT = load_policy(POLICIES / "strict.yaml")
BASE = RepoReference("meta-llama/Llama-3.1-8B", None, "adapter_config.json", "adapter base model")
CARD = RepoReference("meta-llama/Llama-3.1-8B", None, "README.md", "card base_model")
SHA = "b" * 40


def finding(ref: RepoReference) -> dict[str, object]:
    return {"path": ref.path, "rule": "repo-reference", "severity": "info", "scanner": "repo-references",
            "evidence": ref.evidence()}


class Judge:
    """Answers every reference with ``approved``, recording what it was asked."""

    def __init__(self, approved: bool) -> None:
        self.approved = approved
        self.asked: list[RepoReference] = []

    def __call__(self, refs: Sequence[RepoReference]) -> list[ReferenceFact]:
        self.asked.extend(refs)
        return [ReferenceFact(repo=r.repo, revision=r.revision, sha=SHA, vetted=True, approved=self.approved)
                for r in refs]


def test_a_reference_the_service_did_not_judge_is_unvetted_and_unapproved() -> None:
    fact = FindingFact(path=BASE.path, rule="repo-reference", severity=Severity.INFO, evidence=BASE.evidence())
    other = ReferenceFact(repo="someone/else", vetted=True, approved=True)
    [entry] = referenced_repos([fact], [other])
    assert (entry["vetted"], entry["approved"], entry["sha"]) == (False, False, None)
    judged = ReferenceFact(repo=BASE.repo, revision=None, sha=SHA, vetted=True, approved=True)
    assert referenced_repos([fact], [judged])[0] == {**vars(BASE), "vetted": True, "approved": True, "sha": SHA,
                                                              "tier": "third-party", "lookalike": False}


def test_the_default_reviews_an_adapter_until_its_base_is_approved() -> None:
    adapter = facts("nvidia/lora", [finding(BASE)], files=[{"path": "adapter_config.json", "format": "text"}])
    assert evaluate_referencing(DEFAULT, adapter, [BASE], None).verdict.value == "review"  # no store: fail closed
    assert evaluate_referencing(DEFAULT, adapter, [BASE], Judge(False)).verdict.value == "review"
    assert evaluate_referencing(DEFAULT, adapter, [BASE], Judge(True)).verdict.value == "approve"


def test_the_store_is_not_asked_when_the_verdict_cannot_depend_on_it() -> None:
    # The default lists card mentions only: asking would cost a hub call per gate for every vendor quant.
    quant = facts("nvidia/quant", [finding(CARD)], files=[{"path": "README.md", "format": "text"}])
    judge = Judge(False)
    assert evaluate_referencing(DEFAULT, quant, [CARD], judge).verdict.value == "approve"
    assert judge.asked == []
    strict = Judge(False)  # strict requires every reference approved, card mentions too
    assert evaluate_referencing(STRICT, quant, [CARD], strict).verdict.value == "reject"
    assert strict.asked == [CARD]
    assert evaluate_referencing(STRICT, quant, [CARD], Judge(True)).verdict.value == "approve"
