"""One registry of detection cases, read by tests and by `bench/detection_table.py`.

A case is a repo, built at test time (repo path -> bytes), under a family name, either hostile
(a loader following it would run attacker code) or benign (real-world shapes that must not be
rejected). To add a family, write a module in this package that calls ``register(...)`` at import
time; ``all_cases()`` imports every module here, so the bench table picks it up unchanged.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Kind = Literal["hostile", "benign"]
VendorVerdict = Literal["approve", "review"]
Files = Callable[[], dict[str, bytes]]


@dataclass(frozen=True)
class Case:
    family: str
    name: str
    kind: Kind
    files: Files  # repo-relative path -> bytes, built when called
    why: str = ""  # what a loader does with it (hostile) or why it is ordinary (benign)
    # Hostile: the hfvet rule that must fire. Benign: unused.
    rule: str | None = None
    # Benign only: the default policy's verdict for a vendor-official repo, and for `review`
    # the policy rule that must say why (never a bare "something looked odd").
    vendor: VendorVerdict | None = None
    reason: str | None = None
    # The repo id the case is published as, when who publishes it is the attack (a lookalike org): every
    # tier's column is decided under that id, not under the usual vendor-official and third-party orgs.
    publisher: str | None = None

    @property
    def key(self) -> str:
        return f"{self.family}/{self.name}"

    def write(self, folder: Path) -> Path:
        for path, data in self.files().items():
            target = folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return folder


_CASES: dict[str, Case] = {}


def register(case: Case) -> Case:
    if case.key in _CASES:
        raise ValueError(f"corpus case registered twice: {case.key}")
    _CASES[case.key] = case
    return case


def register_all(cases: Iterable[Case]) -> None:
    for case in cases:
        register(case)


def one_file(name: str, build: Callable[[], bytes]) -> Files:
    return lambda: {name: build()}


def all_cases() -> list[Case]:
    """Every registered case, after importing every corpus module of this package."""
    package = importlib.import_module(__package__ or "tests.corpus")
    for module in pkgutil.iter_modules(package.__path__):
        if module.name != "registry":
            importlib.import_module(f"{package.__name__}.{module.name}")
    return sorted(_CASES.values(), key=lambda c: (c.kind, c.family, c.name))


def families(cases: Iterable[Case]) -> dict[str, list[Case]]:
    out: dict[str, list[Case]] = {}
    for case in cases:
        out.setdefault(case.family, []).append(case)
    return out
