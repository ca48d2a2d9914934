"""Attestations as the API, the CLI and the dashboard use them: read the stored envelopes, sign the
verdicts stored before a key was configured (`hfvet attest`), and publish the public key.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.provenance.envelope import SigningKey
from app.db import attestations as rows
from app.db.attestations import StoredAttestation
from app.db.commits import has_reports, vetted_commits
from app.db.reviews import withdrawn_approval
from app.db.session import Store
from app.errors import HfvetError
from app.services.commits import vetted_commit

__all__ = ["CommitNotVetted", "NoAttestation", "Signed", "StoredAttestation", "attest_stored", "commit_attestations",
           "newest_envelope", "public_key_pem", "repo_attestations", "review_attested_commits", "vetted_sha"]

NO_KEY = ("this hfvet signs no attestations: HFVET_ATTESTATION_KEY is not set "
          "(create a key with `hfvet keys create`, then set it and restart)")


class NoAttestation(HfvetError):
    """Nothing signed to hand out (no key configured, or this commit was never attested)."""


class CommitNotVetted(NoAttestation):
    """No stored report of the repo (at that commit): nothing to attest (the API's 404 `commit-not-vetted`)."""


@dataclass(frozen=True)
class Signed:
    verdicts: list[StoredAttestation]
    reviews: list[StoredAttestation]


def newest_envelope(store: Store, repo: str, revision: str, kind: str = "verdict") -> StoredAttestation:
    """The newest ``kind`` attestation of ``repo`` at ``revision`` (a full or short vetted commit)."""
    if kind not in rows.KINDS:
        raise NoAttestation(f"kind must be verdict or review, not {kind[:20]!r}")
    sha = vetted_sha(store, repo, revision)
    with store.session() as session:
        withdrawn = withdrawn_approval(session, repo, sha) if kind == "review" else None
        found = None if withdrawn is not None else rows.newest(session, repo, sha, kind)
    if withdrawn is not None:  # the newest review attestation approves an older verdict statement
        raise NoAttestation(f"no review attestation applies to {repo}@{sha}'s newest verdict: the approval by "
                            f"{withdrawn.reviewer} ({withdrawn.role}) was withdrawn by a re-vet: {withdrawn.withdrawn}")
    if found is None:
        raise NoAttestation(_none_of(store, repo, sha, kind))
    return found


def commit_attestations(store: Store, repo: str, revision: str) -> list[StoredAttestation]:
    sha = vetted_sha(store, repo, revision)
    with store.session() as session:
        return rows.of_commit(session, repo, sha)


def repo_attestations(store: Store, repo: str) -> dict[str, StoredAttestation]:
    """Each attested commit of ``repo`` -> its newest verdict attestation (the dashboard's repo page)."""
    with store.session() as session:
        return rows.newest_verdicts(session, repo)


def review_attested_commits(store: Store, repo: str) -> set[str]:
    """The commits of ``repo`` with a review attestation (the dashboard links it beside the verdict's)."""
    with store.session() as session:
        return rows.reviewed_commits(session, repo)


def public_key_pem(store: Store) -> bytes:
    """The signing key's public half, PEM; NoAttestation when this store signs nothing."""
    if store.signer is None:
        raise NoAttestation(NO_KEY)
    return store.signer.public_pem()


def vetted_sha(store: Store, repo: str, revision: str) -> str:
    """The full sha of a vetted commit of ``repo``; CommitNotVetted when no report of it is stored."""
    sha = vetted_commit(store, repo, revision)
    with store.session() as session:
        if not vetted_commits(session, repo, sha, 1):
            raise CommitNotVetted(f"{repo}@{sha} has never been vetted: nothing is attested (vet it first: "
                                  f"`hfvet vet {repo} --revision {sha}`)")
    return sha


def attest_stored(store: Store, signer: SigningKey, repo: str, revision: str | None = None) -> Signed:
    """Sign every stored report of ``repo`` (at ``revision``, when given) that has no verdict attestation yet,
    then every stored review with none (each names its report's verdict statement, as when signed on store),
    then each review carried to a re-vet that has none: to the reports just signed and each commit's newest."""
    sha = None if revision is None else vetted_sha(store, repo, revision)
    signed = Signed([], [])
    with store.session() as session:
        if sha is None and not has_reports(session, repo):
            raise CommitNotVetted(f"{repo} has never been vetted (no stored report): nothing to attest; "
                                  "check the repo id, or vet it first")
        reports = rows.unattested_reports(session, repo, sha)
        for report_id in reports:  # carried reviews after the reviews: they name the human review's statement
            signed.verdicts.append(_made(rows.attest_report(session, report_id, signer, carry=False), signer))
        for review_id in rows.unattested_reviews(session, repo, sha):
            signed.reviews.append(_made(rows.attest_review(session, review_id, signer), signer))
        for report_id in dict.fromkeys([*reports, *rows.newest_reports(session, repo, sha)]):
            carried = rows.attest_carried(session, report_id, signer)
            if carried is not None:
                signed.reviews.append(carried)
    return signed


def _made(made: StoredAttestation | None, signer: SigningKey) -> StoredAttestation:
    if made is None:
        raise NoAttestation(f"the key {signer.key_id[:16]} expired on {signer.expires}: nothing was signed")
    return made


def _none_of(store: Store, repo: str, sha: str, kind: str) -> str:
    """Why ``repo@sha`` (vetted) has no ``kind`` attestation, and what signs one."""
    what, sign = f"{repo}@{sha}", f"sign it with `hfvet attest {repo} --revision {sha}` on the server's store"
    with store.session() as session:
        unsigned = (rows.unattested_reviews if kind == "review" else rows.unattested_reports)(session, repo, sha)
    if kind == "review" and not unsigned:
        return f"no review attestation of {what}: it was never reviewed"
    stored = "reviewed" if kind == "review" else "vetted"
    if store.signer is None:
        return f"no {kind} attestation of {what}: {NO_KEY}; {stored} unsigned, {sign}"
    return f"no {kind} attestation of {what}: {stored} while no key was configured; {sign}"
