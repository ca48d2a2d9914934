"""The ML-BOM's inventory: the model at its commit, every file of it, and the repos it makes a loader fetch.

Each file is a `file` component nested in the model: CycloneDX 1.6's `data` type is for datasets and
configuration described by their contents and governance (`componentData`), while a weight shard or a
tokenizer here is identified by its bytes, which is what `file` plus `hashes` says. A git blob id is
SHA-1 over ``blob <size>\\0`` and the bytes, not over the bytes, so it is not a CycloneDX `SHA-1` hash (a
tool checking it against the file would fail): it is the property `hfvet:git_blob_id`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cyclonedx.model import ExternalReference, ExternalReferenceType, HashAlgorithm, HashType, Property, XsUri
from cyclonedx.model.component import Component, ComponentType
from cyclonedx.model.license import DisjunctiveLicense
from cyclonedx.spdx import fixup_id
from packageurl import PackageURL

from app.core.repo_refs import RepoReference
from app.core.report import FileReport, Report

LOCAL_NAME = "local-snapshot"  # the model's name for a scan given no --repo


def model_ref(report: Report) -> str:
    """The model component's bom-ref: its purl, or a fixed name for an anonymous local scan."""
    purl = _purl(report.repo, report.revision)
    return LOCAL_NAME if purl is None else purl.to_string()


def model_component(report: Report) -> Component:
    group, name = _split(report.repo)
    ref = model_ref(report)
    return Component(
        type=ComponentType.MACHINE_LEARNING_MODEL, bom_ref=ref, group=group, name=name, version=report.revision,
        purl=_purl(report.repo, report.revision), licenses=_licenses(report.identity),
        external_references=_hub_links(report), components=[_file(ref, f) for f in report.files],
    )


def reference_components(report: Report) -> list[Component]:
    """One component per referenced (repo, revision), with how and where the report found it."""
    own = model_ref(report)
    grouped: dict[str, list[RepoReference]] = {}
    for ref in report.references:
        purl = _purl(ref.repo, ref.revision)
        if purl is not None and purl.to_string() != own:
            grouped.setdefault(purl.to_string(), []).append(ref)
    return [_reference(key, refs) for key, refs in grouped.items()]


def _reference(key: str, refs: list[RepoReference]) -> Component:
    first = refs[0]
    group, name = _split(first.repo)
    properties = [Property(name="hfvet:reference", value=f"{r.path}: {r.via}") for r in refs]
    properties.append(Property(name="hfvet:runs_code", value=str(any(r.code for r in refs)).lower()))
    if first.revision is not None:
        properties.append(Property(name="hfvet:revision", value=first.revision))
    return Component(type=ComponentType.MACHINE_LEARNING_MODEL, bom_ref=key, group=group, name=name,
                     version=first.revision, purl=_purl(first.repo, first.revision), properties=properties)


def _file(parent: str, f: FileReport) -> Component:
    hashes = [HashType(alg=HashAlgorithm.SHA_256, content=f.sha256)] if f.sha256 else []
    properties = [Property(name="hfvet:size", value=str(f.size)), Property(name="hfvet:format", value=f.format),
                  Property(name="hfvet:scanned", value=str(f.scanned).lower())]
    if f.blob_id:
        properties.append(Property(name="hfvet:git_blob_id", value=f.blob_id))
    return Component(type=ComponentType.FILE, bom_ref=f"{parent}#{f.path}", name=f.path, hashes=hashes,
                     properties=properties)


def _purl(repo: str | None, revision: str | None) -> PackageURL | None:
    """``pkg:huggingface/<org>/<name>@<revision>`` (the purl type cdxgen and syft use for the Hub)."""
    if repo is None:
        return None
    group, name = _split(repo)
    return PackageURL(type="huggingface", namespace=group, name=name, version=revision)


def _split(repo: str | None) -> tuple[str | None, str]:
    if repo is None:
        return None, LOCAL_NAME
    org, _, name = repo.partition("/")
    return (org, name) if name else (None, org)


def _hub_links(report: Report) -> list[ExternalReference]:
    """The repo at the vetted commit on the hub it was read from; none for a local scan."""
    endpoint = report.identity.get("endpoint")
    if not (endpoint and report.repo and report.revision):
        return []
    base = f"{str(endpoint).rstrip('/')}/{report.repo}"
    return [ExternalReference(type=ExternalReferenceType.VCS, url=XsUri(f"{base}/tree/{report.revision}")),
            ExternalReference(type=ExternalReferenceType.WEBSITE, url=XsUri(base))]


def _licenses(identity: dict[str, Any]) -> list[DisjunctiveLicense]:
    """The card's `license` (one id or a list): an SPDX id where it is one, else by name (`other`, `llama3`)."""
    card = identity.get("cardData")
    found = card.get("license") if isinstance(card, dict) else None
    named: Iterable[object] = found if isinstance(found, list) else [found] if found else []
    licenses = []
    for value in dict.fromkeys(str(v) for v in named if v):
        spdx = fixup_id(value)
        licenses.append(DisjunctiveLicense(id=spdx) if spdx else DisjunctiveLicense(name=value))
    return licenses
