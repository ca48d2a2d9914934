"""The signature check as a vet step: read the signature file (and small non-LFS files) through the Source.

Every byte goes through the Source, so the vet's ``stats.bytes_read`` counts it; the check records its
own share as ``bytes_read``. LFS files (weights) are matched by the sha256 the listing carries: never read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace

from app.core.formats.blobs import SourceBlob
from app.core.manifest import Manifest
from app.core.ports import Source
from app.core.provenance.oms import SIGSTORE_OFFLINE, check_signature
from app.core.signature import DEFAULT_FILE, MAX_SIGNATURE_BYTES, DeclaredIdentity, SignatureCheck

CHUNK = 1024 * 1024


def check_source(source: Source, manifest: Manifest, path: str,
                 identities: Sequence[DeclaredIdentity]) -> SignatureCheck:
    """The check of the signature file ``path`` of ``manifest`` (``absent`` when the commit has none)."""
    entry = next((f for f in manifest.files if f.path == path), None)
    if entry is None:
        return SignatureCheck(file=path)
    if entry.size > MAX_SIGNATURE_BYTES:
        return SignatureCheck(file=path, state="invalid",
                              problem=f"the signature file is {entry.size} bytes, over {MAX_SIGNATURE_BYTES}: "
                                      "not read as a signature")
    before = source.bytes_read
    try:
        data = SourceBlob(source, path, entry.size).read(0, entry.size)
    except Exception as exc:  # noqa: BLE001 - an unreadable signature is a failed check, not a crash
        return SignatureCheck(file=path, state="invalid", problem=f"could not read the signature: {exc}")
    files = {f.path: (f.sha256, f.size) for f in manifest.files}
    sizes = {f.path: f.size for f in manifest.files}
    check = check_signature(data, path, files, lambda p: _sha256(source, p, sizes[p]), identities)
    return replace(check, bytes_read=source.bytes_read - before)


def unlisted_check(source: Source, manifest: Manifest) -> SignatureCheck:
    """The step without a policy (or none covering the repo): `model.sig` recorded, verified by nobody."""
    check = check_source(source, manifest, DEFAULT_FILE, ())
    if check.state != "unverified" or check.problem == SIGSTORE_OFFLINE:
        return check
    repo = manifest.identity.repo_id
    covered = repo or "a scan without --repo"
    return replace(check, problem=f"no `signatures` entry of the policy covers {covered}: not verified; "
                                  "the signer is only as the file claims")


def _sha256(source: Source, path: str, size: int) -> str:
    blob, digest = SourceBlob(source, path, size), hashlib.sha256()
    for offset in range(0, size, CHUNK):
        digest.update(blob.read(offset, CHUNK))
    return digest.hexdigest()
