"""Vendor signatures (OMS) checked through the fixture hub before download: verdicts, and bytes read per file.

Every key, certificate and signature is made here, in tmp dirs, with model-signing's own signers.
"""

from __future__ import annotations

import base64
import json
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core import report_json
from app.core.report import Report
from app.core.signature_step import check_source
from app.examples.safetensors_writer import TensorSpec, write_safetensors
from app.hubfixture import AppServer, create_app
from app.services.vetting import vet_remote
from app.settings import Settings
from app.sources.hub import HubClient, HubSource
from tests.signing_support import (
    WEIGHT_BYTES,
    WEIGHTS,
    CertificateAuthority,
    KeyPair,
    build_repo,
    certificate_authority,
    key_pair,
    sign_with_certificate,
    sign_with_key,
)

ROOT = Path(__file__).parents[3]
VENDOR = "release@vendor.example"


class BytesPerFile:
    """The fixture hub's app, counting the file bytes it sends per path (`/resolve/` bodies)."""

    def __init__(self, inner: ASGIApp) -> None:
        self.inner = inner
        self.sent: Counter[str] = Counter()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""

        async def counting(message: Message) -> None:
            if "/resolve/" in path and message["type"] == "http.response.body":
                self.sent[path.rsplit("/", 1)[-1]] += len(message.get("body", b""))
            await send(message)

        await self.inner(scope, receive, counting)

    def take(self) -> Counter[str]:
        sent, self.sent = self.sent, Counter()
        return sent


@dataclass(frozen=True)
class World:
    url: str
    hub: BytesPerFile
    vendor_key: KeyPair
    vendor_ca: CertificateAuthority
    requiring: Path  # default.yaml + a signatures entry for vendor-official repos (the key and the CA)
    tmp: Path

    def vet(self, repo: str, policy: Path | str = "") -> Report:
        settings = Settings(HF_ENDPOINT=self.url)
        return vet_remote(repo, settings=settings, policy_path=Path(policy) if policy else self.requiring)


def _repos(root: Path, tmp: Path, vendor: KeyPair, ca: CertificateAuthority) -> None:
    sign_with_key(build_repo(root / "nvidia/Signed"), vendor)
    sign_with_key(build_repo(root / "nvidia/Resigned"), key_pair(tmp, "someone-else"))
    changed = build_repo(root / "nvidia/Changed")
    sign_with_key(changed, vendor)
    write_safetensors(changed / WEIGHTS, [TensorSpec("w", "U8", (WEIGHT_BYTES + 8,))], sparse=True)
    extra = build_repo(root / "nvidia/Extra")
    sign_with_key(extra, vendor)
    (extra / "extra.py").write_text("print('added after signing')\n")
    missing = build_repo(root / "nvidia/Missing")
    sign_with_key(missing, vendor)
    (missing / "README.md").unlink()
    build_repo(root / "nvidia/Unsigned")
    sign_with_certificate(build_repo(root / "nvidia/Certified"), ca, VENDOR)
    sign_with_certificate(build_repo(root / "nvidia/Other-CA"), certificate_authority(tmp, "other"), VENDOR)
    garbled = build_repo(root / "nvidia/Garbled")
    sign_with_key(garbled, vendor)
    (garbled / "model.sig").write_bytes((garbled / "model.sig").read_bytes()[:300])
    shards = build_repo(root / "nvidia/Shards")
    _sign_shards(shards, vendor)
    mirror = shutil.copytree(root / "nvidia/Signed", root / "quantmirror/Signed-Fast")  # the vendor's signed files
    (mirror / "fast_kernels.py").write_text("def fast(x):\n    return x\n")  # plus its own, unsigned
    shutil.copytree(root / "nvidia/Resigned", root / "quantmirror/Resigned")


def _sign_shards(repo: Path, key: KeyPair) -> None:
    import model_signing

    (model_signing.signing.Config().use_elliptic_key_signer(private_key=key.private)
     .set_hashing_config(model_signing.hashing.Config().use_shard_serialization())
     .sign(repo, repo / "model.sig"))


def _requiring_policy(path: Path, key: KeyPair, ca: CertificateAuthority) -> Path:
    policy = yaml.safe_load((ROOT / "policies/default.yaml").read_text())
    policy["signatures"] = [{"tier": "vendor-official", "signed_by": [
        {"key": key.public_pem}, {"certificate": {"chain": ca.chain_pem, "subject": VENDOR}}]}]
    path.write_text(yaml.safe_dump(policy))
    return path


