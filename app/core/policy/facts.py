"""What a policy decides on: repo identity, files and findings, as validated plain data.

The same shape comes from a live vet (`facts_from`), a stored report (`facts_from_report_dict`)
or a policy test case (`input:`), so all three are judged identically.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from app.core.findings import Finding, Severity
from app.core.lineage_facts import Lineage
from app.core.manifest import Manifest
from app.core.policy.errors import PolicyError
from app.core.repo_refs import RepoReference
from app.core.report import FileReport
from app.core.signature import DEFAULT_FILE, SignatureCheck, SignerKind, State


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RepoFacts(_Model):
    id: str | None = Field(None, description="`org/name`, or null for a local scan without --repo.")
    revision: str | None = Field(None, description="40-hex commit, or null when unknown.")
    facts: dict[str, Any] = Field(default_factory=dict, description="Hub metadata: author, tags, gated...")

    @property
    def org(self) -> str | None:
        if not self.id or "/" not in self.id:
            return None
        return self.id.split("/", 1)[0]

    @property
    def name(self) -> str | None:
        return self.id.split("/", 1)[1] if self.id and "/" in self.id else self.id


class FileFact(_Model):
    path: str = Field(description="Repo-relative path.")
    size: int = Field(0, description="Bytes.")
    format: str = Field("unknown", description="Content-sniffed format (safetensors, gguf, pickle...).")
    scanned: bool = Field(True, description="Every scanner that looked finished, and at least one looked.")
    sha256: str | None = Field(None, description="LFS sha256 when known.")
    blob_id: str | None = Field(None, description="Git blob id when known.")


class FindingFact(_Model):
    path: str = Field(description="File the finding is about.")
    rule: str = Field(description="Finding rule id (shared vocabulary, e.g. `pickle-dangerous-global`).")
    severity: Severity = Field(description="How bad, as the scanner judged it.")
    scanner: str = Field("unknown", description="Scanner that reported it.")
    message: str = Field("", description="Human-readable detail.")
    member: str | None = Field(None, description="Archive member, when inside one.")
    evidence: str | None = Field(None, description="Short evidence string.")
    source: str | None = Field(None, description="Install source named (`github.com/owner/repo`, an image...).")


class ReferenceFact(_Model):
    """What the store says of one referenced repo: supplied by the service, never found by the core."""

    repo: str = Field(description="`org/name` as referenced.")
    revision: str | None = Field(None, description="As referenced (branch, tag, commit); null: the default branch.")
    sha: str | None = Field(None, description="The commit it was judged at; null when it could not be resolved.")
    vetted: bool = Field(False, description="The store has a report of that commit.")
    approved: bool = Field(False, description="That commit is approved under the policy (the gate's own rule).")


class SignerFact(_Model):
    kind: SignerKind = Field(description="`key`, `certificate` or `sigstore`.")
    identity: str = Field(description="As the signature names it: `sha256:<key hint>`, a certificate's subject.")
    matched: str | None = Field(None, description="The policy identity that verified it, e.g. `key sha256:...` "
                                "(also when no entry covers the repo: whose it is, the state `unverified`).")


class SignatureFact(_Model):
    """The vendor signature check a vet recorded (the report's `signature`)."""

    file: str = Field(DEFAULT_FILE, description="The signature file looked for.")
    state: State = Field("absent", description="`absent`, `verified`, `unverified` or `invalid` (docs/provenance.md).")
    signer: SignerFact | None = Field(None, description="Who the signature names (null when unreadable or absent).")
    method: str | None = Field(None, description="The signed manifest's serialization, `files` or `shards`.")
    problem: str | None = Field(None, description="Why it is not verified.")
    unsigned: list[str] = Field(default_factory=list, description="Files the signature does not cover.")
    mismatched: list[str] = Field(default_factory=list, description="Files whose sha256 differs from the signed one.")
    missing: list[str] = Field(default_factory=list, description="Signed files this commit does not hold.")
    signed_files: int = Field(0, description="Files the signature covers.")

    @model_validator(mode="before")
    @classmethod
    def _report_shape(cls, data: Any) -> Any:
        """A report's `signature` object pastes as it stands (a test case's `input.signature`): its derived
        `present`/`verified` must agree with `state` and are then dropped; `bytes_read` is a cost, not a fact."""
        if not isinstance(data, Mapping):
            return data
        state = data.get("state", "absent")
        derived = {"present": state != "absent", "verified": state == "verified"}
        for key, expected in derived.items():
            if key in data and data[key] is not expected:
                raise ValueError(f"`{key}: {str(data[key]).lower()}` contradicts `state: {state}`")
        return {k: v for k, v in data.items() if k not in (*derived, "bytes_read")}

    @classmethod
    def of(cls, check: SignatureCheck) -> SignatureFact:
        signer = None if check.signer is None else SignerFact(kind=check.signer.kind, identity=check.signer.identity,
                                                              matched=check.signer.matched)
        return cls(file=check.file, state=check.state, signer=signer, method=check.method, problem=check.problem,
                   unsigned=list(check.unsigned), mismatched=list(check.mismatched), missing=list(check.missing),
                   signed_files=check.signed_files)


class PolicyFacts(_Model):
    repo: RepoFacts = Field(default_factory=RepoFacts, description="Who published it.")
    files: list[FileFact] = Field(default_factory=list, description="Every file of the revision.")
    findings: list[FindingFact] = Field(default_factory=list, description="Every finding of the vet.")
    reference_status: list[ReferenceFact] = Field(
        default_factory=list, description="The store's judgement of referenced repos; a reference not listed "
        "counts as not vetted and not approved (fail closed: plain `hfvet scan` consults no store).")
    lineage: Lineage = Field(default_factory=Lineage, description="Mirror and base-model facts the store gave "
                             "(app.core.provenance.lineage); unchecked without a store.")
    signature: SignatureFact | None = Field(
        None, description="The vendor signature check; null when none ran (a requirement then is not met).")


# (the references a vet found) -> the store's judgement of each; handed to make_decide by the service.
ReferenceJudge = Callable[[Sequence[RepoReference]], Sequence[ReferenceFact]]
# (the vetted manifest, its findings, its files) -> what the store says of its lineage; handed in like the judge.
LineageJudge = Callable[[Manifest, Sequence[Finding], Sequence[FileReport]], Lineage]


def facts_from(manifest: Manifest, findings: Sequence[Finding], files: Sequence[FileReport],
               reference_status: Sequence[ReferenceFact] = (), lineage: Lineage | None = None,
               signature: SignatureCheck | None = None) -> PolicyFacts:
    identity = manifest.identity
    return PolicyFacts(
        repo=RepoFacts(id=identity.repo_id, revision=identity.revision, facts=dict(identity.facts)),
        files=[FileFact(path=f.path, size=f.size, format=f.format, scanned=f.scanned,
                        sha256=f.sha256, blob_id=f.blob_id) for f in files],
        findings=[FindingFact(path=f.path, rule=f.rule, severity=f.severity, scanner=f.scanner,
                              message=f.message, member=f.member, evidence=f.evidence, source=f.source)
                  for f in findings],
        reference_status=list(reference_status),
        lineage=lineage or Lineage(),
        signature=None if signature is None else SignatureFact.of(signature),
    )


def facts_from_report_dict(report: Mapping[str, Any], source: str = "<report>") -> PolicyFacts:
    """Facts of a stored report JSON (DESIGN §6.2), to replay it under another policy.

    Identity facts come from an optional `identity` key; reports without it replay with none.
    """
    if not isinstance(report, Mapping) or "files" not in report or "findings" not in report:
        raise PolicyError.single(source, None, "not a hfvet report: needs `files` and `findings`")
    try:
        return PolicyFacts.model_validate({
            "repo": {"id": report.get("repo"), "revision": report.get("revision"),
                     "facts": report.get("identity") or {}},
            "files": [_file_entry(f) for f in report["files"]],
            "findings": [_pick(f, FindingFact) for f in report["findings"]],
            "lineage": report.get("lineage") or {},  # as recorded at the vet: a replay sees what the vet saw
            "signature": _signature_entry(report.get("signature")),
        })
    except (ValidationError, TypeError, AttributeError) as exc:
        raise PolicyError.single(source, None, f"malformed report: {exc}") from exc


def _file_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    # `scanned` defaults to true for hand-written test cases; a stored report must say it.
    if not isinstance(entry, Mapping) or "scanned" not in entry:
        raise TypeError(f"a `files` entry without `scanned`: {str(entry)[:80]}")
    return _pick(entry, FileFact)


def _signature_entry(entry: Any) -> dict[str, Any] | None:
    if entry is None:
        return None
    picked = _pick(entry, SignatureFact)
    if isinstance(picked.get("signer"), Mapping):
        picked["signer"] = _pick(picked["signer"], SignerFact)
    return picked


def _pick(entry: Mapping[str, Any], model: type[_Model]) -> dict[str, Any]:
    # Reports may carry keys newer than this code; keep the ones the policy sees.
    return {k: v for k, v in entry.items() if k in model.model_fields}
