"""How names are compared for imitation: a "skeleton" and the ways squatters bend a name.

A skeleton is the name case-folded, homoglyphs mapped to ASCII, characters that read alike merged
(1/i/l, 0/o, rn/m, vv/w) and separators dropped. People form lookalikes by typos (edit distance),
doubled letters (``nviidiaa``), digits (``nvidia2024``) and affixes around the name, with or
without separators (``nvidia-ai``, ``official_nvidia``, ``nvidiaresearch``).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

SEPARATORS = re.compile(r"[-_. ]+")
_MULTI = (("rn", "m"), ("vv", "w"), ("cl", "d"))
# Words squatters put around a vendor's name to look official or related.
_AFFIXES = ("official", "offical", "real", "the", "team", "research", "labs", "lab", "ai", "ml", "hq", "inc",
            "corp", "org", "community", "models", "model", "hub", "dev", "devs", "io", "llm", "llms", "tech",
            "global", "group", "releases", "release", "verified", "original", "public", "open", "cloud",
            "studio", "mirror", "archive", "backup", "fans", "fan", "us", "cn", "quant", "quants", "gguf")
_MAX_AFFIXES = 3
_SINGLE = str.maketrans({"1": "l", "i": "l", "|": "l", "!": "l", "0": "o", "3": "e", "5": "s", "7": "t",
                         "4": "a", "8": "b", "$": "s", "@": "a"})


def forms(name: str) -> set[str]:
    """The name's skeleton, and with trailing digits dropped (`nvidia2024`, `nvidia-1`)."""
    return {skeleton(name), skeleton(name.rstrip("0123456789-_. ") or name)}


def edits(a: str, b: str) -> int:
    # Lazy: only an org outside the tiers is compared (a local scan has no org at all).
    from rapidfuzz.distance import DamerauLevenshtein

    return int(DamerauLevenshtein.distance(a, b))


def one_edit(candidate: str, target: str) -> bool:
    return abs(len(candidate) - len(target)) <= 1 and edits(candidate, target) <= 1


def collapse(text: str) -> str:
    return re.sub(r"(.)\1+", r"\1", text)


def without_affixes(name: str) -> set[str]:
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


def max_edits(length: int) -> int:
    if length < 4:
        return 0
    return 1 if length <= 5 else 2


def word_runs(org: str) -> set[str]:
    words = [w for w in SEPARATORS.split(org) if w]
    return {skeleton("".join(words[i:j])) for i in range(len(words)) for j in range(i + 1, len(words) + 1)}


def plain(name: str) -> str:
    """Case-folded, separators dropped, no homoglyph folding: the name as an owner would spell it."""
    return SEPARATORS.sub("", name.casefold())


@lru_cache(maxsize=8192)
def skeleton(name: str) -> str:
    text = "".join(_ascii_lookalike(ch) for ch in unicodedata.normalize("NFKC", name)).casefold()
    text = SEPARATORS.sub("", text)
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
