"""in-toto Statements about stored verdicts and reviews. Pure, and byte-stable: the same stored report
(and the same key) always gives the same statement bytes (``canonical``).

A verdict's statement is a SLSA Verification Summary Attestation v1: its subjects are every file of the
vetted commit, its ``resourceUri`` names the repo at that commit, and hfvet's own detail (the verdict,
the rules that decided it, the scanners that ran, the files scanned and skipped, what a pass checked)
sits in the predicate's ``hfvet`` field, which the VSA's parsers ignore (in-toto: unknown fields are
ignored). A review's statement has hfvet's review predicate and names the verdict statement it reviewed
by digest. A review that hfvet carried to a re-vet of the same commit (app.core.review_carry) is stated
again for the re-vet's verdict statement, saying so (``carriedFrom``, ``carriedBy``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from app.core.manifest_json import recorded_hashes

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
VSA_TYPE = "https://slsa.dev/verification_summary/v1"
REVIEW_TYPE = "urn:hfvet:review/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
VERIFIER_ID = "urn:hfvet:verifier"
PASSED_LEVEL = "HFVET_APPROVED"  # a VSA level of hfvet's own (the spec reserves the SLSA_ prefix)

# What an `approve` means, said in every verdict statement (a pass must say what was checked).
CHECKED = ("every file listed as a subject was read by content (magic bytes, never extensions) by the "
           "scanners named in verifier.version, within hfvet's limits; files in hfvet.files.skipped "
           "could not be scanned whole; the findings, the repo's identity and the manifest were judged by "
           "every rule of the policy whose sha256 is policy.digest. It says nothing about what the "
           "weights compute, nor about files outside the subjects.")


@dataclass(frozen=True)
class KeyValidity:
    """The signing key as its statements carry it: its id and the day it stops being valid (00:00 UTC)."""

    key_id: str
    expires: date | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.key_id, "expires": None if self.expires is None else self.expires.isoformat()}


@dataclass(frozen=True)
class ReviewFacts:
    """A stored review as its statement tells it."""

    decision: str  # approve | reject
    reason: str
    reviewer: str
    role: str
    at: datetime
    verdict_seen: str | None  # the policy verdict the reviewer saw
    policy_sha256: str | None


@dataclass(frozen=True)
class Carried:
    """Where a carried review came from: the human review, and its own statement's sha256 (None: never signed)."""

    review_id: int
    statement_sha256: str | None


