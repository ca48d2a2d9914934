"""Verdict attestations, pure: the statement's layout and byte-stability, and every way verification refuses."""

from __future__ import annotations

import base64
import json
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from app.core.provenance.envelope import AttestationRefused, SigningKey, load_public, sign
from app.core.provenance.statement import (
    REVIEW_TYPE,
    VSA_TYPE,
    Carried,
    ReviewFacts,
    canonical,
    digest_of,
    review_statement,
    verdict_statement,
)
from app.core.provenance.verify import Expect, verify

SHA = "a" * 40
DECIDED = datetime(2026, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)


def document(verdict: str = "approve", n: int = 3) -> dict[str, Any]:
    files = [{"path": f"model-{i}.safetensors", "size": 10, "sha256": f"{i:064x}", "blob_id": None,
              "format": "safetensors", "scanned": True} for i in range(n)]
    files.append({"path": "config.json", "size": 2, "sha256": None, "blob_id": "b" * 40, "format": "json",
                  "scanned": False})
    return {"repo": "org/name", "revision": SHA, "verdict": verdict,
            "reasons": [] if verdict == "approve" else [{"rule": "third-party-code", "decision": verdict,
                                                          "message": "m"}],
            "policy": {"name": "default", "sha256": "c" * 64}, "findings": [{"rule": "pickle-import", "path": "x"}],
            "files": files, "scanners": {"picklescan": "1.0.5", "hfvet-pickle": "1"}}


