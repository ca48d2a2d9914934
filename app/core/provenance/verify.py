"""Whether a verdict or review attestation holds for what a verifier asks about. Pure, offline.

The order of the checks is the order of the refusals a verifier sees: the envelope and its signature
first (nothing inside an unsigned payload is trusted), then the statement's types, the key's validity,
the repo and commit, the subjects against the files given, and last whether it approves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from app.core.provenance.envelope import AttestationRefused, open_envelope
from app.core.provenance.statement import REVIEW_TYPE, STATEMENT_TYPE, VSA_TYPE, check_shape, digest_of

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

Digests = Mapping[str, Mapping[str, str]]  # repo path -> digest set ({"sha256": hex} or {"gitBlob": hex})


@dataclass(frozen=True)
class Expect:
    """What the verifier asks of the attestation; None: not checked."""

    repo: str | None = None
    revision: str | None = None  # the 40-hex commit
    files: Digests | None = None  # every subject, and nothing else, with these digests
    require_approve: bool = False
    key_expires: date | None = None  # the verifier's own knowledge of the key's end (beside the statement's)
    kinds: tuple[str, ...] = (VSA_TYPE, REVIEW_TYPE)


@dataclass(frozen=True)
class Verified:
    statement: dict[str, Any]
    payload_sha256: str  # what a review statement names the verdict statement by
    key_id: str
    repo: str
    revision: str
    kind: str  # verdict | review
    verdict: str  # the verdict (a verdict statement) or the decision (a review)
    time: str  # timeVerified / timeReviewed

    def summary(self) -> str:
        what = f"verdict {self.verdict}" if self.kind == "verdict" else f"review: {self.verdict}"
        when = "verified" if self.kind == "verdict" else "reviewed"  # the statement's time, not the signing's
        return (f"valid: {what} for hf://{self.repo}@{self.revision} ({len(self.statement['subject'])} files), "
                f"signed by key {self.key_id[:16]}, {when} at {self.time}")


def verify(text: str | bytes, public: Ed25519PublicKey, expect: Expect = Expect()) -> Verified:
    """The attestation's statement when it holds for ``expect``; AttestationRefused with the reason otherwise."""
    from app.core.provenance.envelope import key_id

    payload, statement = open_envelope(text, public)
    kind = _kind(statement, expect)
    predicate = statement["predicate"]
    repo, revision = _resource(predicate)
    found = Verified(statement, digest_of(payload), key_id(public), repo, revision, kind,
                     *_verdict_and_time(kind, predicate))
    _check_key(predicate, found.time, expect.key_expires)
    _check_resource(found, expect)
    if expect.files is not None:
        check_subjects(statement["subject"], expect.files)
    if expect.require_approve and found.verdict != "approve":
        what = "verdict" if kind == "verdict" else "review decision"
        raise AttestationRefused("not-approved", f"the attested {what} for {repo}@{revision[:12]} is "
                                                 f"{found.verdict!r}, not approve")
    return found


def _kind(statement: dict[str, Any], expect: Expect) -> str:
    if statement.get("_type") != STATEMENT_TYPE:
        raise AttestationRefused("statement-type", f"_type is {str(statement.get('_type'))[:80]!r}, "
                                                   f"not {STATEMENT_TYPE!r}")
    predicate_type = statement.get("predicateType")
    if predicate_type not in expect.kinds:
        raise AttestationRefused("predicate-type", f"predicateType {str(predicate_type)[:80]!r} is not "
                                                   f"{' or '.join(expect.kinds)}")
    try:
        check_shape(statement)
    except ValueError as exc:
        raise AttestationRefused("garbled", f"not a well-formed in-toto statement: {str(exc)[:160]}") from None
    if not isinstance(statement.get("predicate"), dict):
        raise AttestationRefused("garbled", "the statement has no predicate object")
    return "verdict" if predicate_type == VSA_TYPE else "review"


