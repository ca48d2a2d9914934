"""SARIF 2.1.0 output for code-scanning UIs (GitHub, GitLab, IDEs)."""

from __future__ import annotations

import json
from typing import Any

from app import __version__
from app.core.findings import Finding, Severity
from app.core.report import Report

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {
    Severity.CRITICAL: "error",
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "note",
    Severity.INFO: "note",
}
# GitHub sorts code-scanning alerts by this numeric security severity.
_SECURITY_SEVERITY = {
    Severity.CRITICAL: "9.5",
    Severity.HIGH: "8.0",
    Severity.MEDIUM: "5.0",
    Severity.LOW: "2.0",
    Severity.INFO: "0.0",
}


class SarifRenderer:
    def render(self, report: Report, *, show_info: bool = False) -> str:
        return json.dumps(sarif_document(report), indent=2) + "\n"


def sarif_document(report: Report) -> dict[str, Any]:
    rule_ids = sorted({f.rule for f in report.findings})
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "hfvet",
                        "version": __version__,
                        "rules": [_rule(rid, report.findings) for rid in rule_ids],
                    }
                },
                "results": [_result(f, rule_ids.index(f.rule)) for f in report.findings],
                "properties": {
                    "repo": report.repo,
                    "revision": report.revision,
                    "verdict": report.verdict.value,
                    "policy": report.decision.policy.name,
                    # Which corroborating engines ran on which file, and why (docs/engines.md).
                    "engines": {f.path: dict(f.engines) for f in report.files if f.engines},
                },
            }
        ],
    }


def _rule(rule_id: str, findings: tuple[Finding, ...]) -> dict[str, Any]:
    worst = max((f.severity for f in findings if f.rule == rule_id), key=lambda s: s.rank)
    return {
        "id": rule_id,
        "shortDescription": {"text": rule_id},
        "defaultConfiguration": {"level": _LEVELS[worst]},
        "properties": {"security-severity": _SECURITY_SEVERITY[worst], "tags": ["security"]},
    }


def _result(f: Finding, rule_index: int) -> dict[str, Any]:
    where = f"{f.path}!{f.member}" if f.member else f.path
    message = f.message if not f.evidence else f"{f.message} ({f.evidence})"
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": rule_index,
        "level": _LEVELS[f.severity],
        "message": {"text": message},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": f.path}}}],
        "properties": {"scanner": f.scanner, "severity": f.severity.value, "location": where},
    }
    line = _line_of(f.evidence)
    if line:
        result["locations"][0]["physicalLocation"]["region"] = {"startLine": line}
    return result


def _line_of(evidence: str | None) -> int | None:
    """Scanners write line evidence as ``path:LINE: text``."""
    if not evidence:
        return None
    parts = evidence.split(":", 2)
    if len(parts) >= 2 and parts[1].isdigit():
        return int(parts[1])
    return None
