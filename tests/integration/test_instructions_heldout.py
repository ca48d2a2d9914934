"""The held-out instruction, source and identity corpus of issue 24 (tests/corpus/instructions_heldout.py)
under the default policy.

Hostile: a third-party repo is rejected, and the same bytes from a vendor-official org are not approved
(a vendor account can be compromised; what an install line fetches still needs a person). Identity cases
(``identity-org-*``) are vetted under the lookalike publisher they name and must be rejected there; their
bytes are clean, so the same files from a plain third party must not be. Benign vendor shapes are never
rejected, at either tier: a third party may paste the vendor's own instructions (the NIM command, the uv
installer) and that is not a reason to reject it either (tests/integration/test_hard_benign.py asserts the
same for every benign case, plus the vendor verdict each case states). The cases were written from the
tools' documentation and source, not from hfvet's rules: a failure here is a gap, not a test to relax.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import pytest

from app.core.findings import Finding
from app.core.manifest import Manifest
from app.core.pipeline import VetOptions, vet
from app.core.policy import LoadedPolicy
from app.core.policy.engine import evaluate
from app.core.policy.facts import facts_from
from app.core.report import FileReport
from app.core.scanners import all_scanners
from app.core.verdict import Decision, Verdict
from app.sources.local import LocalSource
from tests.corpus import instructions_heldout as heldout
from tests.corpus.registry import Case, all_cases
from tests.corpus.verdicts import ORGS, default_policy

CASES = [c for c in all_cases() if c.family in (heldout.HOSTILE, heldout.BENIGN)]
IDENTITY = [c for c in CASES if c.name in heldout.PUBLISHED_AS]
HOSTILE = [c for c in CASES if c.kind == "hostile" and c.name not in heldout.PUBLISHED_AS]
BENIGN = [c for c in CASES if c.kind == "benign"]
PLAIN_THIRD_PARTY = "some-user/heldout-control"


@pytest.fixture(scope="module")
def policy() -> LoadedPolicy:
    return default_policy()


def decisions_under(folder: Path, policy: LoadedPolicy, scanned_as: str,
                    publishers: Mapping[str, str]) -> dict[str, Decision]:
    """Scan the folder once as `scanned_as` (its own repo id, so a card's self-references are its own),
    then let the policy decide the same findings for each named publisher's repo id."""
    decisions: dict[str, Decision] = {}

    def decide(manifest: Manifest, findings: list[Finding], files: list[FileReport]) -> Decision:
        for label, repo_id in publishers.items():
            named = replace(manifest, identity=replace(manifest.identity, repo_id=repo_id))
            decisions[label] = evaluate(policy, facts_from(named, findings, files))
        return decisions[next(iter(publishers))]

    vet(LocalSource(folder, repo_id=scanned_as), all_scanners(), decide=decide, options=VetOptions(workers=2))
    return decisions


def _by_tier(case: Case, policy: LoadedPolicy, tmp_path: Path) -> dict[str, tuple[Verdict, list[str]]]:
    folder = case.write(tmp_path / case.name)
    publishers = {tier: f"{org}/{case.name}" for tier, org in ORGS.items()}
    decisions = decisions_under(folder, policy, "this/repo", publishers)
    return {tier: (d.verdict, sorted({r.rule for r in d.reasons})) for tier, d in decisions.items()}


@pytest.mark.parametrize("case", HOSTILE, ids=[c.name for c in HOSTILE])
def test_hostile_instruction_is_rejected_for_third_parties_and_not_approved_for_vendors(
    case: Case, policy: LoadedPolicy, tmp_path: Path
) -> None:
    verdicts = _by_tier(case, policy, tmp_path)
    assert verdicts["third-party"][0] is Verdict.REJECT, (case.why, verdicts)
    assert verdicts["vendor-official"][0] is not Verdict.APPROVE, (case.why, verdicts)


@pytest.mark.parametrize("case", IDENTITY, ids=[c.name for c in IDENTITY])
def test_a_vendor_lookalike_publisher_is_rejected(case: Case, policy: LoadedPolicy, tmp_path: Path) -> None:
    published = heldout.PUBLISHED_AS[case.name]
    decisions = decisions_under(case.write(tmp_path / case.name), policy, published, {"lookalike": published})
    decision = decisions["lookalike"]
    assert decision.verdict is Verdict.REJECT, (case.why, [r.rule for r in decision.reasons])


@pytest.mark.parametrize("case", IDENTITY, ids=[c.name for c in IDENTITY])
def test_a_lookalike_case_is_rejected_for_its_publisher_not_its_bytes(
    case: Case, policy: LoadedPolicy, tmp_path: Path
) -> None:
    published = heldout.PUBLISHED_AS[case.name]
    decisions = decisions_under(case.write(tmp_path / case.name), policy, published, {"plain": PLAIN_THIRD_PARTY})
    assert decisions["plain"].verdict is not Verdict.REJECT, [r.rule for r in decisions["plain"].reasons]


@pytest.mark.parametrize("case", BENIGN, ids=[c.name for c in BENIGN])
def test_benign_vendor_shape_is_never_rejected(case: Case, policy: LoadedPolicy, tmp_path: Path) -> None:
    verdicts = _by_tier(case, policy, tmp_path)
    assert {tier: v for tier, v in verdicts.items() if v[0] is Verdict.REJECT} == {}, case.why


@pytest.mark.parametrize("name", sorted(heldout.BENIGN_PUBLISHED_AS))
def test_a_repo_name_that_names_its_base_is_not_a_lookalike(name: str, policy: LoadedPolicy, tmp_path: Path) -> None:
    case = next(c for c in BENIGN if c.name == name)
    published = heldout.BENIGN_PUBLISHED_AS[name]
    decisions = decisions_under(case.write(tmp_path / name), policy, published, {"quantizer": published})
    assert decisions["quantizer"].verdict is not Verdict.REJECT, [r.rule for r in decisions["quantizer"].reasons]


def test_the_held_out_corpus_covers_the_three_classes() -> None:
    hostile = [c for c in CASES if c.kind == "hostile"]
    by_class = {prefix: [c for c in hostile if c.name.startswith(prefix)]
                for prefix in ("form-", "source-", "identity-")}
    assert len(hostile) >= 40 and len(BENIGN) >= 15
    assert len(by_class["form-"]) >= 15 and len(by_class["source-"]) >= 15 and len(by_class["identity-"]) >= 10
    assert sum(len(v) for v in by_class.values()) == len(hostile)
    assert all(c.name.startswith("identity-org-") for c in IDENTITY) and len(IDENTITY) >= 5
    assert all(c.why for c in CASES)
