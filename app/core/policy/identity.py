"""Who published a repo: the org's tier, and whether the org imitates a known one.

A lookalike is compared on a "skeleton": case-folded, homoglyphs mapped to ASCII, characters
that read alike merged (1/i/l, 0/o, rn/m, vv/w), separators dropped. People form lookalikes by
typos (edit distance), doubled letters (``nviidiaa``), digits (``nvidia2024``) and affixes around
the name, with or without separators (``nvidia-ai``, ``official_nvidia``, ``nvidiaresearch``).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from app.core.policy.schema import TierName, Tiers

_SEPARATORS = re.compile(r"[-_. ]+")
_MULTI = (("rn", "m"), ("vv", "w"), ("cl", "d"))
# Words squatters put around a vendor's name to look official or related.
_AFFIXES = ("official", "offical", "real", "the", "team", "research", "labs", "lab", "ai", "ml", "hq", "inc",
            "corp", "org", "community", "models", "model", "hub", "dev", "devs", "io", "llm", "llms", "tech",
            "global", "group", "releases", "release", "verified", "original", "public", "open", "cloud",
            "studio", "mirror", "archive", "backup", "fans", "fan", "us", "cn", "quant", "quants", "gguf")
_MAX_AFFIXES = 3
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
    return _lookalike(org, (*tiers.vendor_official, *tiers.trusted), tuple(tiers.distinct))


@lru_cache(maxsize=4096)
def _lookalike(org: str, known: tuple[str, ...], distinct: tuple[str, ...]) -> str | None:
    """Cached: ~1 ms per org against the default policy's tiers, asked at every decision."""
    if org.casefold() in {k.casefold() for k in (*known, *distinct)}:
        return None
    return next((k for k in known if _imitates(org, k)), None)


def _imitates(org: str, known: str) -> bool:
    target = skeleton(known)
    forms = {skeleton(org), skeleton(org.rstrip("0123456789-_. ") or org)}  # `nvidia2024`, `nvidia-1`
    if any(f == target or _edits(f, target) <= _max_edits(len(target)) for f in forms):
        return True
    if _collapse(target) in {_collapse(f) for f in forms}:  # `nviiidiaa`: letters doubled or dropped
        return True
    # `nvidia-ai`, `official_nvidia`, `deep-seek-ai`: a run of separator-delimited words is the org.
    # `nvidiaresearch`, `theofficialnvidia`: the org between affix words, written together.
    near = _word_runs(org) | {c for f in forms for c in _without_affixes(f)}
    return target in near or (len(target) >= 6 and any(_one_edit(c, target) for c in near))


def _one_edit(candidate: str, target: str) -> bool:
    return abs(len(candidate) - len(target)) <= 1 and _edits(candidate, target) <= 1


def _edits(a: str, b: str) -> int:
    # Lazy: only an org outside the tiers is compared (a local scan has no org at all).
    from rapidfuzz.distance import DamerauLevenshtein

    return int(DamerauLevenshtein.distance(a, b))


def _collapse(text: str) -> str:
    return re.sub(r"(.)\1+", r"\1", text)


def _without_affixes(name: str) -> set[str]:
    """``name`` with up to three affix words taken off either end (the name itself excluded)."""
    found: set[str] = set()
    frontier = {name}
    for _ in range(_MAX_AFFIXES):
        frontier = {rest for n in frontier for rest in _strip_one(n)} - found
        found |= frontier
    return {f for f in found if len(f) >= 4}


def _strip_one(name: str) -> set[str]:
    out: set[str] = set()
    for affix in _affix_skeletons():
        if len(name) > len(affix):
            if name.startswith(affix):
                out.add(name[len(affix):])
            if name.endswith(affix):
                out.add(name[: -len(affix)])
    return out


@lru_cache(maxsize=1)
def _affix_skeletons() -> tuple[str, ...]:
    return tuple(sorted({skeleton(a) for a in _AFFIXES}))


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
    # Lazy: the table is a 0.9 MB JSON read on import, and most org names are plain ASCII.
    from confusable_homoglyphs import confusables

    for glyph in confusables.confusables_data.get(ch, ()):
        candidate = glyph["c"]
        if len(candidate) == 1 and candidate.isascii() and candidate.isalnum():
            return str(candidate)
    return ch

