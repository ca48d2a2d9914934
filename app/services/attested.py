"""Attestations checked where files are used: `hfvet verify --files` and `hfvet download --require-attestation`.

The download's check runs before any file is fetched: the attestation must be signed by the given key,
name the gate's repo and commit, attest exactly the gate's manifest (every file, the same digests), and
approve: its verdict, or a signed review approving that very verdict statement.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from app.core.manifest_json import ManifestDoc
from app.core.provenance.envelope import AttestationRefused, load_public
from app.core.provenance.statement import REVIEW_TYPE, VSA_TYPE, subject_digest
from app.core.provenance.verify import Digests, Expect, Verified, verify
from app.errors import HfvetError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

FetchEnvelope = Callable[[str], "str | Missing"]  # kind (verdict | review) -> the envelope's JSON text, or why none
# huggingface_hub's bookkeeping in a download folder (app.services.downloads.CLIENT_BOOKKEEPING; not imported:
# `hfvet verify` stays without the gate's modules)
CLIENT_BOOKKEEPING = PurePosixPath(".cache/huggingface")
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Missing:
    """No envelope of that kind: why, as the server or the store says (with what would sign one)."""

    why: str


class PublicKeyError(HfvetError):
    """The public key given to verify with cannot be used."""


def load_public_key(path: Path, flag: str = "--key") -> Ed25519PublicKey:
    """An ed25519 public key (PEM) for `hfvet verify --key` and `download --require-attestation` (``flag``)."""
    try:
        pem = path.read_bytes()
    except OSError as exc:
        raise PublicKeyError(f"{flag} {path}: cannot read it: {exc.strerror or exc}") from None
    if b"PRIVATE KEY-----" in pem:
        raise PublicKeyError(f"{flag} {path}: this is a private key; pass the public key (the .pub beside it, "
                             "or GET /attestations/key) and keep the private key secret")
    try:
        return load_public(pem)
    except (ValueError, TypeError):
        raise PublicKeyError(f"{flag} {path}: not an ed25519 public key in PEM (make one with `hfvet keys "
                             "create`, or fetch the server's from GET /attestations/key)") from None


def file_digests(path: Path) -> dict[str, str]:
    """A file's sha256 and git blob id, in one read."""
    sha256 = hashlib.sha256()
    blob = hashlib.sha1(f"blob {path.stat().st_size}\0".encode(), usedforsecurity=False)
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            sha256.update(chunk)
            blob.update(chunk)
    return {"sha256": sha256.hexdigest(), "gitBlob": blob.hexdigest()}


def directory_digests(root: Path) -> dict[str, dict[str, str]]:
    """Every file under ``root`` by repo path -> its sha256 and git blob id (huggingface_hub's bookkeeping
    folder left out). A link to a regular file counts as that file's bytes (a huggingface_hub cache snapshot
    links each file into ../../blobs); a dangling link or a special file is refused."""
    found: dict[str, dict[str, str]] = {}
    for folder, dirs, files in os.walk(root):
        rel = PurePosixPath(Path(folder).relative_to(root).as_posix())
        dirs[:] = sorted(d for d in dirs if rel / d != CLIENT_BOOKKEEPING)
        for name in sorted(files):
            path = Path(folder) / name
            if not path.is_file():  # follows links: dangling ones and special files (fifo, socket, device)
                what = "a dangling link" if path.is_symlink() and not path.exists() else "a special file"
                raise AttestationRefused("files", f"{(rel / name).as_posix()}: {what}, not attested bytes")
            found[(rel / name).as_posix()] = file_digests(path.resolve())
    return found


def manifest_digests(manifest: ManifestDoc) -> Digests:
    """The gate's manifest as the subjects must name it: sha256 when known, else the git blob id."""
    return {str(entry.get("path")): subject_digest(entry) for entry in manifest}


def approved_by_attestation(fetch: FetchEnvelope, public: Ed25519PublicKey, repo: str, sha: str,
                            manifest: ManifestDoc) -> Verified:
    """The verified attestation that approves exactly this manifest at ``repo@sha``; AttestationRefused if none."""
    files = manifest_digests(manifest)
    text = fetch("verdict")
    if isinstance(text, Missing):
        raise AttestationRefused("missing", text.why)
    verdict = verify(text, public, Expect(repo=repo, revision=sha, files=files, kinds=(VSA_TYPE,)))
    review_text = fetch("review")
    if verdict.verdict == "approve":
        _not_rejected(verdict, review_text, public, repo, sha, files)
        return verdict
    if isinstance(review_text, Missing):
        raise AttestationRefused("not-approved", f"the attested verdict for {repo}@{sha[:12]} is "
                                                 f"{verdict.verdict!r}, and no signed review approves it "
                                                 f"({review_text.why})")
    review = verify(review_text, public, Expect(repo=repo, revision=sha, files=files, require_approve=True,
                                                kinds=(REVIEW_TYPE,)))
    if _reviewed(review) != verdict.payload_sha256:
        raise AttestationRefused("not-approved", f"the signed review of {repo}@{sha[:12]} approves another verdict "
                                                 f"statement than the attested {verdict.verdict!r} one")
    return review


def _not_rejected(verdict: Verified, review_text: str | Missing, public: Ed25519PublicKey, repo: str, sha: str,
                  files: Digests) -> None:
    """An approved verdict that a signed review of that very statement rejects does not approve: the reject
    is signed too, so trusting the verdict's signature means trusting the reject's. A review this key did not
    sign, or about other files, says nothing about this verdict (a review from before a key rotation)."""
    if isinstance(review_text, Missing):
        return
    try:
        review = verify(review_text, public, Expect(repo=repo, revision=sha, files=files, kinds=(REVIEW_TYPE,)))
    except AttestationRefused:
        return
    if review.verdict != "approve" and _reviewed(review) == verdict.payload_sha256:
        why = review.statement["predicate"].get("reason")
        raise AttestationRefused("not-approved", f"the attested verdict for {repo}@{sha[:12]} approves, but a "
                                                 f"signed review rejects it: {why}")


def _reviewed(review: Verified) -> object:
    """The sha256 of the verdict statement a review names."""
    return ((review.statement["predicate"].get("verdictStatement") or {}).get("digest") or {}).get("sha256")
