"""Revision diffs from two stored reports: files, findings, templates and auto_map, with and without a hub."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from app.core.gate import Outcome
from app.db.repos import RepoFacts
from app.db.repository import StoredReport
from app.errors import HfvetError
from app.services.diff import diff_revisions
from app.services.listing import Decision, RepoHistory

OLD, NEW = "a" * 40, "b" * 40
AT = datetime(2026, 1, 1, tzinfo=UTC)


def entry(path: str, digest: str, fmt: str = "text", size: int = 10) -> dict[str, Any]:
    return {"path": path, "size": size, "sha256": digest, "blob_id": None, "format": fmt, "scanned": True}


def finding(path: str, rule: str, evidence: str | None = None, member: str | None = None,
            scanner: str = "x") -> dict[str, Any]:
    return {"path": path, "member": member, "scanner": scanner, "rule": rule, "severity": "info",
            "message": rule, "evidence": evidence}


def decision(sha: str, files: list[dict[str, Any]], findings: list[dict[str, Any]], verdict: str) -> Decision:
    document = {"files": files, "findings": findings}
    report = StoredReport(1 if sha == OLD else 2, "org/repo", sha, verdict, "default", "p", AT, document)
    return Decision(report, Outcome(sha, verdict == "approve", verdict, (), AT, "policy default"))


def history() -> RepoHistory:
    old_files = [entry("tokenizer_config.json", "t1"), entry("config.json", "c1"), entry("gone.bin", "g", "unknown"),
                 entry("weights.safetensors", "w1", "safetensors")]
    new_files = [entry("tokenizer_config.json", "t2"), entry("config.json", "c2"), entry("modeling.py", "m"),
                 entry("weights.safetensors", "w2", "safetensors")]
    old_findings = [finding("tokenizer_config.json", "chat-template", "sha256:1", "chat_template"),
                    finding("README.md", "upstream-link", "https://github.com/a/b", scanner="links")]
    new_findings = [finding("tokenizer_config.json", "chat-template", "sha256:2", "chat_template"),
                    finding("config.json", "auto-map", "AutoModel")]
    facts = RepoFacts("org/repo", "org", "repo", None, None, None, AT)
    return RepoHistory(facts, "third-party", [(NEW, [decision(NEW, new_files, new_findings, "review")]),
                                              (OLD, [decision(OLD, old_files, old_findings, "approve")])])


TEXTS = {
    (OLD, "tokenizer_config.json"): {"chat_template": "{{ hello }}\n{{ world }}"},
    (NEW, "tokenizer_config.json"): {"chat_template": "{{ hello }}\n{{ cycler.__init__ }}"},
    (OLD, "config.json"): {"model_type": "x"},
    (NEW, "config.json"): {"model_type": "x", "auto_map": {"AutoModel": "modeling.Model"}},
}


def read(repo: str, sha: str, path: str) -> bytes:
    if (sha, path) not in TEXTS:
        raise KeyError(path)
    return json.dumps(TEXTS[sha, path]).encode()


def test_files_findings_and_verdicts() -> None:
    diff = diff_revisions(history(), OLD, NEW, read)
    assert [f.path for f in diff.added] == ["modeling.py"]
    assert [f.path for f in diff.removed] == ["gone.bin"]
    assert [f.path for f in diff.remote_code] == ["modeling.py"]
    assert {f.path for f in diff.binaries} == {"gone.bin", "weights.safetensors"}
    assert {f["rule"] for f in diff.appeared} == {"chat-template", "auto-map"}
    assert [(state, f["rule"]) for state, f in diff.links] == [("gone", "upstream-link")]
    assert diff.before.effective.verdict == "approve" and diff.after.effective.verdict == "review"


def test_the_changed_chat_template_is_a_line_diff() -> None:
    [template] = diff_revisions(history(), OLD, NEW, read).templates
    assert template.path == "tokenizer_config.json" and template.note is None
    assert "+{{ cycler.__init__ }}" in template.lines and "-{{ world }}" in template.lines
    assert " {{ hello }}" in template.lines


def test_auto_map_appearing_is_shown() -> None:
    [auto_map] = diff_revisions(history(), OLD, NEW, read).auto_map
    assert auto_map.path == "config.json"
    assert any(line.startswith("+") and "modeling.Model" in line for line in auto_map.lines)


def test_without_a_hub_the_text_is_missing_and_the_page_says_why() -> None:
    def down(repo: str, sha: str, path: str) -> bytes:
        raise HfvetError("connection refused")

    diff = diff_revisions(history(), OLD, NEW, down)
    assert diff.templates[0].lines == [] and "connection refused" in (diff.templates[0].note or "")
    assert [f.path for f in diff.added] == ["modeling.py"]  # the stored facts still show
    assert diff_revisions(history(), OLD, NEW, None).templates[0].note


def test_a_commit_never_vetted_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        diff_revisions(history(), OLD, "c" * 40, read)
