"""The report JSON codec (DESIGN §6.2): ``dump`` a Report, ``load`` one back.

One codec for every reader and writer: the renderers, policy replay, and the store and API.
``load`` validates the whole document, so a stored report that does not parse is a clear
``ReportFormatError``, never a half-read verdict.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.core import signature as signature_json
from app.core.closure import ClosureItem, parse_item
from app.core.findings import Finding, Severity
from app.core.lineage_facts import Lineage
from app.core.repo_refs import RepoReference
from app.core.report import FileReport, Report, Stats
from app.core.signature import SignatureCheck, Signer, SignerKind, State
from app.core.tensor_layout import TensorLayout
from app.core.verdict import Decision, PolicyRef, Reason, Verdict

VerdictName = Literal["approve", "review", "reject"]
SeverityName = Literal["info", "low", "medium", "high", "critical"]


class ReportFormatError(ValueError):
    """A document that is not a well-formed hfvet report."""


def dump(report: Report) -> dict[str, Any]:
    """The report as the §6.2 JSON object (plain dicts, lists and scalars)."""
    return {
        "repo": report.repo,
        "revision": report.revision,
        "verdict": report.verdict.value,
        "reasons": [
            {"rule": r.rule, "decision": r.decision.value, "message": r.message} for r in report.decision.reasons
        ],
        "policy": {"name": report.decision.policy.name, "sha256": report.decision.policy.sha256},
        "findings": [dump_finding(f) for f in report.findings],
        "files": [dump_file(f) for f in report.files],
        "stats": vars(report.stats).copy(),
        "scanners": dict(report.scanners),
        "identity": dict(report.identity),
        "references": [dump_reference(r) for r in report.references],
        "closure": [json.loads(item.evidence()) for item in report.closure],
        **({"lineage": report.lineage.model_dump(mode="json")} if report.lineage is not None else {}),
        **({} if report.signature is None else {"signature": signature_json.to_json(report.signature)}),
    }


def dump_reference(ref: RepoReference) -> dict[str, Any]:
    """A references[] entry; ``code`` only when loading the repo runs its code (older readers see no change)."""
    doc = vars(ref).copy()
    if not ref.code:
        del doc["code"]
    return doc


def dumps(report: Report) -> str:
    return json.dumps(dump(report), indent=2, sort_keys=False)


def dump_file(f: FileReport) -> dict[str, Any]:
    """A files[] entry; ``engines`` only where a corroborating peer handles the file (older readers see no change)."""
    doc = vars(f).copy()
    doc["engines"] = dict(f.engines)
    if not f.engines:
        del doc["engines"]
    if f.bytes_read is None:
        del doc["bytes_read"]
    if f.layout is None:
        del doc["layout"]
    else:
        doc["layout"] = f.layout.dump()
    return doc


def dump_finding(f: Finding) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "path": f.path,
        "member": f.member,
        "scanner": f.scanner,
        "rule": f.rule,
        "severity": f.severity.value,
        "message": f.message,
        "evidence": f.evidence,
    }
    if f.source is not None:  # optional: only findings about an install source carry one
        doc["source"] = f.source
    return doc


def load(data: object, source: str = "<report>") -> Report:
    """A Report from its §6.2 JSON object; ``ReportFormatError`` says what is wrong and where."""
    if not isinstance(data, Mapping):
        raise ReportFormatError(f"{source}: not a hfvet report (expected a JSON object)")
    try:
        doc = _ReportDoc.model_validate(data)
    except ValidationError as exc:
        raise ReportFormatError(f"{source}: malformed report: {exc}") from exc
    return doc.to_report()


# A missing report file is most often a repo id given where a file is asked (`policy explain ORG/NAME`).
_WRITE_ONE = " (a report file is what `hfvet vet ORG/NAME --format json > report.json` or `hfvet scan` writes)"


def read(path: Path) -> dict[str, Any]:
    """The JSON object stored at ``path`` (not yet validated as a report)."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        hint = _WRITE_ONE if isinstance(exc, FileNotFoundError) else ""
        raise ReportFormatError(f"{path}: cannot read report JSON: {exc}{hint}") from exc
    if not isinstance(data, dict):
        raise ReportFormatError(f"{path}: not a hfvet report (expected a JSON object)")
    return data


class _Doc(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)  # newer writers may add keys


class _ReasonDoc(_Doc):
    rule: str
    decision: VerdictName
    message: str


class _PolicyDoc(_Doc):
    name: str
    sha256: str | None = None


