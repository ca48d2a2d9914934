"""check_signature on hostile and odd input: a clear problem, never an exception, never `verified`."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from app.core import report_json
from app.core.provenance.oms import attribute_signature, check_signature
from app.core.report import Report
from app.core.signature import MAX_SIGNATURE_BYTES, DeclaredIdentity
from tests.signing_support import build_repo, key_pair, sign_with_key


def _identity(pem: str) -> DeclaredIdentity:
    return DeclaredIdentity("key", "key sha256:test", pem=pem)


@pytest.mark.parametrize(("data", "problem"), [
    (b"", "not JSON"),
    (b"\xff\xfe", "not JSON"),
    (b"[1, 2]", "not a JSON object"),
    (b"[" * 100_000, "not JSON"),
    (json.dumps({"verificationMaterial": "x"}).encode(), "verificationMaterial is missing or not an object"),
    (json.dumps({"verificationMaterial": {"publicKey": {}}, "dsseEnvelope": {"payloadType": "text/plain"}}).encode(),
     "DSSE payload type"),
    (json.dumps({"verificationMaterial": {"publicKey": {}}, "dsseEnvelope": {
        "payloadType": "application/vnd.in-toto+json", "payload": "%%%"}}).encode(), "not base64"),
    (json.dumps({"verificationMaterial": {"x509CertificateChain": {"certificates": [{"rawBytes": "AAAA"}]}}}).encode(),
     "certificate does not parse"),
    (b" " * (MAX_SIGNATURE_BYTES + 1), "over"),
])
def test_garbage_is_an_invalid_signature_with_a_reason(data: bytes, problem: str) -> None:
    check = check_signature(data, "model.sig", {}, lambda _p: "", [_identity("x")])
    assert check.state == "invalid" and problem in (check.problem or ""), check.problem


def test_a_key_that_does_not_load_fails_verification_not_the_vet(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "repo")
    sign_with_key(repo, key_pair(tmp_path, "k"))
    check = check_signature((repo / "model.sig").read_bytes(), "model.sig", {}, lambda _p: "", [_identity("junk")])
    assert check.state == "invalid" and "not signed by an identity the policy lists" in (check.problem or "")


def test_a_bundle_without_a_key_hint_is_refused_before_model_signing_prints(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    repo = build_repo(tmp_path / "repo")
    key = key_pair(tmp_path, "k")
    sign_with_key(repo, key)
    bundle = json.loads((repo / "model.sig").read_text())
    del bundle["verificationMaterial"]["publicKey"]["hint"]
    check = check_signature(json.dumps(bundle).encode(), "model.sig", {}, lambda _p: "", [_identity(key.public_pem)])
    assert check.state == "invalid" and "no key hint" in (check.problem or "")
    assert capsys.readouterr().out == ""  # nothing on stdout, where `--format json` goes


def test_unreadable_or_too_big_non_lfs_files_are_not_verified(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "repo")
    key = key_pair(tmp_path, "k")
    sign_with_key(repo, key)
    from app.core.policy.schema_signatures import SignedBy

    identity = SignedBy(key=key.public_pem).declared()
    files = {"config.json": (None, 40), "README.md": (None, 17 * 1024 * 1024), "model.safetensors": ("0" * 64, 1)}

    def unreadable(_path: str) -> str:
        raise OSError("gone")

    check = check_signature((repo / "model.sig").read_bytes(), "model.sig", files, unreadable, [identity])
    assert check.state == "invalid"
    assert check.mismatched == ("model.safetensors",)
    assert "not checked before download" in (check.problem or "")


def test_a_report_without_a_signature_still_loads() -> None:
    doc = {"repo": "a/b", "revision": None, "verdict": "review", "reasons": [], "policy": {"name": "p"},
           "findings": [], "files": [], "stats": {"files": 0, "repo_bytes": 0, "bytes_read": 0, "seconds": 0}}
    report: Report = report_json.load(doc)
    assert report.signature is None and "signature" not in report_json.dump(report)


def test_a_statement_changed_after_signing_does_not_verify(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "repo")
    key = key_pair(tmp_path, "k")
    sign_with_key(repo, key)
    bundle = json.loads((repo / "model.sig").read_text())
    statement = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
    statement["predicate"]["resources"][0]["digest"] = "0" * 64  # tampered after signing
    bundle["dsseEnvelope"]["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    from app.core.policy.schema_signatures import SignedBy

    check = check_signature(json.dumps(bundle).encode(), "model.sig", {}, lambda _p: "",
                            [SignedBy(key=key.public_pem).declared()])
    assert check.state == "invalid" and "not signed by an identity" in (check.problem or "")


def test_the_text_report_says_what_the_signature_check_found() -> None:
    from dataclasses import replace

    from rich.console import Console

    from app.core.signature import SignatureCheck, Signer
    from app.render.text import TextRenderer

    doc = {"repo": "a/b", "revision": None, "verdict": "reject", "reasons": [], "policy": {"name": "p"},
           "findings": [], "files": [], "stats": {"files": 0, "repo_bytes": 0, "bytes_read": 0, "seconds": 0}}
    check = SignatureCheck(state="invalid", signer=Signer("key", "sha256:abc"), problem="1 file(s) differ")
    text = TextRenderer(lambda: Console(width=200)).render(replace(report_json.load(doc), signature=check))
    assert "signature: invalid: model.sig names key sha256:abc; 1 file(s) differ" in text
    plain = TextRenderer(lambda: Console(width=200)).render(report_json.load(doc))
    assert "signature:" not in plain


GARBAGE = [b"", b"[" * 100_000, json.dumps({"verificationMaterial": {"publicKey": {}}}).encode(),
           b" " * (MAX_SIGNATURE_BYTES + 1)]


@pytest.mark.parametrize("data", GARBAGE)
def test_attributing_garbage_is_the_same_invalid_check_never_an_exception(data: bytes) -> None:
    attributed = attribute_signature(data, "model.sig", {}, lambda _p: "", [_identity("x")])
    assert attributed == check_signature(data, "model.sig", {}, lambda _p: "", ())
    assert attributed.state == "invalid"


def test_an_attributed_signature_with_files_not_as_signed_stays_unverified(tmp_path: Path) -> None:
    from app.core.policy.schema_signatures import SignedBy

    repo, key = build_repo(tmp_path / "repo"), key_pair(tmp_path, "k")
    sign_with_key(repo, key)
    identity = SignedBy(key=key.public_pem).declared()
    files = {"config.json": (None, 40), "README.md": (None, 17), "model.safetensors": ("0" * 64, 1), "x.py": (None, 3)}
    data = (repo / "model.sig").read_bytes()
    covered = check_signature(data, "model.sig", files, lambda p: "0" * 64, [identity])
    attributed = attribute_signature(data, "model.sig", files, lambda p: "0" * 64, [_identity("other"), identity])
    assert covered.state == "invalid"  # where an entry covers the repo, this fails
    assert attributed.state == "unverified" and attributed.signer is not None
    assert attributed.signer.matched == identity.label and attributed.unsigned == ("x.py",)
    assert attributed.mismatched == ("README.md", "config.json", "model.safetensors")


def test_a_bundle_without_a_key_hint_is_not_attributed_nor_made_invalid(tmp_path: Path) -> None:
    repo, key = build_repo(tmp_path / "repo"), key_pair(tmp_path, "k")
    sign_with_key(repo, key)
    bundle = json.loads((repo / "model.sig").read_text())
    del bundle["verificationMaterial"]["publicKey"]["hint"]
    attributed = attribute_signature(json.dumps(bundle).encode(), "model.sig", {}, lambda _p: "",
                                     [_identity(key.public_pem)])
    assert attributed.state == "unverified" and attributed.signer is not None and attributed.signer.matched is None


def test_a_model_signing_0x_signature_is_unverified_not_invalid(tmp_path: Path) -> None:
    """A real vendor's pre-1.0 signature is not a forgery: not checked (a requirement still rejects it, as
    `unverified`), and not a `signature-invalid` review of a benign repo no requirement covers."""
    repo = build_repo(tmp_path / "repo")
    key = key_pair(tmp_path, "k")
    sign_with_key(repo, key)
    bundle = json.loads((repo / "model.sig").read_text())
    statement = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
    statement["predicateType"] = "https://model_signing/Digests/v0.1"
    bundle["dsseEnvelope"]["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    data = json.dumps(bundle).encode()
    for identities in ([], [_identity(key.public_pem)]):
        check = check_signature(data, "model.sig", {}, lambda _p: "", identities)
        assert check.state == "unverified" and "model-signing 0.x" in (check.problem or "")
        assert check.signer is not None and check.signer.matched is None
    assert attribute_signature(data, "model.sig", {}, lambda _p: "", [_identity(key.public_pem)]).state == "unverified"
    statement["predicateType"] = "https://example.com/other/v9"  # anything else still does not check out
    bundle["dsseEnvelope"]["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    assert check_signature(json.dumps(bundle).encode(), "model.sig", {}, lambda _p: "", []).state == "invalid"
