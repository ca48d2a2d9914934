"""Other repos a repo makes its loader or its reader fetch: the report's ``references`` (DESIGN §6.2).

A PEFT adapter loads ``base_model_name_or_path`` at ``revision``; an ``auto_map`` entry
``org/name--module.Class`` makes transformers download and run that repo's code; a card's
``from_pretrained("org/name")`` is what users paste. Vetting this repo says nothing about those,
so each is listed (from ``repo-reference`` findings) for the policy to require them vetted too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from app.core.findings import Finding, Severity
from app.core.ids import is_commit

REFERENCE_RULE = "repo-reference"
TOO_MANY_RULE = "too-many-references"
# Distinct (repo, revision) pairs a report may name and still be judged whole: each is a store read at
# every gate answer, and a branch or tag a hub resolution (the gate's HFVET_GATE_HUB_BUDGET is 64 too).
MAX_REFERENCES = 64


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


def too_many_references(references: Sequence[RepoReference], scanner: str,
                        limit: int = MAX_REFERENCES) -> list[Finding]:
    """A high finding when ``references`` name more than ``limit`` distinct (repo, revision) pairs.

    Such a list is more than the policy can judge at a gate answer (issue 25: 3,000 `custom_pipelines`
    entries made every anonymous answer 3,000 hub requests); no loader needs it. It is put on the
    file that names the first pair past the limit.
    """
    pairs: dict[tuple[str, str | None], RepoReference] = {}
    for ref in references:
        pairs.setdefault((ref.repo, ref.revision), ref)
    if len(pairs) <= limit:
        return []
    first_past = list(pairs.values())[limit]
    unpinned = sum(1 for ref in pairs.values() if not is_commit(ref.revision))
    return [Finding(first_past.path, scanner, TOO_MANY_RULE, Severity.HIGH,
                    f"the repo names {len(pairs)} other repos and revisions ({unpinned} by branch, tag or none), "
                    f"more than the {limit} a gate answer judges: it cannot be judged whole",
                    evidence=json.dumps({"references": len(pairs), "unpinned": unpinned, "limit": limit}))]
