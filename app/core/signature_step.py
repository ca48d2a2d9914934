"""The signature check as a vet step: read the signature file (and small non-LFS files) through the Source.

Every byte goes through the Source, so the vet's ``stats.bytes_read`` counts it; the check records its
own share as ``bytes_read``. LFS files (weights) are matched by the sha256 the listing carries: never read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import replace

from app.core.formats.blobs import SourceBlob
from app.core.manifest import Manifest
from app.core.ports import Source
from app.core.provenance.oms import LEGACY, SIGSTORE_OFFLINE, attribute_signature, check_signature
from app.core.signature import DEFAULT_FILE, MAX_SIGNATURE_BYTES, DeclaredIdentity, ListedIdentity, SignatureCheck

CHUNK = 1024 * 1024


def check_source(source: Source, manifest: Manifest, path: str,
                 identities: Sequence[DeclaredIdentity]) -> SignatureCheck:
    """The check of the signature file ``path`` of ``manifest`` (``absent`` when the commit has none)."""
    return _read_and_check(source, manifest, path, identities, check_signature)


def unlisted_check(source: Source, manifest: Manifest, listed: Sequence[ListedIdentity] = ()) -> SignatureCheck:
    """The step without a policy (or none covering the repo): `model.sig` recorded, never `verified`.

    ``listed``: every key and certificate identity the policy declares, with whose it is. One of them
    verifying the signature is recorded as ``signer.matched`` and said in ``problem`` with the file
    matching (a vendor's signed files copied by a mirror, plus its own), still `unverified`: no entry
    covers this repo, so nothing is required of it. Only identities the policy already lists are tried.
    """
    identities = tuple({i.label: i for i, _whose in listed}.values())
    check = _read_and_check(source, manifest, DEFAULT_FILE, identities, attribute_signature)
    if check.state != "unverified" or check.problem in (SIGSTORE_OFFLINE, LEGACY):
        return check
    covered = manifest.identity.repo_id or "a scan without --repo"
    uncovered = f"no `signatures` entry of the policy covers {covered}"
    matched = check.signer.matched if check.signer else None
    if matched is None:
        return replace(check, problem=f"{uncovered}: not verified; the signer is only as the file claims")
    return replace(check, problem=f"{attribution(check, matched, listed)}; {uncovered}, so nothing is required of it")


def attribution(check: SignatureCheck, matched: str, listed: Sequence[ListedIdentity]) -> str:
    """Whose identity verified ``check`` and how the files match it, for ``problem``: the policy's words."""
    whose = sorted({w for i, w in listed if i.label == matched})
    kind = check.signer.kind if check.signer else "identity"
    said = f"signed by the {kind} the policy lists for {' and '.join(whose)} ({matched})"
    files = [f"{what}: {_some(paths)}" for what, paths in (
        ("unsigned", check.unsigned), ("mismatched", check.mismatched), ("missing", check.missing)) if paths]
    if files:
        return f"{said}; {'; '.join(files)}"
    if check.problem:
        return f"{said}; {check.problem}"
    return f"{said}; all {check.signed_files} signed files match"


def _some(paths: Sequence[str], most: int = 5) -> str:
    more = f" and {len(paths) - most} more" if len(paths) > most else ""
    return ", ".join(paths[:most]) + more


def _read_and_check(source: Source, manifest: Manifest, path: str, identities: Sequence[DeclaredIdentity],
                    check: Callable[..., SignatureCheck]) -> SignatureCheck:
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
    result = check(data, path, files, lambda p: _sha256(source, p, sizes[p]), identities)
    return replace(result, bytes_read=source.bytes_read - before)


def _sha256(source: Source, path: str, size: int) -> str:
    blob, digest = SourceBlob(source, path, size), hashlib.sha256()
    for offset in range(0, size, CHUNK):
        digest.update(blob.read(offset, CHUNK))
    return digest.hexdigest()
