"""Who published a repo: the org's tier, and whether the org (or the repo's name) imitates a known one.

Two kinds of imitation are judged (see skeleton.py for how names are compared):
- an org like a vendor-official or trusted org: a typo, homoglyph, separator, digit or affix away;
- an org like a vendor's other identities (the policy's `identities`, see vendor_identity.py): its
  GitHub org, a company or product name or a social handle used as a Hub org, with affixes, joined
  to another of the vendor's names, or (long names) an edit away.
A repo NAME imitates a vendor's path when it starts with one of the vendor's accounts followed by
`--` (the Hub cache form `models--nvidia--X`) or a slash look-alike (U+2215, U+FF0F...).
"""

from __future__ import annotations

from collections.abc import Mapping

from app.core.policy.schema import Identity, TierName, Tiers
from app.core.policy.skeleton import collapse, forms, max_edits, one_edit, skeleton, without_affixes, word_runs
from app.core.policy.skeleton import edits as _edits
from app.core.policy.vendor_identity import Registry, imitated, name_imitated, registry_of

__all__ = ["lookalike_of", "registry_of", "repo_lookalike_of", "skeleton", "tier_of"]


def tier_of(org: str | None, tiers: Tiers) -> TierName:
    """Hub org names are case-insensitive, so tiers match case-folded. No org = third-party."""
    if org is None:
        return "third-party"
    folded = org.casefold()
    if folded in {o.casefold() for o in tiers.vendor_official}:
        return "vendor-official"
    if folded in {o.casefold() for o in tiers.trusted}:
        return "trusted"
    return "third-party"


def lookalike_of(org: str | None, tiers: Tiers, identities: Mapping[str, Identity] | None = None) -> str | None:
    """The vendor-official or trusted org, or the vendor identity, that `org` imitates, or None.

    Listed orgs (tiers, `distinct`, a vendor's `hub`) are never lookalikes.
    """
    if org is None:
        return None
    hit = imitated(org, registry_of(tiers, identities), imitates_org)
    return hit.what if hit else None


def repo_lookalike_of(repo_id: str | None, tiers: Tiers,
                      identities: Mapping[str, Identity] | None = None) -> str | None:
    """What a repo id imitates: its org (as lookalike_of), else its name (a vendor's path in the name)."""
    if not repo_id:
        return None
    org, _, name = repo_id.partition("/") if "/" in repo_id else (None, "", repo_id)
    registry: Registry = registry_of(tiers, identities)
    if org is not None:
        hit = imitated(org, registry, imitates_org)
        if hit:
            return hit.what
    by_name = name_imitated(name, org, registry, imitates_org)
    return by_name.what if by_name else None


def imitates_org(org: str, known: str) -> bool:
    """Does `org` imitate the listed org `known` (typo, homoglyph, digits, doubled letters, affixes)?"""
    target = skeleton(known)
    variants = forms(org)
    if any(f == target or _edits(f, target) <= max_edits(len(target)) for f in variants):
        return True
    if collapse(target) in {collapse(f) for f in variants}:  # `nviiidiaa`: letters doubled or dropped
        return True
    # `nvidia-ai`, `official_nvidia`, `deep-seek-ai`: a run of separator-delimited words is the org.
    # `nvidiaresearch`, `theofficialnvidia`: the org between affix words, written together.
    near = word_runs(org) | {c for f in variants for c in without_affixes(f)}
    return target in near or (len(target) >= 6 and any(one_edit(c, target) for c in near))
