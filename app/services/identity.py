"""Namespace reuse: a repo id whose hub identity changed after it was approved is itself a finding.

The store keeps the identity first seen (hub `_id`, author, createdAt). When an approved repo
comes back from the hub as someone else (deleted and re-created, transferred), its new vet gets
a high `identity-changed` finding before the policy decides, so no policy approves it unseen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.core.findings import Finding, RuleInfo, RuleKind, Severity
from app.core.manifest import Manifest
from app.core.ports import RepoCheck

if TYPE_CHECKING:  # the store's libraries load only when a store is open
    from app.db.repos import KnownIdentity
    from app.db.session import Store

NAME = "store"
RULE = "identity-changed"
RULES = (RuleInfo(RULE, Severity.HIGH, "an approved repo id now has another hub identity (`_id`, author or "
                  "creation date): namespace reuse or a transfer", kind=RuleKind.IDENTITY),)
_FIELDS = (("_id", "hub id"), ("author", "author"), ("createdAt", "creation date"))


def identity_changes(known: dict[str, str | None], facts: dict[str, object]) -> list[str]:
    """What differs between the identity first seen and the one the hub reports now."""
    changes = []
    for key, label in _FIELDS:
        before, now = known.get(key), facts.get(key)
        if before is not None and now is not None and str(now)[:96] != before:
            changes.append(f"{label} was {before!r}, is now {str(now)[:96]!r}")
    return changes


def identity_check(store: Store, repo_id: str) -> RepoCheck:
    """A pipeline repo check comparing the hub's identity now with the one stored for ``repo_id``."""
    from app.db.repos import known_identity

    with store.session() as session:
        known = known_identity(session, repo_id)

    def check(manifest: Manifest) -> list[Finding]:
        return _findings(known, repo_id, manifest)

    return check


def _findings(known: KnownIdentity | None, repo_id: str, manifest: Manifest) -> list[Finding]:
    if known is None or not known.approved_before:
        return []
    changes = identity_changes(known.facts, dict(manifest.identity.facts))
    if not changes:
        return []
    return [Finding(repo_id, NAME, RULE, Severity.HIGH,
                    "this repo id was approved before under another hub identity (namespace reuse?): "
                    + "; ".join(changes))]