def canonical(statement: Mapping[str, Any]) -> bytes:
    """The statement's bytes as signed: sorted keys, no spaces, UTF-8."""
    return json.dumps(statement, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def digest_of(payload: bytes) -> str:
    return hashlib.sha256(payload).hexdigest()


def resource_uri(repo: str, sha: str) -> str:
    return f"hf://{repo}@{sha}"


def timestamp(moment: datetime) -> str:
    """RFC 3339 in UTC to the second."""
    if moment.tzinfo is None:  # the store's times are aware (db.base.UTCDateTime): a naive one is a bug
        raise ValueError(f"a naive time cannot be stated in UTC: {moment.isoformat()}")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def subject_digest(file: Mapping[str, Any]) -> dict[str, str]:
    """A file's digest set: its sha256 when known, else its git blob id (in-toto's ``gitBlob``)."""
    sha256, blob_id = recorded_hashes(file)
    if sha256:
        return {"sha256": str(sha256).lower()}
    if blob_id:
        return {"gitBlob": str(blob_id).lower()}
    return {}


def subjects(files: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One subject per file, by repo path, in path order."""
    found = [{"name": str(f.get("path")), "digest": subject_digest(f)} for f in files]
    return sorted(found, key=lambda s: s["name"])


def verdict_statement(document: Mapping[str, Any], *, decided_at: datetime, hfvet_version: str,
                      key: KeyValidity) -> dict[str, Any]:
    """The VSA of one stored report (its §6.2 ``document``, recorded at ``decided_at``)."""
    repo, sha = str(document.get("repo")), str(document.get("revision"))
    verdict = str(document.get("verdict"))
    policy = document.get("policy") or {}
    scanners = {str(k): str(v) for k, v in sorted((document.get("scanners") or {}).items())}
    files = list(document.get("files") or [])
    passed = verdict == "approve"
    predicate = {
        "verifier": {"id": VERIFIER_ID, "version": {"hfvet": hfvet_version, **scanners}},
        "timeVerified": timestamp(decided_at),
        "resourceUri": resource_uri(repo, sha),
        "policy": {"uri": f"urn:hfvet:policy:{policy.get('name')}",
                   "digest": {"sha256": str(policy.get("sha256") or "")}},
        "verificationResult": "PASSED" if passed else "FAILED",
        "verifiedLevels": [PASSED_LEVEL] if passed else ["FAILED"],
        "hfvet": _detail(document, verdict, scanners, files, key),
    }
    return {"_type": STATEMENT_TYPE, "subject": subjects(files), "predicateType": VSA_TYPE, "predicate": predicate}


def _detail(document: Mapping[str, Any], verdict: str, scanners: dict[str, str], files: list[Any],
            key: KeyValidity) -> dict[str, Any]:
    reasons = [r for r in document.get("reasons") or [] if isinstance(r, dict)]
    findings = [f for f in document.get("findings") or [] if isinstance(f, dict)]
    skipped = sorted(str(f.get("path")) for f in files if not f.get("scanned"))
    return {
        "verdict": verdict,
        "reasons": sorted({str(r.get("rule")) for r in reasons}),
        "findingRules": sorted({str(f.get("rule")) for f in findings}),
        "scanners": sorted(scanners),
        "policyName": str((document.get("policy") or {}).get("name")),
        "files": {"total": len(files), "scanned": len(files) - len(skipped), "skipped": skipped},
        "checked": CHECKED,
        "key": key.to_dict(),
        **_provenance(document),
    }


def _provenance(document: Mapping[str, Any]) -> dict[str, Any]:
    """The publisher's signature and the lineage as the vet recorded them, when it looked: who signed is part
    of what the verdict was about."""
    found: dict[str, Any] = {}
    signature, lineage = document.get("signature"), document.get("lineage")
    if isinstance(signature, dict):
        found["signature"] = {k: signature.get(k) for k in ("file", "state", "signer")}
    if isinstance(lineage, dict) and lineage.get("checked"):
        mirror, base = lineage.get("mirror"), lineage.get("base") or {}
        found["lineage"] = {
            "mirrorOf": f"{mirror.get('repo')}@{mirror.get('sha')}" if isinstance(mirror, dict) else None,
            "base": {"claimed": base.get("claimed"), "status": base.get("status"), "sha": base.get("sha")},
        }
    return found


def review_statement(repo: str, sha: str, files: Iterable[Mapping[str, Any]], review: ReviewFacts, *,
                     verdict_statement_sha256: str | None, key: KeyValidity,
                     carried: Carried | None = None) -> dict[str, Any]:
    """A human review of a stored verdict, naming that verdict's statement by its sha256 (None: the
    verdict was never attested). ``carried``: the review was given on an earlier report of the commit and
    hfvet applied it to this one by the carry rule (docs/gate.md)."""
    predicate = {
        "resourceUri": resource_uri(repo, sha),
        "decision": review.decision,
        "reason": review.reason,
        "reviewer": review.reviewer,
        "role": review.role,
        "timeReviewed": timestamp(review.at),
        "verdictSeen": review.verdict_seen,
        "policy": {"digest": {"sha256": review.policy_sha256 or ""}},
        "verdictStatement": (None if verdict_statement_sha256 is None
                             else {"digest": {"sha256": verdict_statement_sha256}}),
        "key": key.to_dict(),
    }
    if carried is not None:
        original = carried.statement_sha256
        predicate["carriedFrom"] = {"review": carried.review_id,
                                    "statement": None if original is None else {"digest": {"sha256": original}}}
        predicate["carriedBy"] = "hfvet"
    return {"_type": STATEMENT_TYPE, "subject": subjects(files), "predicateType": REVIEW_TYPE, "predicate": predicate}


def check_shape(statement: Mapping[str, Any]) -> None:
    """ValueError unless in-toto-attestation accepts it as a Statement v1 and, for a VSA, the predicate has
    the VSA v1 fields as the spec types them (the library's VSA proto types ``verifiedLevels`` as one
    string, the spec as a list, so the predicate is checked here, not by that proto)."""
    from in_toto_attestation.v1.resource_descriptor import ResourceDescriptor
    from in_toto_attestation.v1.statement import Statement

    subject, predicate = statement.get("subject"), statement.get("predicate")
    if not isinstance(subject, list) or not isinstance(predicate, dict):
        raise ValueError("subject must be a list and predicate an object")
    try:
        described = [ResourceDescriptor(name=s.get("name", ""), digest=s.get("digest")).pb for s in subject]
        built = Statement(described, str(statement.get("predicateType") or ""), predicate)
    except (AttributeError, TypeError, ValueError) as exc:  # protobuf refuses a value of the wrong type
        raise ValueError(f"{type(exc).__name__}: {str(exc)[:160]}") from exc
    built.pb.type = statement.get("_type")
    built.validate()
    if statement.get("predicateType") == VSA_TYPE:
        _check_vsa(statement.get("predicate") or {})


def _check_vsa(predicate: Mapping[str, Any]) -> None:
    verifier, levels = predicate.get("verifier"), predicate.get("verifiedLevels")
    if not isinstance(verifier, dict) or not isinstance(verifier.get("id"), str):
        raise ValueError("the VSA has no verifier.id")
    if predicate.get("verificationResult") not in ("PASSED", "FAILED"):
        raise ValueError("the VSA's verificationResult is not PASSED or FAILED")
    if not isinstance(levels, list) or not all(isinstance(level, str) for level in levels):
        raise ValueError("the VSA's verifiedLevels is not a list of strings")
    for field in ("timeVerified", "resourceUri"):
        if not isinstance(predicate.get(field), str):
            raise ValueError(f"the VSA has no {field}")
