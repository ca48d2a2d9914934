"""Each example repo, scanned as a local snapshot by every registered scanner, produces the
findings its `ExampleRepo` entry promises.

Identity-based outcomes (the lookalike org, review of vendor remote code) come from the trust
policy, not from content scanners; here they are only checked not to trip content rules.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.pipeline import vet
from app.core.report import Report
from app.core.scanners import all_scanners
from app.core.verdict import Verdict
from app.examples import EXAMPLES, ExampleRepo, build_examples, example
from app.sources.local import LocalSource

# Where the decisive findings must point (rule -> repo-relative paths, any of them).
EXPECTED_PATHS = {
    "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP": {
        "executable-binary": {"libfp8_moe.so"},
        "forked-code": {"README.md", "install.sh"},
        "binary-download": {"README.md", "install.sh", "modeling_deepseek.py"},
    },
    "quantfarm/Llama-3.1-8B-Instruct-pt": {"pickle-dangerous-global": {"pytorch_model.bin"}},
}


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Report]:
    scanners = all_scanners()
    root: Path = tmp_path_factory.mktemp("snapshots")
    build_examples(root, hub_meta=False)  # snapshot layout: repo content only
    return {ex.repo_id: vet(LocalSource(ex.path(root), repo_id=ex.repo_id), scanners) for ex in EXAMPLES}


def rules_of(report: Report) -> set[str]:
    return {f.rule for f in report.findings}


def describe(report: Report) -> str:
    return "\n".join(f"{f.severity.value:8} {f.rule:28} {f.path}: {f.message}" for f in report.findings)


@pytest.mark.parametrize("ex", EXAMPLES, ids=lambda ex: ex.repo_id)
def test_expected_rules_are_found(ex: ExampleRepo, reports: dict[str, Report]) -> None:
    report = reports[ex.repo_id]
    found = rules_of(report)
    missing = set(ex.expected_rules) - found
    assert not missing, f"missing {missing}; found:\n{describe(report)}"
    for group in ex.expected_rules_any:
        assert found & set(group), f"none of {group} found:\n{describe(report)}"


@pytest.mark.parametrize("ex", [ex for ex in EXAMPLES if ex.max_severity], ids=lambda ex: ex.repo_id)
def test_no_finding_above_the_expected_severity(ex: ExampleRepo, reports: dict[str, Report]) -> None:
    assert ex.max_severity is not None
    cap = ex.max_severity
    too_severe = [f for f in reports[ex.repo_id].findings if f.severity.rank > cap.rank]
    assert not too_severe, describe(reports[ex.repo_id])


@pytest.mark.parametrize("repo_id", list(EXPECTED_PATHS))
def test_findings_point_at_the_offending_files(repo_id: str, reports: dict[str, Report]) -> None:
    report = reports[repo_id]
    for rule, paths in EXPECTED_PATHS[repo_id].items():
        where = {f.path for f in report.findings if f.rule == rule}
        assert where and where <= paths, f"{rule} at {where}, expected within {paths}"


def test_vendor_repo_is_fully_scanned_and_clean(reports: dict[str, Report]) -> None:
    report = reports["nvidia/DeepSeek-V4-Flash-NVFP4"]
    assert all(f.scanned for f in report.files), [f.path for f in report.files if not f.scanned]
    assert not [f for f in report.findings if f.severity.rank >= Severity.HIGH.rank], describe(report)
    assert report.verdict is Verdict.APPROVE, describe(report)


@pytest.mark.parametrize("repo_id", ["canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP",
                                     "quantfarm/Llama-3.1-8B-Instruct-pt"])
def test_hostile_content_is_rejected_even_without_a_policy(repo_id: str, reports: dict[str, Report]) -> None:
    assert example(repo_id).expected_verdict is Verdict.REJECT
    assert reports[repo_id].verdict is Verdict.REJECT, describe(reports[repo_id])


def test_lookalike_content_scans_like_the_vendor_copy(reports: dict[str, Report]) -> None:
    vendor = reports["nvidia/DeepSeek-V4-Flash-NVFP4"]
    copy = reports["nvldia/DeepSeek-V4-Flash-NVFP4"]
    # The copy's card serves nvidia/DeepSeek-V4-Flash-NVFP4 by name: another repo for the copy (a load-closure
    # item), the repo itself for the vendor. Everything else is the same.
    assert {(f.path, f.rule) for f in copy.findings} - {("README.md", "load-closure")} == {
        (f.path, f.rule) for f in vendor.findings}
    assert any(f.rule == "load-closure" and "nvidia/DeepSeek-V4-Flash-NVFP4" in f.message for f in copy.findings)