def digests(doc: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {f["path"]: ({"sha256": f["sha256"]} if f["sha256"] else {"gitBlob": f["blob_id"]}) for f in doc["files"]}


@pytest.fixture(scope="module")
def key() -> SigningKey:
    return SigningKey(Ed25519PrivateKey.generate(), date(2030, 1, 1))


def signed(key: SigningKey, doc: dict[str, Any] | None = None, when: datetime = DECIDED) -> str:
    return sign(verdict_statement(doc or document(), decided_at=when, hfvet_version="0.1.0", key=key.validity), key)


def refused(text: str | bytes, key: SigningKey, expect: Expect | None = None) -> AttestationRefused:
    with pytest.raises(AttestationRefused) as caught:
        verify(text, load_public(key.public_pem()), expect or Expect())
    return caught.value


def resigned(envelope: str, key: SigningKey, change: Any) -> str:
    """The envelope's statement changed by ``change`` and signed again by ``key`` (a signer that lies)."""
    statement = json.loads(base64.b64decode(json.loads(envelope)["payload"]))
    change(statement)
    return sign(statement, key)


def test_the_statement_is_a_vsa_over_every_file_and_says_what_a_pass_checked(key: SigningKey) -> None:
    statement = verdict_statement(document(), decided_at=DECIDED, hfvet_version="0.1.0", key=key.validity)
    assert statement["_type"] == "https://in-toto.io/Statement/v1" and statement["predicateType"] == VSA_TYPE
    assert statement["subject"][0] == {"name": "config.json", "digest": {"gitBlob": "b" * 40}}
    assert statement["subject"][1] == {"name": "model-0.safetensors", "digest": {"sha256": "0" * 64}}
    predicate = statement["predicate"]
    assert predicate["resourceUri"] == f"hf://org/name@{SHA}"
    assert predicate["timeVerified"] == "2026-05-01T12:00:00Z"
    assert predicate["policy"]["digest"] == {"sha256": "c" * 64}
    assert predicate["verificationResult"] == "PASSED" and predicate["verifiedLevels"] == ["HFVET_APPROVED"]
    assert predicate["verifier"]["version"] == {"hfvet": "0.1.0", "hfvet-pickle": "1", "picklescan": "1.0.5"}
    detail = predicate["hfvet"]
    assert detail["files"] == {"total": 4, "scanned": 3, "skipped": ["config.json"]}
    assert detail["findingRules"] == ["pickle-import"] and "every rule of the policy" in detail["checked"]
    assert detail["key"] == {"id": key.key_id, "expires": "2030-01-01"}


@pytest.mark.parametrize("verdict", ["review", "reject"])
def test_a_verdict_other_than_approve_is_failed(key: SigningKey, verdict: str) -> None:
    predicate = verdict_statement(document(verdict), decided_at=DECIDED, hfvet_version="0.1.0",
                                  key=key.validity)["predicate"]
    assert predicate["verificationResult"] == "FAILED" and predicate["verifiedLevels"] == ["FAILED"]
    assert predicate["hfvet"]["verdict"] == verdict and predicate["hfvet"]["reasons"] == ["third-party-code"]


def test_the_same_stored_report_gives_the_same_statement_bytes(key: SigningKey) -> None:
    one = canonical(verdict_statement(document(), decided_at=DECIDED, hfvet_version="0.1.0", key=key.validity))
    reordered = document()
    reordered["files"].reverse()
    elsewhere = DECIDED.astimezone(timezone(timedelta(hours=2)))  # the same instant, read in another zone
    two = canonical(verdict_statement(reordered, decided_at=elsewhere, hfvet_version="0.1.0", key=key.validity))
    assert one == two
    with pytest.raises(ValueError, match="naive time"):  # the store's times are aware: a naive one is a bug
        verdict_statement(document(), decided_at=DECIDED.replace(tzinfo=None), hfvet_version="0.1.0",
                          key=key.validity)


def test_round_trip(key: SigningKey) -> None:
    doc = document()
    found = verify(signed(key, doc), load_public(key.public_pem()),
                   Expect(repo="org/name", revision=SHA, files=digests(doc), require_approve=True))
    assert (found.kind, found.verdict, found.repo, found.revision) == ("verdict", "approve", "org/name", SHA)
    assert found.key_id == key.key_id and "4 files" in found.summary()


def test_a_changed_payload_is_a_bad_signature(key: SigningKey) -> None:
    envelope = json.loads(signed(key))
    statement = json.loads(base64.b64decode(envelope["payload"]))
    statement["predicate"]["hfvet"]["verdict"] = "approve "
    envelope["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    assert refused(json.dumps(envelope), key).reason == "bad-signature"


def test_another_key_is_unknown(key: SigningKey) -> None:
    other = SigningKey(Ed25519PrivateKey.generate())
    problem = refused(signed(other), key)
    assert problem.reason == "unknown-key" and other.key_id[:16] in str(problem)


@pytest.mark.parametrize("cut", [10, 100, -5])
def test_a_truncated_envelope_is_garbled(key: SigningKey, cut: int) -> None:
    assert refused(signed(key)[:cut], key).reason == "garbled"


def test_a_wrong_payload_type_is_refused(key: SigningKey) -> None:
    envelope = json.loads(signed(key))
    envelope["payloadType"] = "application/json"
    assert refused(json.dumps(envelope), key).reason == "payload-type"


def test_a_wrong_statement_or_predicate_type_is_refused(key: SigningKey) -> None:
    text = signed(key)
    assert refused(resigned(text, key, lambda s: s.update(_type="https://in-toto.io/Statement/v0.1")),
                   key).reason == "statement-type"
    assert refused(resigned(text, key, lambda s: s.update(predicateType="https://slsa.dev/provenance/v1")),
                   key).reason == "predicate-type"


def test_a_swapped_subject_digest_is_refused(key: SigningKey) -> None:
    doc = document()
    files = digests(doc) | {"model-1.safetensors": {"sha256": "f" * 64}}
    problem = refused(signed(key, doc), key, Expect(files=files))
    assert problem.reason == "subjects" and "model-1.safetensors" in str(problem)


def test_a_file_missing_or_added_is_refused(key: SigningKey) -> None:
    doc = document()
    fewer = {k: v for k, v in digests(doc).items() if k != "config.json"}
    assert "attested but not present: config.json" in str(refused(signed(key, doc), key, Expect(files=fewer)))
    more = digests(doc) | {"evil.py": {"sha256": "e" * 64}}
    assert "present but not attested: evil.py" in str(refused(signed(key, doc), key, Expect(files=more)))


def test_a_signature_over_another_revision_is_refused(key: SigningKey) -> None:
    problem = refused(signed(key), key, Expect(revision="b" * 40))
    assert problem.reason == "revision" and SHA in str(problem)
    assert refused(signed(key), key, Expect(repo="org/other")).reason == "repo"


def test_not_approve_is_refused_when_approval_is_required(key: SigningKey) -> None:
    text = signed(key, document("review"))
    assert verify(text, load_public(key.public_pem())).verdict == "review"  # valid, as a statement
    problem = refused(text, key, Expect(require_approve=True))
    assert problem.reason == "not-approved" and "'review'" in str(problem)


def test_a_statement_signed_after_the_key_expired_is_refused(key: SigningKey) -> None:
    expired = SigningKey(key.private, date(2026, 5, 1))  # the day it was decided: already over
    assert refused(signed(expired), expired).reason == "key-expired"
    problem = refused(signed(key), key, Expect(key_expires=date(2026, 4, 30)))  # the verifier's own knowledge
    assert problem.reason == "key-expired" and "2026-04-30" in str(problem)
    assert verify(signed(key), load_public(key.public_pem()), Expect(key_expires=date(2026, 5, 2))).verdict == "approve"


def test_a_verdict_that_disagrees_with_its_result_is_garbled(key: SigningKey) -> None:
    text = resigned(signed(key), key, lambda s: s["predicate"].update(verificationResult="FAILED"))
    assert refused(text, key).reason == "garbled"


def test_a_review_statement_names_the_verdict_it_reviewed(key: SigningKey) -> None:
    verdict_text = signed(key, document("review"))
    payload = base64.b64decode(json.loads(verdict_text)["payload"])
    facts = ReviewFacts("approve", "read the code", "token:alice", "reviewer", DECIDED, "review", "c" * 64)
    statement = review_statement("org/name", SHA, document()["files"], facts,
                                 verdict_statement_sha256=digest_of(payload), key=key.validity)
    found = verify(sign(statement, key), load_public(key.public_pem()), Expect(require_approve=True))
    assert (found.kind, found.verdict) == ("review", "approve") and statement["predicateType"] == REVIEW_TYPE
    predicate = found.statement["predicate"]
    assert predicate["reviewer"] == "token:alice" and predicate["reason"] == "read the code"
    assert predicate["verdictStatement"] == {"digest": {"sha256": digest_of(payload)}}



def test_a_carried_review_says_hfvet_carried_it_and_from_which_review(key: SigningKey) -> None:
    facts = ReviewFacts("approve", "read the code", "token:alice", "reviewer", DECIDED, "review", "c" * 64)
    own = review_statement("org/name", SHA, document()["files"], facts, verdict_statement_sha256="d" * 64,
                           key=key.validity)
    carried = review_statement("org/name", SHA, document()["files"], facts, verdict_statement_sha256="e" * 64,
                               key=key.validity, carried=Carried(7, "f" * 64))
    assert "carriedFrom" not in own["predicate"] and "carriedBy" not in own["predicate"]
    predicate = carried["predicate"]
    assert predicate["carriedFrom"] == {"review": 7, "statement": {"digest": {"sha256": "f" * 64}}}
    assert predicate["carriedBy"] == "hfvet" and predicate["verdictStatement"] == {"digest": {"sha256": "e" * 64}}
    assert {k: v for k, v in predicate.items() if k not in ("carriedFrom", "carriedBy", "verdictStatement")} == {
        k: v for k, v in own["predicate"].items() if k != "verdictStatement"}  # the same human decision
    unsigned = review_statement("org/name", SHA, [], facts, verdict_statement_sha256=None, key=key.validity,
                                carried=Carried(7, None))
    assert unsigned["predicate"]["carriedFrom"] == {"review": 7, "statement": None}
    found = verify(sign(carried, key), load_public(key.public_pem()), Expect(require_approve=True))
    assert found.verdict == "approve"

def _with(envelope: str, **fields: Any) -> str:
    data = json.loads(envelope)
    data.update(fields)
    return json.dumps({k: v for k, v in data.items() if v is not None})


def test_a_malformed_envelope_says_why_without_python_exception_names(key: SigningKey) -> None:
    envelope = signed(key)
    first = json.loads(envelope)["signatures"][0]
    cases = [
        (json.dumps({"payloadType": "x", "signatures": []}), "not a DSSE envelope: no payload"),
        (_with(envelope, signatures="abc"), "signatures must be a list of {keyid, sig} strings"),
        (_with(envelope, signatures=[first, first]), "two signatures name the same key id"),
        (_with(envelope, payload="%%%"), "not base64"),
        (json.dumps({"error": {"code": "commit-not-vetted", "message": "org/name@abc has never been vetted"}}),
         "an hfvet error answer (commit-not-vetted): org/name@abc has never been vetted"),
    ]
    for text, message in cases:
        refusal = refused(text, key)
        assert refusal.reason == "garbled" and message in str(refusal), (text, str(refusal))
        assert not any(name in str(refusal) for name in ("KeyError", "TypeError", "ValueError", "Error:"))


def test_the_summary_says_verified_at_the_statement_s_time_not_signed_at(key: SigningKey) -> None:
    summary = verify(signed(key), load_public(key.public_pem())).summary()
    assert summary.endswith(f"signed by key {key.key_id[:16]}, verified at 2026-05-01T12:00:00Z")


def test_a_verdict_statement_names_the_signer_and_the_lineage_the_vet_recorded(key: SigningKey) -> None:
    doc = document()
    signer = {"kind": "key", "identity": "sha256:ab", "matched": "key sha256:ab"}
    doc["signature"] = {"file": "model.sig", "state": "verified", "signer": signer, "problem": None}
    doc["lineage"] = {"checked": True, "mirror": {"repo": "nvidia/X", "sha": SHA},
                      "base": {"claimed": "nvidia/X", "status": "verified", "sha": SHA}}
    detail = verdict_statement(doc, decided_at=DECIDED, hfvet_version="0.1.0", key=key.validity)["predicate"]["hfvet"]
    assert detail["signature"] == {"file": "model.sig", "state": "verified", "signer": doc["signature"]["signer"]}
    assert detail["lineage"] == {"mirrorOf": f"nvidia/X@{SHA}",
                                 "base": {"claimed": "nvidia/X", "status": "verified", "sha": SHA}}
    bare = verdict_statement(document(), decided_at=DECIDED, hfvet_version="0.1.0", key=key.validity)
    assert "signature" not in bare["predicate"]["hfvet"] and "lineage" not in bare["predicate"]["hfvet"]
