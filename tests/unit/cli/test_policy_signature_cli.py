"""`hfvet policy explain`/`test` with vendor signatures (issue 29)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from app.cli.policy import policy_app
from tests.signing_support import key_pair
from tests.unit.cli.test_policy_cli import report, run
from tests.unit.core.policy.helpers import MINIMAL, write

_ = policy_app  # the app `run` invokes


def _signed_policy(tmp_path: Path) -> Path:
    doc = yaml.safe_load(MINIMAL)
    doc["signatures"] = [{"orgs": ["nvidia"], "signed_by": [{"key": key_pair(tmp_path, "k").public_pem}]}]
    return write(tmp_path, yaml.safe_dump(doc))


def test_explain_names_the_signature_requirement_that_decided_and_the_state(tmp_path: Path) -> None:
    stored = tmp_path / "unsigned.json"
    safetensors = [{"path": "model.safetensors", "format": "safetensors"}]
    stored.write_text(json.dumps(report("nvidia/a", [], safetensors) | {"signature": {
        "file": "model.sig", "state": "absent", "present": False, "verified": False}}))
    result = run("explain", stored, "--policy", _signed_policy(tmp_path))
    assert result.exit_code == 0, result.output
    assert "signature-required: repos of nvidia must ship model.sig" in result.output
    assert "signature: model.sig absent" in result.output
    assert "verdict: reject" in result.output


def _case(tmp_path: Path, signature: dict[str, object]) -> Path:
    policy = _signed_policy(tmp_path)
    case = {"description": "a report's signature pasted as it stands", "policy": policy.name,
            "input": {"repo": {"id": "nvidia/a"}, "signature": signature},
            "expect": {"verdict": "reject", "rules": ["signature-required", "vendor-clean"]}}
    path = tmp_path / "case.yaml"
    path.write_text(yaml.safe_dump(case))
    return path


def test_a_reports_signature_object_pastes_into_a_test_case(tmp_path: Path) -> None:
    from app.core.signature import SignatureCheck, Signer, to_json

    pasted = to_json(SignatureCheck(state="invalid", signer=Signer("key", "sha256:ab"), problem="not signed",
                                    bytes_read=10))
    result = run("test", _case(tmp_path, json.loads(json.dumps(pasted))))
    assert result.exit_code == 0, result.output
    assert "1 passed, 0 failed" in result.output


def test_a_pasted_signature_whose_verified_contradicts_its_state_is_a_case_error(tmp_path: Path) -> None:
    result = run("test", _case(tmp_path, {"file": "model.sig", "state": "invalid", "verified": True}))
    assert result.exit_code == 1
    assert "`verified: true` contradicts `state: invalid`" in result.output


def test_check_warns_about_a_signatures_org_that_looks_like_a_vendor(tmp_path: Path) -> None:
    doc = yaml.safe_load(MINIMAL)
    doc["signatures"] = [{"orgs": ["nvidai"], "signed_by": [{"key": key_pair(tmp_path, "k").public_pem}]}]
    result = run("check", write(tmp_path, yaml.safe_dump(doc)))
    assert result.exit_code == 0, result.output  # a warning, not an error
    assert "signatures[0] lists org 'nvidai', a lookalike of nvidia" in result.output
    assert "warning" not in run("check", _signed_policy(tmp_path)).output  # `nvidia` itself is no lookalike


def test_explain_says_whose_identity_signed_a_signature_no_entry_covers_not_that_it_verified(tmp_path: Path) -> None:
    stored = tmp_path / "mirror.json"
    safetensors = [{"path": "model.safetensors", "format": "safetensors"}]
    signer = {"kind": "key", "identity": "sha256:ab", "matched": "key sha256:ab"}
    stored.write_text(json.dumps(report("quantmirror/a", [], safetensors) | {"signature": {
        "file": "model.sig", "state": "unverified", "signer": signer, "unsigned": ["fast_kernels.py"]}}))
    result = run("explain", stored, "--policy", _signed_policy(tmp_path))
    assert result.exit_code == 0, result.output
    assert "(signed by the policy's key sha256:ab)" in result.output and "verified by" not in result.output
