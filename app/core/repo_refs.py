"""Other repos a repo makes its loader or its reader fetch: the report's ``references`` (DESIGN §6.2).

A PEFT adapter loads ``base_model_name_or_path`` at ``revision``; an ``auto_map`` entry
``org/name--module.Class`` makes transformers download and run that repo's code; a card's
``from_pretrained("org/name")`` is what users paste. Vetting this repo says nothing about those,
so each is listed (from ``repo-reference`` findings) for the policy to require them vetted too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Protocol

REFERENCE_RULE = "repo-reference"


@dataclass(frozen=True)
class RepoReference:
    repo: str  # `org/name` on the Hub
    revision: str | None  # as written (branch, tag or commit); None: the default branch
    path: str  # the file that names it
    via: str  # how it is reached: `adapter base model`, `auto_map AutoModel`, `from_pretrained`...
    # Loading it runs its code: remote code it supplies, the user's trust_remote_code carried to it, a kernel.
    code: bool = False

    def evidence(self) -> str:
        """The finding's evidence: one JSON object, parsed back by ``references_from``."""
        data: dict[str, object] = {"repo": self.repo, "revision": self.revision, "via": self.via}
        if self.code:
            data["code"] = True
        return json.dumps(data, sort_keys=True)


def parse_reference(path: str, evidence: str | None) -> RepoReference | None:
    """The reference a ``repo-reference`` finding's evidence names; None when it is not one."""
    try:
        data = json.loads(evidence or "")
        revision = data.get("revision")
        return RepoReference(str(data["repo"]), None if revision is None else str(revision), path, str(data["via"]),
                             data.get("code") is True)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


class _Named(Protocol):
    """A finding as the report or the policy's facts hold it."""

    @property
    def path(self) -> str: ...

    @property
    def scanner(self) -> str: ...

    @property
    def rule(self) -> str: ...

    @property
    def evidence(self) -> str | None: ...


CLOSURE_SCANNER = "load-closure"


def references_from(findings: Iterable[_Named]) -> tuple[RepoReference, ...]:
    """One entry per (repo, revision, path, via), in finding order.

    The load closure names again what the repo-references scanner found in the same file (PEFT's base
    model, `auto_map` code elsewhere): such a reference joins the entries already there for that (repo,
    revision, path), setting their `code` when it says loading the repo runs its code, instead of adding
    one more `via` for the same fetch.
    """
    found: dict[tuple[str, str | None, str], dict[str, RepoReference]] = {}  # (repo, revision, path) -> via -> ref
    for finding in findings:
        ref = parse_reference(finding.path, finding.evidence) if finding.rule == REFERENCE_RULE else None
        if ref is None:
            continue
        same = found.setdefault((ref.repo, ref.revision, ref.path), {})
        if finding.scanner == CLOSURE_SCANNER and same:
            if ref.code:
                same.update({via: replace(old, code=True) for via, old in same.items()})
            continue
        same.setdefault(ref.via, ref)
    return tuple(ref for vias in found.values() for ref in vias.values())
