"""The policy's `signatures` section: validation, hashing, the engine's requirement, and the CEL facts."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from app.core.policy import PolicyFacts, evaluate, load_policy
from app.core.policy.errors import PolicyError
from app.core.policy.facts import SignatureFact, SignerFact
from tests.signing_support import certificate_authority, key_pair
from tests.unit.core.policy.helpers import MINIMAL, REV, policy, write

VENDOR = {"repo": {"id": "nvidia/model", "revision": REV}}


def _with(tmp_path: Path, signatures: list[dict[str, object]], extra_rule: str = "") -> str:
    doc = yaml.safe_load(MINIMAL)
    doc["signatures"] = signatures
    if extra_rule:
        doc["rules"].append(yaml.safe_load(extra_rule))
    return yaml.safe_dump(doc)


def _facts(signature: SignatureFact | None) -> PolicyFacts:
    return PolicyFacts.model_validate({**VENDOR, "signature": None if signature is None else signature.model_dump()})


def test_a_key_and_a_certificate_requirement_validate_and_change_the_hash(tmp_path: Path) -> None:
    key, ca = key_pair(tmp_path, "k"), certificate_authority(tmp_path, "ca")
    plain = policy(tmp_path)
    signed = policy(tmp_path, _with(tmp_path, [{"tier": "vendor-official", "signed_by": [
        {"key": key.public_pem}, {"certificate": {"chain": ca.chain_pem, "subject": "a@b.example"}}]}]))
    empty = policy(tmp_path, _with(tmp_path, []))
    assert signed.sha256 != plain.sha256 and empty.sha256 == plain.sha256  # an empty section keeps the old hash
    labels = signed.model.signatures[0].labels()
    assert any(label.startswith("key sha256:") for label in labels)
    assert any(label.startswith("certificate under CA sha256:") and label.endswith("for a@b.example")
               for label in labels)


@pytest.mark.parametrize(("entry", "error"), [
    ({"tier": "vendor-official", "signed_by": [{"key": "-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----"}]},
     "`key` is not a PEM public key"),
    ({"tier": "vendor-official", "signed_by": [{"certificate": {"chain": "not pem"}}]}, "`chain` is not PEM"),
    ({"tier": "vendor-official", "signed_by": []}, "signed_by"),
    ({"signed_by": [{"sigstore": {"identity": "a@b", "issuer": "https://x"}}]}, "exactly one of `tier` or `orgs`"),
    ({"orgs": ["nvidia"], "file": "../model.sig", "signed_by": [{"sigstore": {"identity": "a", "issuer": "b"}}]},
     "repo-relative path"),
])
def test_a_bad_entry_is_a_clear_error(tmp_path: Path, entry: dict[str, object], error: str) -> None:
    with pytest.raises(PolicyError, match="signatures") as raised:
        load_policy(write(tmp_path, _with(tmp_path, [entry])))
    assert error in str(raised.value)


def test_an_rsa_key_is_refused_as_unsupported(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    pem = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    with pytest.raises(PolicyError, match="must be an EC public key"):
        load_policy(write(tmp_path, _with(tmp_path, [{"tier": "vendor-official", "signed_by": [{"key": pem}]}])))


def test_the_requirement_rejects_unless_verified_by_a_listed_identity(tmp_path: Path) -> None:
    key = key_pair(tmp_path, "k")
    loaded = policy(tmp_path, _with(tmp_path, [{"orgs": ["nvidia"], "signed_by": [{"key": key.public_pem}]}]))
    label = next(iter(loaded.model.signatures[0].labels()))
    ok = SignatureFact(state="verified", signer=SignerFact(kind="key", identity="sha256:x", matched=label),
                       method="files")
    assert evaluate(loaded, _facts(ok)).verdict.value == "approve"
    for bad in (None, SignatureFact(), ok.model_copy(update={"signer": SignerFact(kind="key", identity="x",
                                                                                   matched="key sha256:other")}),
                SignatureFact(state="invalid", problem="2 file(s) differ"), SignatureFact(file="other.sig",
                                                                                            state="verified")):
        decision = evaluate(loaded, _facts(bad))
        assert decision.verdict.value == "reject", bad
        assert [r.rule for r in decision.reasons if r.decision.value == "reject"] == ["signature-required"]


def test_elsewhere_an_invalid_signature_is_review_and_a_verified_one_approves_nothing(tmp_path: Path) -> None:
    loaded = policy(tmp_path)
    assert evaluate(loaded, _facts(SignatureFact(state="invalid", problem="x"))).verdict.value == "review"
    third_party = PolicyFacts.model_validate({"repo": {"id": "someone/model"},
                                              "signature": {"state": "verified", "method": "files"}})
    assert evaluate(loaded, third_party).verdict.value == "review"  # the default, not an approval


def test_rules_read_the_signature_facts_and_misspelt_fields_are_refused(tmp_path: Path) -> None:
    rule = ("{id: unsigned-vendor, description: vendor uploads must be signed, "
            "when: 'repo.tier == \"vendor-official\" && !signature.present', decision: reject}")
    loaded = policy(tmp_path, _with(tmp_path, [], rule))
    assert evaluate(loaded, _facts(SignatureFact())).verdict.value == "reject"
    assert evaluate(loaded, _facts(SignatureFact(state="unverified"))).verdict.value == "approve"
    typo = rule.replace("signature.present", "signature.presnet")
    with pytest.raises(PolicyError, match="presnet"):
        policy(tmp_path, _with(tmp_path, [], typo))
