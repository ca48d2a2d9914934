"""Every loader-map corpus case (tests/corpus/loader_*.py) under the default policy.

Hostile: a third-party repo is rejected and a vendor-official one is never approved, and the rule the
case names fires (a finding rule, or the policy rule that decided). Benign cases run in
test_hard_benign.py with every other benign case.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.policy import LoadedPolicy
from app.core.verdict import Verdict
from tests.corpus.registry import Case, all_cases
from tests.corpus.verdicts import default_policy, vet_by_tier

HOSTILE = [c for c in all_cases() if c.family.startswith("loader-") and c.kind == "hostile"
           and c.family != "loader-heldout"]


@pytest.fixture(scope="module")
def policy() -> LoadedPolicy:
    return default_policy()


@pytest.mark.parametrize("case", HOSTILE, ids=[c.key for c in HOSTILE])
def test_hostile_loader_case_is_rejected_as_third_party_and_never_approved_as_vendor(
    case: Case, policy: LoadedPolicy, tmp_path: Path
) -> None:
    decisions, report = vet_by_tier(case.write(tmp_path / "repo"), policy)
    third, vendor = decisions["third-party"], decisions["vendor-official"]
    assert third.verdict is Verdict.REJECT, [r.rule for r in third.reasons]
    assert vendor.verdict is not Verdict.APPROVE, [r.rule for r in vendor.reasons]
    if case.rule is not None:
        fired = {f.rule for f in report.findings} | {r.rule for r in third.reasons}
        assert case.rule in fired, sorted(fired)
