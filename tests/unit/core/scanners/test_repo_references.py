"""Cross-repo references: found in configs, adapters, cards and code; listed in the report and
its JSON; visible to the policy as `referenced_repos`."""

from __future__ import annotations

import json
from pathlib import Path

from app.core.findings import Finding, Severity
from app.core.pipeline import VetOptions, vet
from app.core.policy.activation import VARIABLES, referenced_repos
from app.core.policy.facts import FindingFact
from app.core.repo_refs import RepoReference, references_from
from app.core.report import Report
from app.core.report_json import dump, load
from app.core.scanners.repo_refs_scanner import RepoReferenceScanner
from app.sources.local import LocalSource
from tests.corpus import repo_references as corpus


def _vet(tmp_path: Path, files: dict[str, bytes], repo_id: str | None = None) -> Report:
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    return vet(LocalSource(tmp_path, repo_id=repo_id), [RepoReferenceScanner()], options=VetOptions(workers=1))


def _refs(report: Report) -> set[tuple[str, str | None, str, str]]:
    return {(r.repo, r.revision, r.path, r.via) for r in report.references}


def test_auto_map_and_name_or_path_in_every_config(tmp_path: Path) -> None:
    report = _vet(tmp_path, corpus.auto_map_elsewhere())
    assert _refs(report) == {
        ("someone/tiny-code", None, "config.json", "auto_map remote code configuration_tiny.TinyConfig"),
        ("someone/tiny-code", None, "config.json", "auto_map remote code modeling_tiny.TinyLM"),
        ("someone/text-tower", None, "config.json", "_name_or_path"),
        ("someone/tok", None, "tokenizer_config.json", "auto_map remote code tok.Slow"),
        ("someone/tok", None, "tokenizer_config.json", "auto_map remote code tok.Fast"),
    }
    assert {f.severity for f in report.findings} == {Severity.INFO}


def test_adapter_base_model_with_and_without_revision(tmp_path: Path) -> None:
    assert _refs(_vet(tmp_path / "a", corpus.adapter_unpinned())) == {
        ("someone/base-7b", None, "adapter_config.json", "adapter base model")}
    [ref] = _vet(tmp_path / "b", corpus.vendor_adapter()).references
    assert ref.revision == "0e9e39f249a16976918f6564b8830bc894c89659"


def test_cards_and_code(tmp_path: Path) -> None:
    assert _refs(_vet(tmp_path, corpus.card_and_script())) == {
        ("someone/base-7b", None, "README.md", "card base_model"),
        ("someone/base-7b", "v1.0", "README.md", "from_pretrained"),
        ("someone/helpers", None, "run.py", "hf_hub_download"),
    }


def test_local_paths_and_the_repo_itself_are_not_references(tmp_path: Path) -> None:
    files = {"config.json": b'{"_name_or_path": "./checkpoints/final", "auto_map": {"AutoModel": "modeling.M"}}',
             "README.md": b'm = AutoModel.from_pretrained("me/this-model")\n'}
    assert _vet(tmp_path, files, repo_id="me/this-model").references == ()


def test_references_round_trip_through_the_report_json(tmp_path: Path) -> None:
    report = _vet(tmp_path, corpus.adapter_unpinned())
    doc = json.loads(json.dumps(dump(report)))
    assert doc["references"] == [{"repo": "someone/base-7b", "revision": None, "path": "adapter_config.json",
                                  "via": "adapter base model"}]
    assert load(doc).references == report.references
    del doc["references"]  # a report written before the field existed still loads
    assert load(doc).references == ()


def test_malformed_reference_evidence_is_ignored() -> None:
    good = RepoReference("a/b", "main", "x.json", "_name_or_path")
    findings = [Finding("x.json", "repo-references", "repo-reference", Severity.INFO, "m", None, good.evidence()),
                Finding("y.json", "repo-references", "repo-reference", Severity.INFO, "m", None, "not json"),
                Finding("z.json", "links", "external-link", Severity.INFO, "m", None, good.evidence())]
    assert references_from(findings) == (good,)


def test_the_policy_sees_referenced_repos() -> None:
    ref = RepoReference("someone/base-7b", None, "adapter_config.json", "adapter base model")
    facts = [FindingFact(path=ref.path, rule="repo-reference", severity=Severity.INFO, evidence=ref.evidence())]
    assert referenced_repos(facts) == [{"repo": "someone/base-7b", "revision": None,
                                        "path": "adapter_config.json", "via": "adapter base model",
                                        "code": False, "vetted": False, "approved": False, "sha": None,
                                        "tier": "third-party", "lookalike": False}]  # no store: fail closed
    assert "referenced_repos" in {v.name for v in VARIABLES}
