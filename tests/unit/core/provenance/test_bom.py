"""The CycloneDX 1.6 ML-BOM of a report: inventory, hashes, references, policy and verdict; schema-valid, stable."""

from __future__ import annotations

import hashlib
import json
import struct
import uuid
from datetime import UTC, datetime
from functools import cache
from typing import Any

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from app.core.manifest import Manifest, ManifestFile
from app.core.pipeline import vet
from app.core.policy import LoadedPolicy, make_decide
from app.core.provenance.bom import bom_json
from app.core.provenance.bom_context import BomContext, PolicyRule, stored_serial
from app.core.report import Report
from app.core.scanners import all_scanners
from app.render import RENDERERS
from tests.fakes import MemorySource
from tests.integration.api.stored import policy

VENDOR, QUANT = "nvidia/Tiny-NVFP4", "someone/Tiny-quant"
A, B = "a" * 40, "b" * 40
HUB = {"endpoint": "https://huggingface.co", "cardData": {"license": ["apache-2.0", "other"]}}
VALIDATOR = JsonStrictValidator(SchemaVersion.V1_6)


def safetensors() -> bytes:
    header = json.dumps({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
    return struct.pack("<Q", len(header)) + header + b"\0\0\0\0"


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # noqa: S324 (git's object id, not security)


def hub_source(repo: str, sha: str, files: dict[str, bytes], lfs: set[str]) -> MemorySource:
    """A source whose manifest carries what the hub gives: LFS files by sha256, the rest by git blob id only."""
    source = MemorySource(files, repo_id=repo, revision=sha, facts=HUB)
    manifest = source.manifest()
    source._manifest = Manifest(manifest.identity, tuple(  # the fake's manifest, as the hub gives it
        ManifestFile(f.path, f.size, sha256=hashlib.sha256(files[f.path]).hexdigest() if f.path in lfs else None,
                     blob_id=blob_id(files[f.path])) for f in manifest.files))
    return source


@cache
def default() -> LoadedPolicy:
    return policy("default")


@cache
def vendor_report() -> Report:
    files = {"model.safetensors": safetensors(), "config.json": b'{"model_type": "llama"}', "README.md": b"# Tiny\n"}
    return vet(hub_source(VENDOR, A, files, {"model.safetensors"}), all_scanners(), decide=make_decide(default()))


@cache
def quant_report() -> Report:
    config = {"model_type": "x", "auto_map": {"AutoModel": "other/code--modeling.Model"}}
    files = {"config.json": json.dumps(config).encode(), "README.md": b"a quant\n"}
    return vet(hub_source(QUANT, B, files, set()), all_scanners(), decide=make_decide(default()))


def context(report_id: int = 7, tier: str | None = "vendor-official") -> BomContext:
    rules = tuple(PolicyRule(r.id, r.description, r.when, r.decision) for r in default().model.rules)
    return BomContext(timestamp=datetime(2026, 5, 1, 12, 0, tzinfo=UTC), serial=stored_serial(VENDOR, A, report_id),
                      hfvet_version="9.9.9", report_id=report_id, tier=tier, rules=rules)


def valid(text: str) -> dict[str, Any]:
    """The document, once the 1.6 schema (strict: no unknown properties) accepts it."""
    error = VALIDATOR.validate_str(text)
    assert error is None, str(error)[:2000]
    document: dict[str, Any] = json.loads(text)
    return document


def split(doc: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The model (the component with files) and the other components (the repos it references)."""
    [model] = [c for c in doc["components"] if "components" in c]
    return model, [c for c in doc["components"] if c is not model]


def props(thing: dict[str, Any]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for p in thing.get("properties", []):
        found.setdefault(p["name"], []).append(p["value"])
    return found


def test_an_approved_vendor_repo_lists_the_model_and_every_file_with_its_hashes() -> None:
    doc = valid(bom_json(vendor_report(), context()))
    assert (doc["specVersion"], doc["serialNumber"]) == ("1.6", f"urn:uuid:{stored_serial(VENDOR, A, 7)}")
    assert doc["metadata"]["timestamp"] == "2026-05-01T12:00:00+00:00"
    tools = {t["name"]: t["version"] for t in doc["metadata"]["tools"]["components"]}
    assert tools["hfvet"] == "9.9.9" and set(vendor_report().scanners) <= set(tools)
    assert props(doc["metadata"]) == {"hfvet:verdict": ["approve"], "hfvet:policy": ["default"],
                                      "hfvet:policy_sha256": [default().sha256], "hfvet:report_id": ["7"],
                                      "hfvet:tier": ["vendor-official"]}
    model, others = split(doc)
    assert others == []
    assert (model["type"], model["group"], model["name"], model["version"]) == (
        "machine-learning-model", "nvidia", "Tiny-NVFP4", A)
    assert model["purl"] == model["bom-ref"] == f"pkg:huggingface/nvidia/Tiny-NVFP4@{A}"
    assert {r["type"]: r["url"] for r in model["externalReferences"]} == {
        "vcs": f"https://huggingface.co/{VENDOR}/tree/{A}", "website": f"https://huggingface.co/{VENDOR}"}
    assert [lic["license"] for lic in model["licenses"]] == [{"id": "Apache-2.0"}, {"name": "other"}]
    files = {f["name"]: f for f in model["components"]}
    assert set(files) == {"model.safetensors", "config.json", "README.md"} and {
        f["type"] for f in files.values()} == {"file"}
    weights = files["model.safetensors"]
    assert weights["hashes"] == [{"alg": "SHA-256", "content": hashlib.sha256(safetensors()).hexdigest()}]
    assert props(weights)["hfvet:format"] == ["safetensors"]
    assert props(weights)["hfvet:size"] == [str(len(safetensors()))]
    small = files["README.md"]
    assert "hashes" not in small and props(small)["hfvet:git_blob_id"] == [blob_id(b"# Tiny\n")]


def test_the_policy_is_a_standard_and_the_verdict_is_a_declaration_about_the_model() -> None:
    doc = valid(bom_json(vendor_report(), context()))
    [standard] = doc["definitions"]["standards"]
    assert (standard["name"], standard["version"]) == ("default", default().sha256)
    assert {r["identifier"] for r in standard["requirements"]} == {r.id for r in default().model.rules}
    declarations = doc["declarations"]
    claims = {c["bom-ref"]: c for c in declarations["claims"]}
    assert {c["target"] for c in claims.values()} == {split(doc)[0]["bom-ref"]}
    assert claims["hfvet:claim:verdict"]["predicate"].startswith("verdict approve under policy default")
    assert claims["hfvet:claim:executable-serialization"]["predicate"] == "no executable serialization"
    assert claims["hfvet:claim:publisher-tier"]["predicate"] == "publisher in tier vendor-official"
    assert claims["hfvet:claim:files-scanned"]["predicate"] == "3 of 3 files scanned"
    [attestation] = declarations["attestations"]
    assert attestation["assessor"] == declarations["assessors"][0]["bom-ref"]
    [mapped] = attestation["map"]
    requirements = {r["bom-ref"]: r["identifier"] for r in standard["requirements"]}
    assert requirements[mapped["requirement"]] == "vendor-official-clean" and mapped["conformance"]["score"] == 1
    assert set(mapped["claims"]) <= set(claims)
    assert "not signed" in declarations["affirmation"]["statement"]
    assert declarations["targets"]["components"][0] | {"version": A} == {
        "type": "machine-learning-model", "group": "nvidia", "name": "Tiny-NVFP4", "version": A}


def test_a_rejected_third_party_repo_names_the_repos_it_loads_and_the_reject() -> None:
    report = quant_report()
    assert report.verdict.value == "reject"
    doc = valid(bom_json(report, context(tier="third-party")))
    model, [code] = split(doc)
    assert code["purl"] == "pkg:huggingface/other/code" and code["type"] == "machine-learning-model"
    assert props(code)["hfvet:runs_code"] == ["true"]
    assert props(code)["hfvet:reference"] == ["config.json: auto_map remote code modeling.Model"]
    assert {d["ref"]: d.get("dependsOn", []) for d in doc["dependencies"]} == {
        model["bom-ref"]: [code["bom-ref"]], code["bom-ref"]: []}
    claims = {c["bom-ref"]: c for c in doc["declarations"]["claims"]}
    assert claims["hfvet:claim:verdict"]["predicate"].startswith("verdict reject")
    assert "other/code@default branch" in claims["hfvet:claim:references"]["reasoning"]
    scores = {m["requirement"].rpartition("#")[2]: m["conformance"]["score"]
              for m in doc["declarations"]["attestations"][0]["map"]}
    assert scores["third-party-unvetted-code-reference"] == 0 and scores["third-party"] == 0.5
    assert props(doc["metadata"])["hfvet:verdict"] == ["reject"]


def test_a_file_known_only_by_its_git_blob_id_has_no_hash_claimed() -> None:
    """A git blob id is SHA-1 over a header and the bytes: no CycloneDX `SHA-1`, which tools check on the file."""
    doc = valid(bom_json(quant_report(), context()))
    for file in split(doc)[0]["components"]:
        assert "hashes" not in file and len(props(file)["hfvet:git_blob_id"][0]) == 40


def test_the_same_report_and_context_give_the_same_bytes() -> None:
    first, again = bom_json(vendor_report(), context()), bom_json(vendor_report(), context())
    assert first == again
    assert bom_json(vendor_report(), context(report_id=8)) != first  # another stored report, another serial


def test_without_the_deciding_policy_the_standard_lists_the_rules_the_reasons_name() -> None:
    bare = BomContext(timestamp=datetime(2026, 5, 1, tzinfo=UTC), serial=uuid.uuid4(), hfvet_version="1")
    doc = valid(bom_json(quant_report(), bare))
    named = {r.rule for r in quant_report().decision.reasons}
    assert {r["identifier"] for r in doc["definitions"]["standards"][0]["requirements"]} == named
    assert "hfvet:claim:publisher-tier" not in {c["bom-ref"] for c in doc["declarations"]["claims"]}
    assert "hfvet:report_id" not in props(doc["metadata"])


@pytest.mark.parametrize("repo", [None, "someone/local"])
def test_a_local_scan_renders_as_cyclonedx_with_a_fresh_serial(repo: str | None) -> None:
    report = vet(MemorySource({"README.md": b"hi"}, repo_id=repo), all_scanners())
    first, second = (valid(RENDERERS["cyclonedx"].render(report)) for _ in range(2))
    assert first["serialNumber"] != second["serialNumber"]
    model = split(first)[0]
    assert "externalReferences" not in model  # not read from a hub: no hub link claimed
    assert model["name"] == ("local-snapshot" if repo is None else "local")
    assert first["declarations"]["claims"][0]["predicate"].startswith(f"verdict {report.verdict.value}")


def test_the_publisher_signature_and_the_lineage_are_claims_when_the_vet_looked() -> None:
    from dataclasses import replace

    from app.core.lineage_facts import BaseFact, Lineage, MirrorFact
    from app.core.signature import SignatureCheck, Signer

    mirror = MirrorFact(repo="nvidia/Tiny", sha=A, identical=2, total=3, added=["extra.py"])
    lineage = Lineage(checked=True, mirror=mirror, base=BaseFact(claimed="nvidia/Tiny", status="shares-nothing"))
    signature = SignatureCheck(state="verified", signer=Signer("key", "sha256:ab", "key sha256:ab"), signed_files=3)
    report = vendor_report()
    report = replace(report, signature=signature, decision=replace(report.decision, lineage=lineage))
    claims = {c["bom-ref"]: c for c in valid(bom_json(report, context()))["declarations"]["claims"]}
    assert claims["hfvet:claim:publisher-signature"]["predicate"] == "publisher signature (model.sig): verified"
    assert "all 3 files match before download" in claims["hfvet:claim:publisher-signature"]["reasoning"]
    lines = [c["predicate"] for ref, c in claims.items() if ref.startswith("hfvet:claim:lineage-")]
    assert lines[0].startswith("a mirror of nvidia/Tiny") and "2 of 3 files identical" in lines[0]
    assert any("shares nothing" in line for line in lines)
    plain = {c["bom-ref"] for c in valid(bom_json(vendor_report(), context()))["declarations"]["claims"]}
    assert not {ref for ref in plain if ref.startswith(("hfvet:claim:lineage", "hfvet:claim:publisher-signature"))}
