"""The links and install-instruction corpus (tests/unit/core/scanners/links_corpus.py), registered
as the `links-install` family so the side-by-side table shows it.

Its attacks are written against a third-party repo; the table also shows them under a vendor org.
Only the benign shapes whose expectation is stated for the vendor-official repo are registered
here (the others are asserted, at their own tier, by test_links_corpus.py).
"""

from __future__ import annotations

from tests.corpus.registry import Case, register_all
from tests.unit.core.scanners.links_corpus import ATTACKS, BENIGN, VENDOR, Expected


def _files(files: dict[str, str]) -> dict[str, bytes]:
    return {path: text.encode() for path, text in files.items()}


def _hostile(name: str, files: dict[str, str], expected: Expected) -> Case:
    return Case("links-install", name, "hostile", lambda: _files(files),
                why="an install or download instruction a user or runtime follows",
                rule=min(expected.rules) if expected.rules else None)


def _benign(name: str, files: dict[str, str], expected: Expected) -> Case:
    vendor = "approve" if expected.verdict == "approve" else "review"
    return Case("links-install-benign", name, "benign", lambda: _files(files),
                why="a real vendor repo shape", vendor=vendor)


register_all(_hostile(*case) for case in ATTACKS)
register_all(_benign(*case) for case in BENIGN if case[2].repo == VENDOR)