def _resource(predicate: dict[str, Any]) -> tuple[str, str]:
    uri = str(predicate.get("resourceUri") or "")
    repo, _, revision = uri.removeprefix("hf://").rpartition("@")
    if not uri.startswith("hf://") or not repo or len(revision) != 40:
        raise AttestationRefused("garbled", f"resourceUri {uri[:120]!r} is not hf://ORG/NAME@<40-hex commit>")
    return repo, revision


def _verdict_and_time(kind: str, predicate: dict[str, Any]) -> tuple[str, str]:
    if kind == "verdict":
        detail = predicate.get("hfvet")
        verdict = str(detail.get("verdict") or "") if isinstance(detail, dict) else ""
        if (verdict == "approve") != (predicate.get("verificationResult") == "PASSED"):
            raise AttestationRefused("garbled", f"hfvet.verdict {verdict!r} disagrees with verificationResult "
                                                f"{str(predicate.get('verificationResult'))[:20]!r}")
        return verdict, str(predicate.get("timeVerified") or "")
    return str(predicate.get("decision") or ""), str(predicate.get("timeReviewed") or "")


def _check_key(predicate: dict[str, Any], when: str, key_expires: date | None) -> None:
    """Refused when signed at or after the key's end: the statement's own, or the one the verifier gives."""
    try:
        signed = datetime.strptime(when, "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        raise AttestationRefused("garbled", f"the statement's time {when[:40]!r} is not RFC 3339 UTC") from None
    detail = predicate.get("hfvet")
    key = predicate.get("key") if "key" in predicate else (detail.get("key") if isinstance(detail, dict) else None)
    stated = (key or {}).get("expires") if isinstance(key, dict) else None
    ends = [d for d in (_date(stated), key_expires) if d is not None]
    for end in ends:
        if signed.date() >= end:
            raise AttestationRefused("key-expired", f"signed at {when}, on or after the key's expiry {end.isoformat()}")


def _date(value: object) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise AttestationRefused("garbled", f"the key's expiry {str(value)[:40]!r} is not a date") from None


def _check_resource(found: Verified, expect: Expect) -> None:
    if expect.repo is not None and found.repo != expect.repo:
        raise AttestationRefused("repo", f"the attestation is about {found.repo}, not {expect.repo}")
    if expect.revision is not None and found.revision != expect.revision.lower():
        raise AttestationRefused("revision", f"the attestation is about commit {found.revision}, "
                                             f"not {expect.revision}")


def check_subjects(subject: list[Any], files: Digests) -> None:
    """Every subject is one of ``files`` with the same digest, and every file is a subject."""
    attested: dict[str, Mapping[str, str]] = {}
    for item in subject:
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(name, str) or name in attested:
            raise AttestationRefused("garbled", f"a subject without a name, or listed twice: {str(name)[:120]!r}")
        attested[name] = item.get("digest") or {}
    missing = sorted(set(attested) - set(files))
    extra = sorted(set(files) - set(attested))
    if missing or extra:
        raise AttestationRefused("subjects", "the attested files differ from the files given: "
                                             + _listed("attested but not present", missing)
                                             + _listed("present but not attested", extra))
    for name in sorted(attested):
        if not _same(attested[name], files[name]):
            raise AttestationRefused("subjects", f"{name}: digest {_shown(files[name])} does not match the "
                                                 f"attested {_shown(attested[name])}")


def _same(attested: Mapping[str, str], given: Mapping[str, str]) -> bool:
    """Equal on every algorithm both name, and they name at least one."""
    shared = set(attested) & set(given)
    return bool(shared) and all(str(attested[k]).lower() == str(given[k]).lower() for k in shared)


def _listed(what: str, names: list[str]) -> str:
    if not names:
        return ""
    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
    return f"[{what}: {', '.join(names[:5])}{more}] "


def _shown(digest: Mapping[str, str]) -> str:
    return ", ".join(f"{k}:{str(v)[:16]}" for k, v in sorted(digest.items())) or "(none)"
