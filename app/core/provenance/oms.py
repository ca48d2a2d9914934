"""Verify an OpenSSF model signing (OMS, `model-signing`) signature against the Hub's hashes, pure.

The signature is verified with model-signing's own verifiers, which check the bundle and return the
signed manifest *without hashing any file*. That manifest is then compared with the files of the
vetted commit: LFS files by the sha256 the Hub's listing already carries (no weight byte is read),
small non-LFS files (a git blob id only) by hashing the bytes ``hash_of`` reads. Only the `files`
serialization can be matched so; `shards` (digests of byte ranges) cannot before download.

Never raises on hostile input: every failure is a ``SignatureCheck`` with a one-line ``problem``.
model-signing (and the Sigstore stack it imports) loads only when a signature is present.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from app.core.provenance.oms_bundle import BundleError, BundleView, certificate_subject, read_bundle
from app.core.signature import (
    MAX_SIGNATURE_BYTES,
    DeclaredIdentity,
    FileHashes,
    HashOf,
    SignatureCheck,
    Signer,
)

MAX_HASHED_BYTES = 16 * 1024 * 1024  # a non-LFS file bigger than this is not read to check a signature
SIGSTORE_OFFLINE = ("a Sigstore keyless signature needs a Sigstore trust root, and hfvet verifies offline "
                    "without one: it cannot be verified (declare a key or certificate identity instead)")

LEGACY = ("a model-signing 0.x signature (predicate Digests/v0.1): hfvet checks only v1.0 signatures before "
          "download; re-sign with model-signing 1.x")


def check_signature(data: bytes, path: str, files: FileHashes, hash_of: HashOf,
                    identities: Sequence[DeclaredIdentity]) -> SignatureCheck:
    """The check of the signature ``data`` (the file at ``path``) against ``files`` and ``identities``."""
    base = SignatureCheck(file=path, state="invalid")
    if len(data) > MAX_SIGNATURE_BYTES:
        return replace(base, problem=f"the signature file is {len(data)} bytes, over {MAX_SIGNATURE_BYTES}: "
                                     "not read as a signature")
    try:
        view = read_bundle(data)
    except BundleError as exc:
        return replace(base, problem=f"not a model-signing signature: {exc}")
    claimed = replace(base, signer=Signer(view.kind, view.identity), method=view.method)
    if view.kind == "sigstore":
        return replace(claimed, state="unverified", problem=SIGSTORE_OFFLINE)
    if view.legacy:  # a real vendor's older signature is not a forgery: unverified (a requirement still rejects)
        return replace(claimed, state="unverified", problem=LEGACY)
    if not identities:
        return replace(claimed, state="unverified",
                       problem=f"the policy lists no identity to verify {path} against: the signer is as claimed")
    verified = _verify_any(data, view, identities)
    if isinstance(verified, str):
        return replace(claimed, problem=verified)
    label, manifest = verified
    method = manifest.serialization_type.get("method")
    signed = replace(claimed, signer=Signer(view.kind, view.identity, label), method=str(method) if method else None)
    return compare(signed, _signed_digests(manifest), _ignored(manifest), files, hash_of)


def attribute_signature(data: bytes, path: str, files: FileHashes, hash_of: HashOf,
                        identities: Sequence[DeclaredIdentity]) -> SignatureCheck:
    """The check of a signature no `signatures` entry covers: whose it is, among ``identities`` (every one the
    policy declares), and how the files match it; never `verified` (nothing requires it). None verifying it
    (or none of its kind): the plain `unverified` record, the signer as claimed."""
    plain = check_signature(data, path, files, hash_of, ())
    if plain.state != "unverified" or plain.signer is None or plain.signer.kind == "sigstore":
        return plain
    if not any(i.kind == plain.signer.kind for i in identities):
        return plain
    tried = check_signature(data, path, files, hash_of, identities)
    if tried.signer is None or tried.signer.matched is None:
        return plain
    return replace(tried, state="unverified")


def compare(check: SignatureCheck, signed: dict[str, tuple[str, str]] | str, ignored: tuple[str, ...],
            files: FileHashes, hash_of: HashOf) -> SignatureCheck:
    """``check`` completed by matching the signed digests (path -> (algorithm, hex)) with ``files``."""
    if isinstance(signed, str):
        return replace(check, problem=signed)
    if check.method != "files":
        return replace(check, problem=f"signed with the `{check.method}` serialization (digests of byte ranges): "
                                      "it cannot be verified before download")
    listed = {p: v for p, v in files.items() if p != check.file and not _is_ignored(p, ignored)}
    unsigned = sorted(p for p in listed if p not in signed)
    missing = sorted(p for p in signed if p not in files)
    mismatched, unreadable = [], []
    for path in sorted(set(listed) & set(signed)):
        actual = _actual_sha256(path, listed[path], hash_of)
        if actual is None:
            unreadable.append(path)
        elif signed[path] != ("sha256", actual):
            mismatched.append(path)
    result = replace(check, unsigned=tuple(unsigned), mismatched=tuple(mismatched), missing=tuple(missing),
                     signed_files=len(signed))
    problem = _coverage_problem(unsigned, mismatched, missing, unreadable)
    if problem:
        return replace(result, problem=problem)
    return replace(result, state="verified", problem=None)


def _actual_sha256(path: str, known: tuple[str | None, int], hash_of: HashOf) -> str | None:
    sha256, size = known
    if sha256:
        return sha256.lower()
    if size > MAX_HASHED_BYTES:
        return None
    try:
        return hash_of(path)
    except Exception:  # noqa: BLE001 - an unreadable file is not verified, never a crash
        return None


def _coverage_problem(unsigned: list[str], mismatched: list[str], missing: list[str],
                      unreadable: list[str]) -> str | None:
    parts = [f"{len(paths)} {what} (e.g. {paths[0]})" for paths, what in (
        (mismatched, "file(s) differ from what was signed"),
        (unsigned, "file(s) not covered by the signature"),
        (missing, "signed file(s) not in this commit"),
        (unreadable, f"non-LFS file(s) over {MAX_HASHED_BYTES} bytes or unreadable, not checked before download"),
    ) if paths]
    return "; ".join(parts) or None


def _verify_any(data: bytes, view: BundleView, identities: Sequence[DeclaredIdentity]) -> tuple[str, Any] | str:
    """(label of the identity that verified, the signed manifest), or why none did."""
    candidates = [i for i in identities if i.kind == view.kind]
    if view.kind == "key" and not view.identity.startswith("sha256:"):
        return "the key signature carries no key hint (model-signing before 1.0): re-sign it"
    if view.kind == "key" and f"key {view.identity}" not in {i.label for i in candidates}:
        # model-signing would only say "Key mismatch": the hint names the key, and it is not listed.
        return f"not signed by an identity the policy lists: the signature names key {view.identity}"
    errors: list[str] = []
    for identity in candidates:
        try:
            manifest = _verify_with(data, identity)
        except Exception as exc:  # noqa: BLE001 - a library error on hostile input is a failed verification
            errors.append(f"{type(exc).__name__}: {str(exc).strip()[:160]}")
            continue
        if identity.subject is not None and view.identity != identity.subject:
            errors.append(f"the certificate is for {view.identity!r}, not {identity.subject!r}")
            continue
        return identity.label, manifest
    listed = ", ".join(i.label for i in identities)
    why = f" ({errors[-1]})" if errors else ""
    return (f"not signed by an identity the policy lists ({listed}); the signature names "
            f"{view.kind} {view.identity}{why}")


def _verify_with(data: bytes, identity: DeclaredIdentity) -> Any:
    """model-signing's verifier for ``identity``, over ``data``: the signed manifest, or an exception.

    Its verifiers and reader take paths, so the bundle and the policy's PEM go to a private temp dir.
    """
    from model_signing._signing import sign_certificate, sign_ec_key, sign_sigstore_pb

    with tempfile.TemporaryDirectory(prefix="hfvet-oms-") as tmp:
        bundle, pem = Path(tmp, "signature.json"), Path(tmp, "identity.pem")
        bundle.write_bytes(data)
        pem.write_text(identity.pem, encoding="utf-8")
        signature = sign_sigstore_pb.Signature.read(bundle)
        verifier = (sign_ec_key.Verifier(pem) if identity.kind == "key"
                    else sign_certificate.Verifier([pem]))
        return verifier.verify(signature)


def _signed_digests(manifest: Any) -> dict[str, tuple[str, str]] | str:
    digests: dict[str, tuple[str, str]] = {}
    for descriptor in manifest.resource_descriptors():
        name = str(descriptor.identifier)
        if name in digests:
            return f"the signature lists {name} twice"
        digests[name] = (str(descriptor.digest.algorithm), str(descriptor.digest.digest_hex).lower())
    return digests


def _ignored(manifest: Any) -> tuple[str, ...]:
    paths = manifest.serialization_type.get("ignore_paths") or ()
    return tuple(str(p).strip("/") for p in paths if isinstance(p, str))


def _is_ignored(path: str, ignored: Iterable[str]) -> bool:
    return any(path == p or path.startswith(p + "/") for p in ignored)


__all__ = ["attribute_signature", "check_signature", "certificate_subject"]
