"""Attestations as the API, the CLI and the dashboard use them: read the stored envelopes, sign the
verdicts stored before a key was configured (`hfvet attest`), and publish the public key.
"""

from __future__ import annotations

from app.core.provenance.envelope import SigningKey
from app.db import attestations as rows
from app.db.attestations import StoredAttestation
from app.db.session import Store
from app.errors import HfvetError
from app.services.commits import vetted_commit

__all__ = ["NoAttestation", "StoredAttestation", "attest_stored", "commit_attestations", "newest_envelope",
           "public_key_pem", "repo_attestations"]

NO_KEY = ("this hfvet signs no attestations: HFVET_ATTESTATION_KEY is not set "
          "(create a key with `hfvet keys create`, then set it and restart)")


class NoAttestation(HfvetError):
    """Nothing signed to hand out (no key configured, or this commit was never attested)."""


def newest_envelope(store: Store, repo: str, revision: str, kind: str = "verdict") -> StoredAttestation:
    """The newest ``kind`` attestation of ``repo`` at ``revision`` (a full or short vetted commit)."""
    if kind not in rows.KINDS:
        raise NoAttestation(f"kind must be verdict or review, not {kind[:20]!r}")
    sha = vetted_commit(store, repo, revision)
    with store.session() as session:
        found = rows.newest(session, repo, sha, kind)
    if found is None:
        raise NoAttestation(_none_of(store, f"{repo}@{sha}", kind))
    return found


def commit_attestations(store: Store, repo: str, revision: str) -> list[StoredAttestation]:
    sha = vetted_commit(store, repo, revision)
    with store.session() as session:
        return rows.of_commit(session, repo, sha)


def repo_attestations(store: Store, repo: str) -> dict[str, StoredAttestation]:
    """Each attested commit of ``repo`` -> its newest verdict attestation (the dashboard's repo page)."""
    with store.session() as session:
        return rows.newest_verdicts(session, repo)


def public_key_pem(store: Store) -> bytes:
    """The signing key's public half, PEM; NoAttestation when this store signs nothing."""
    if store.signer is None:
        raise NoAttestation(NO_KEY)
    return store.signer.public_pem()


def attest_stored(store: Store, signer: SigningKey, repo: str, revision: str | None = None) -> list[StoredAttestation]:
    """Sign every stored report of ``repo`` (at ``revision``, when given) that has no verdict attestation yet."""
    sha = None if revision is None else vetted_commit(store, repo, revision)
    signed: list[StoredAttestation] = []
    with store.session() as session:
        for report_id in rows.unattested_reports(session, repo, sha):
            made = rows.attest_report(session, report_id, signer)
            if made is None:
                raise NoAttestation(f"the key {signer.key_id[:16]} expired on {signer.expires}: nothing was signed")
            signed.append(made)
    return signed


def _none_of(store: Store, what: str, kind: str) -> str:
    if store.signer is None:
        return f"no {kind} attestation of {what}: {NO_KEY}"
    if kind == "review":
        return f"no review attestation of {what}: it was never reviewed since the key was configured"
    return (f"no verdict attestation of {what}: vetted before the key was configured; sign it with "
            "`hfvet attest REPO --revision SHA` on the server's store")
