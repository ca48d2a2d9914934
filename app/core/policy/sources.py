"""Which vendor owns an install source a finding names (the policy's `sources` section).

A source is what a scanner reports as where code would come from: ``github.com/owner/repo``,
``nvcr.io/nim/meta/llama-3.1-8b-instruct``, ``pypi.nvidia.com/simple``, ``anaconda.org/nvidia``.
Patterns are globs over it, compared case-folded (code hosts and registries treat owners so);
a pattern without ``*`` also covers everything below it (``pypi.nvidia.com`` → ``pypi.nvidia.com/x``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase


def source_owner(source: str | None, sources: Mapping[str, Sequence[str]]) -> str | None:
    """The org whose listed sources include ``source``, or None."""
    if not source:
        return None
    folded = source.casefold().rstrip("/")
    for org, patterns in sources.items():
        if any(_matches(folded, p.casefold()) for p in patterns):
            return org
    return None


def _matches(source: str, pattern: str) -> bool:
    if fnmatchcase(source, pattern):
        return True
    return "*" not in pattern and source.startswith(pattern.rstrip("/") + "/")


# The finding rule whose `source` an `installers` pattern can vouch for.
DOWNLOAD_AND_EXECUTE = "download-and-execute"


def installer_of(rule: str, source: str | None, installers: Mapping[str, Sequence[str]]) -> str | None:
    """The tool whose documented install script a download-and-execute finding runs, or None.

    Only a finding naming one URL has a `source`: a line that fetches several is never vouched for.
    """
    if rule != DOWNLOAD_AND_EXECUTE:
        return None
    return source_owner(source, installers)