class _FindingDoc(_Doc):
    path: str
    member: str | None = None
    scanner: str
    rule: str
    severity: SeverityName
    message: str
    evidence: str | None = None
    source: str | None = None


class _FileDoc(_Doc):
    path: str
    size: int = Field(ge=0)
    sha256: str | None = None
    blob_id: str | None = None
    format: str
    scanned: bool  # required: a stored report must say whether each file was vetted
    engines: dict[str, str] = Field(default_factory=dict)  # absent in reports before peers could be skipped
    bytes_read: int | None = Field(default=None, ge=0)  # absent in reports before it was kept per file
    layout: _LayoutDoc | None = None  # safetensors files only; absent in reports before it was kept


class _LayoutDoc(_Doc):
    tensors: int = Field(ge=0)
    names: str = Field(pattern="^[0-9a-f]{64}$")
    shapes: str = Field(pattern="^[0-9a-f]{64}$")
    typed: str = Field(pattern="^[0-9a-f]{64}$")
    dtypes: list[str] = Field(default_factory=list)

    def to_layout(self) -> TensorLayout:
        return TensorLayout(self.tensors, self.names, self.shapes, self.typed, tuple(self.dtypes))


class _StatsDoc(_Doc):
    files: int = Field(ge=0)
    repo_bytes: int = Field(ge=0)
    bytes_read: int = Field(ge=0)
    seconds: float = Field(ge=0)


class _ReferenceDoc(_Doc):
    repo: str
    revision: str | None = None
    path: str
    via: str
    code: bool = False


class _SignerDoc(_Doc):
    kind: SignerKind
    identity: str
    matched: str | None = None


class _SignatureDoc(_Doc):
    file: str
    state: State
    signer: _SignerDoc | None = None
    method: str | None = None
    problem: str | None = None
    unsigned: list[str] = Field(default_factory=list)
    mismatched: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    signed_files: int = Field(default=0, ge=0)
    bytes_read: int = Field(default=0, ge=0)

    def to_check(self) -> SignatureCheck:
        signer = None if self.signer is None else Signer(self.signer.kind, self.signer.identity, self.signer.matched)
        return SignatureCheck(self.file, self.state, signer, self.method, self.problem, tuple(self.unsigned),
                              tuple(self.mismatched), tuple(self.missing), self.signed_files, self.bytes_read)


class _ReportDoc(_Doc):
    repo: str | None = None
    revision: str | None = None
    verdict: VerdictName
    reasons: list[_ReasonDoc]
    policy: _PolicyDoc
    findings: list[_FindingDoc]
    files: list[_FileDoc]
    stats: _StatsDoc
    scanners: dict[str, str] = Field(default_factory=dict)
    identity: dict[str, Any] = Field(default_factory=dict)
    references: list[_ReferenceDoc] = Field(default_factory=list)  # absent in reports before it existed
    closure: list[dict[str, Any]] = Field(default_factory=list)  # likewise
    lineage: Lineage | None = None  # only where a store was consulted (app.core.provenance.lineage)
    signature: _SignatureDoc | None = None  # absent in reports before signatures were checked

    def to_report(self) -> Report:
        reasons = tuple(Reason(r.rule, Verdict(r.decision), r.message) for r in self.reasons)
        return Report(
            repo=self.repo,
            revision=self.revision,
            decision=Decision(Verdict(self.verdict), reasons, PolicyRef(self.policy.name, self.policy.sha256),
                              self.lineage),
            findings=tuple(
                Finding(f.path, f.scanner, f.rule, Severity(f.severity), f.message, f.member, f.evidence,
                        f.source)
                for f in self.findings
            ),
            files=tuple(
                FileReport(f.path, f.size, f.sha256, f.blob_id, f.format, f.scanned, dict(f.engines), f.bytes_read,
                           f.layout.to_layout() if f.layout else None)
                for f in self.files
            ),
            stats=Stats(self.stats.files, self.stats.repo_bytes, self.stats.bytes_read, self.stats.seconds),
            scanners=dict(self.scanners),
            identity=dict(self.identity),
            references=tuple(RepoReference(r.repo, r.revision, r.path, r.via, r.code) for r in self.references),
            closure=tuple(item for item in map(_closure_item, self.closure) if item is not None),
            signature=None if self.signature is None else self.signature.to_check(),
        )


def _closure_item(doc: dict[str, Any]) -> ClosureItem | None:
    return parse_item(json.dumps(doc))