def _nvidia_only_policy(path: Path, key: KeyPair, rule: str = "") -> Path:
    """default.yaml + a signatures entry for nvidia's repos only (optionally a rule reading the signature)."""
    policy = yaml.safe_load((ROOT / "policies/default.yaml").read_text())
    policy["signatures"] = [{"orgs": ["nvidia"], "signed_by": [{"key": key.public_pem}]}]
    if rule:
        policy["rules"].append({"id": "vendor-files-plus-code", "description": "a vendor's signed files plus added "
                                "files, in a third-party repo", "when": rule, "decision": "review"})
    path.write_text(yaml.safe_dump(policy))
    return path


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("signatures")
    vendor, ca = key_pair(tmp, "vendor"), certificate_authority(tmp, "vendor")
    _repos(tmp / "hub", tmp, vendor, ca)
    counting = BytesPerFile(create_app(tmp / "hub"))
    with AppServer(counting) as served:
        yield World(served.url, counting, vendor, ca, _requiring_policy(tmp / "signed.yaml", vendor, ca), tmp)


def _reasons(report: Report) -> dict[str, str]:
    return {r.rule: r.message for r in report.decision.reasons}


def test_a_vendor_signed_repo_is_approved_and_its_signer_recorded(world: World) -> None:
    report = world.vet("nvidia/Signed")
    assert report.verdict.value == "approve", _reasons(report)
    doc = report_json.dump(report)["signature"]
    assert doc["state"] == "verified" and doc["signed_files"] == 3
    assert doc["signer"]["kind"] == "key" and doc["signer"]["matched"].startswith("key sha256:")
    assert any(f.rule == "signature-verified" for f in report.findings)
    assert report_json.load(report_json.dump(report)).signature == report.signature  # stored and read back


def test_the_signature_check_reads_no_weight_byte(world: World) -> None:
    from app.core.policy import load_policy
    from app.core.policy.signatures import requirement_for

    requirement = requirement_for(load_policy(world.requiring).model, "nvidia", "vendor-official")
    assert requirement is not None
    source = HubSource.open("nvidia/Signed", "main", hub=HubClient.from_settings(Settings(HF_ENDPOINT=world.url)))
    manifest = source.manifest()
    world.hub.take()
    check = check_source(source, manifest, "model.sig", requirement.identities())
    sent = world.hub.take()
    assert check.verified, check.problem
    assert sent[WEIGHTS] == 0 and set(sent) == {"model.sig", "config.json", "README.md"}
    assert check.bytes_read == sum(sent.values())


def test_the_weights_cost_the_same_with_and_without_a_signature_requirement(world: World) -> None:
    world.hub.take()
    world.vet("nvidia/Signed")
    required = world.hub.take()
    world.vet("nvidia/Signed", "default")
    plain = world.hub.take()
    assert 0 < required[WEIGHTS] == plain[WEIGHTS] < 64 * 1024  # the safetensors header only, both times


def test_a_repo_re_signed_by_another_key_is_rejected_naming_the_signer(world: World) -> None:
    report = world.vet("nvidia/Resigned")
    assert report.verdict.value == "reject"
    reason = _reasons(report)["signature-required"]
    assert "not signed by an identity the policy lists" in reason and "the signature names key sha256:" in reason


@pytest.mark.parametrize(("repo", "state", "named"), [
    ("nvidia/Changed", "differ from what was signed", WEIGHTS),
    ("nvidia/Extra", "not covered by the signature", "extra.py"),
    ("nvidia/Missing", "signed file(s) not in this commit", "README.md"),
])
def test_files_not_as_signed_are_rejected_by_name(world: World, repo: str, state: str, named: str) -> None:
    report = world.vet(repo)
    assert report.verdict.value == "reject"
    assert state in _reasons(report)["signature-required"] and named in _reasons(report)["signature-required"]
    assert any(f.rule == "signature-mismatch" and f.path == named for f in report.findings)


def test_an_unsigned_vendor_repo_is_rejected_where_signatures_are_required(world: World) -> None:
    report = world.vet("nvidia/Unsigned")
    assert report.verdict.value == "reject"
    assert "has no model.sig" in _reasons(report)["signature-required"]
    assert report.signature is not None and report.signature.state == "absent"


def test_a_certificate_from_the_listed_ca_is_approved_and_another_ca_rejected(world: World) -> None:
    certified = world.vet("nvidia/Certified")
    assert certified.verdict.value == "approve", _reasons(certified)
    assert certified.signature is not None and certified.signature.signer is not None
    assert certified.signature.signer.identity == VENDOR
    other = world.vet("nvidia/Other-CA")
    assert other.verdict.value == "reject"
    assert "certificate release@vendor.example" in _reasons(other)["signature-required"]


