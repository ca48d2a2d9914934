"""What the signature check says, in words a newcomer can act on (issue 29)."""

from __future__ import annotations

from pathlib import Path

import yaml

from app.core.policy import PolicyFacts, evaluate
from app.core.policy.schema_signatures import SignedBy
from app.core.provenance.oms import check_signature
from app.core.provenance.signature_findings import signature_findings
from app.core.signature import SignatureCheck, Signer, listed_by_hub
from app.core.signature_step import unlisted_check
from app.sources.local import LocalSource
from tests.signing_support import build_repo, key_pair, sign_with_key
from tests.unit.core.policy.helpers import MINIMAL, REV, policy


def test_a_signature_no_entry_covers_names_the_repo_it_is_not_covered_for(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "repo")
    sign_with_key(repo, key_pair(tmp_path, "k"))
    for repo_id, named in (("acme/model", "covers acme/model"), (None, "covers a scan without --repo")):
        source = LocalSource(repo, repo_id=repo_id)
        check = unlisted_check(source, source.manifest())
        assert check.state == "unverified"
        assert check.problem == (f"no `signatures` entry of the policy {named}: not verified; "
                                 "the signer is only as the file claims")


def test_another_sig_file_is_named_when_the_required_one_is_absent(tmp_path: Path) -> None:
    doc = yaml.safe_load(MINIMAL)
    doc["signatures"] = [{"orgs": ["nvidia"], "signed_by": [{"key": key_pair(tmp_path, "k").public_pem}]}]
    loaded = policy(tmp_path, yaml.safe_dump(doc))
    facts = PolicyFacts.model_validate({
        "repo": {"id": "nvidia/model", "revision": REV},
        "files": [{"path": "release.sig", "size": 1}, {"path": "model.safetensors", "size": 1}],
        "signature": {"file": "model.sig", "state": "absent"}})
    reason = next(r for r in evaluate(loaded, facts).reasons if r.rule == "signature-required")
    assert reason.message.endswith("the repo has no model.sig: it is not signed "
                                   "(found release.sig: a `signatures` entry's `file:` names another file)")


def test_a_key_mismatch_is_one_short_line_naming_the_key_once(tmp_path: Path) -> None:
    repo = build_repo(tmp_path / "repo")
    sign_with_key(repo, key_pair(tmp_path, "signer"))
    listed = SignedBy(key=key_pair(tmp_path, "other").public_pem).declared()
    check = check_signature((repo / "model.sig").read_bytes(), "model.sig", {}, lambda _p: "", [listed])
    assert check.state == "invalid" and check.signer is not None
    named = check.signer.identity
    assert check.problem == f"not signed by an identity the policy lists: the signature names key {named}"
    summary = check.summary()
    assert "ValueError" not in summary and "Key mismatch" not in summary
    assert summary.count(check.signer.identity) == 1


def test_an_unreadable_signer_says_why() -> None:
    check = check_signature(b"[1, 2]", "model.sig", {}, lambda _p: "", [])
    assert check.summary() == f"invalid: model.sig: the signer cannot be read ({check.problem})"
    assert "unreadable signer" not in check.summary()


def test_a_local_snapshot_matches_its_files_not_before_download(tmp_path: Path) -> None:
    source = LocalSource(build_repo(tmp_path / "repo"))
    assert not listed_by_hub(source.manifest().files)
    verified = SignatureCheck(state="verified", signer=Signer("key", "sha256:ab", "key sha256:ab"), signed_files=3)
    assert verified.summary(before_download=False).endswith("all 3 files match")
    assert verified.summary().endswith("all 3 files match before download")
    local = signature_findings(verified, before_download=False)[0].message
    assert "the files of this snapshot" in local and "Hub" not in local
