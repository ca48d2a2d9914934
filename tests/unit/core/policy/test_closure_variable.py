"""The policy sees the load closure (`closure`) and, for each reference, whether loading it runs code and
the tier of its org."""

from __future__ import annotations

from app.core.closure import ClosureItem, Gate, Kind
from app.core.findings import Severity
from app.core.policy.activation import VendorData, build_activation
from app.core.policy.facts import FindingFact, PolicyFacts
from app.core.policy.schema import Tiers
from app.core.repo_refs import RepoReference

INSTALL = ClosureItem("endpoints.requirements", "endpoints", Kind.INSTALL, Gate.ALWAYS, "requirements.txt",
                      "requirements.txt", local=False)


def fact(rule: str, evidence: str) -> FindingFact:
    return FindingFact(path="x", rule=rule, severity=Severity.INFO, evidence=evidence)


def activation(findings: list[FindingFact]) -> dict[str, object]:
    tiers = Tiers.model_validate({"vendor-official": ["nvidia"]})
    built = build_activation(PolicyFacts(findings=findings), findings, [], ("third-party", None), {},
                             VendorData(tiers=tiers))
    return dict(built.plain)


def test_the_closure_variable_lists_each_item_once() -> None:
    seen = activation([fact("load-closure", INSTALL.evidence()), fact("load-closure", INSTALL.evidence()),
                       fact("load-closure", "not json")])
    assert seen["closure"] == [{"surface": "endpoints.requirements", "runtime": "endpoints", "kind": "install",
                                "gate": "always", "path": "requirements.txt", "target": "requirements.txt",
                                "repo": None, "revision": None, "carries_trust": False, "runs": [], "local": False}]


def test_references_say_whether_they_run_code_and_the_tier_of_their_org() -> None:
    refs = [RepoReference("nvidia/x", None, "README.md", "transformers.from-pretrained-call", True),
            RepoReference("nvldia/x", None, "README.md", "vllm.tokenizer", True),
            RepoReference("someone/y", "v1", "adapter_config.json", "adapter base model")]
    seen = activation([fact("repo-reference", r.evidence()) for r in refs])
    got = [(r["repo"], r["code"], r["tier"], r["lookalike"]) for r in seen["referenced_repos"]]  # type: ignore[attr-defined]
    assert got == [("nvidia/x", True, "vendor-official", False), ("nvldia/x", True, "third-party", True),
                   ("someone/y", False, "third-party", False)]