@pytest.mark.parametrize(("repo", "problem"), [
    ("nvidia/Garbled", "not a model-signing signature"),
    ("nvidia/Shards", "cannot be verified before download"),
])
def test_a_garbled_or_sharded_signature_fails_closed(world: World, repo: str, problem: str) -> None:
    report = world.vet(repo)
    assert report.verdict.value == "reject"
    assert problem in _reasons(report)["signature-required"]


def test_without_a_requirement_a_signature_is_a_fact_and_a_bad_one_means_review(world: World) -> None:
    other_key = world.vet("nvidia/Resigned", "default")  # nobody listed to verify against: recorded, unverified
    assert other_key.verdict.value == "approve" and other_key.signature is not None
    assert other_key.signature.state == "unverified" and other_key.signature.signer is not None
    garbled = world.vet("nvidia/Garbled", "default")
    assert garbled.verdict.value == "review"
    assert "signature-invalid" in _reasons(garbled)


def test_a_stored_report_re_decides_with_its_recorded_signature(world: World) -> None:
    from app.core.policy import evaluate, facts_from_report_dict, load_policy

    policy = load_policy(world.requiring)
    for repo, verdict in (("nvidia/Signed", "approve"), ("nvidia/Resigned", "reject")):
        doc: dict[str, Any] = json.loads(report_json.dumps(world.vet(repo)))
        assert evaluate(policy, facts_from_report_dict(doc)).verdict.value == verdict
        doc.pop("signature")  # a report from before signatures were checked: the requirement is not met
        assert evaluate(policy, facts_from_report_dict(doc)).verdict.value == "reject"


def test_a_wrong_predicate_type_is_a_clear_problem(world: World) -> None:
    from app.core.provenance.oms import check_signature

    bundle = json.loads((world.tmp / "hub/nvidia/Signed/model.sig").read_text())
    statement = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
    statement["predicateType"] = "https://example.com/not-a-model-signature"
    bundle["dsseEnvelope"]["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    check = check_signature(json.dumps(bundle).encode(), "model.sig", {}, lambda _p: "", ())
    assert check.state == "invalid" and "is not model-signing's" in (check.problem or "")


def test_a_mirror_of_a_vendors_signed_files_says_whose_key_signed_and_what_is_unsigned(world: World) -> None:
    from app.core.policy.schema_signatures import key_fingerprint

    nvidia_only = _nvidia_only_policy(world.tmp / "nvidia-only.yaml", world.vendor_key)
    world.hub.take()
    report = world.vet("quantmirror/Signed-Fast", nvidia_only)
    attributed = world.hub.take()
    check = report.signature
    assert check is not None and check.signer is not None
    vendor_key = f"key sha256:{key_fingerprint(world.vendor_key.public_pem)}"
    assert check.state == "unverified" and check.signer.matched == vendor_key
    assert check.unsigned == ("fast_kernels.py",) and check.mismatched == check.missing == ()
    assert "signed by the key the policy lists for orgs [nvidia]" in (check.problem or "")
    assert "unsigned: fast_kernels.py" in check.summary()
    doc = report_json.dump(report)["signature"]
    assert doc["signer"]["matched"] == check.signer.matched and doc["unsigned"] == ["fast_kernels.py"]
    plain = world.vet("quantmirror/Signed-Fast", "default")  # no signatures entry at all: as before
    assert plain.signature is not None and plain.signature.signer is not None and plain.signature.signer.matched is None
    assert report.verdict == plain.verdict and not {"signature-required", "signature-invalid"} & set(_reasons(report))
    assert attributed[WEIGHTS] == world.hub.take()[WEIGHTS] < 64 * 1024  # trying the policy's keys reads no weight


def test_a_rule_can_catch_a_vendors_signed_files_plus_added_code(world: World) -> None:
    rule = 'signature.signer.matched != null && size(signature.unsigned) > 0 && repo.tier == "third-party"'
    policy = _nvidia_only_policy(world.tmp / "rule.yaml", world.vendor_key, rule)
    assert "vendor-files-plus-code" in _reasons(world.vet("quantmirror/Signed-Fast", policy))
    assert "vendor-files-plus-code" not in _reasons(world.vet("quantmirror/Resigned", policy))


def test_a_mirror_signed_by_a_key_the_policy_does_not_list_stays_as_claimed(world: World) -> None:
    report = world.vet("quantmirror/Resigned", _nvidia_only_policy(world.tmp / "nvidia-only.yaml", world.vendor_key))
    check = report.signature
    assert check is not None and check.signer is not None and check.signer.matched is None
    assert check.state == "unverified" and "the signer is only as the file claims" in (check.problem or "")
    assert "signature-invalid" not in _reasons(report)
