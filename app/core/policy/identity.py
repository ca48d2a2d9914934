"""Who published a repo: the org's tier, and whether the org imitates a known one.

A lookalike is compared on a "skeleton": case-folded, homoglyphs mapped to ASCII, characters
that read alike merged (1/i/l, 0/o, rn/m, vv/w), separators dropped.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from confusable_homoglyphs import confusables
from rapidfuzz.distance import DamerauLevenshtein

from app.core.policy.schema import TierName, Tiers

_SEPARATORS = re.compile(r"[-_. ]+")
_MULTI = (("rn", "m"), ("vv", "w"), ("cl", "d"))
_SINGLE = str.maketrans({"1": "l", "i": "l", "|": "l", "!": "l", "0": "o", "3": "e", "5": "s", "7": "t",
                         "4": "a", "8": "b", "$": "s", "@": "a"})


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


def lookalike_of(org: str | None, tiers: Tiers) -> str | None:
    """The vendor-official or trusted org that `org` imitates, or None.

    Listed orgs themselves are never lookalikes.
    """
    if org is None:
        return None
    known = [*tiers.vendor_official, *tiers.trusted]
    if org.casefold() in {k.casefold() for k in known}:
        return None
    return next((k for k in known if _imitates(org, k)), None)


def _imitates(org: str, known: str) -> bool:
    target = skeleton(known)
    whole = skeleton(org)
    if whole == target or DamerauLevenshtein.distance(whole, target) <= _max_edits(len(target)):
        return True
    # `nvidia-ai`, `official_nvidia`, `deep-seek-ai`: a run of separator-delimited words is the org.
    return target in _word_runs(org)


def _max_edits(length: int) -> int:
    if length < 4:
        return 0
    return 1 if length <= 5 else 2


def _word_runs(org: str) -> set[str]:
    words = [w for w in _SEPARATORS.split(org) if w]
    return {skeleton("".join(words[i:j])) for i in range(len(words)) for j in range(i + 1, len(words) + 1)}


@lru_cache(maxsize=4096)
def skeleton(name: str) -> str:
    text = "".join(_ascii_lookalike(ch) for ch in unicodedata.normalize("NFKC", name)).casefold()
    text = _SEPARATORS.sub("", text)
    for pair, single in _MULTI:
        text = text.replace(pair, single)
    return text.translate(_SINGLE)


def _ascii_lookalike(ch: str) -> str:
    if ch.isascii():
        return ch
    for glyph in confusables.confusables_data.get(ch, ()):
        candidate = glyph["c"]
        if len(candidate) == 1 and candidate.isascii() and candidate.isalnum():
            return str(candidate)
    return ch

