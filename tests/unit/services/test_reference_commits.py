"""reference_commits: what `POST /vet?with_references=1` resolves and queues, bounded before the hub is asked."""

from __future__ import annotations

import pytest

from app.core.repo_refs import MAX_REFERENCES
from app.services.vets import TooManyReferences, reference_commits

SHA = "a" * 40


def report_naming(count: int) -> dict[str, object]:
    return {"repo": "org/self", "references": [{"repo": f"org/r{i}", "revision": None} for i in range(count)]}


def test_each_distinct_reference_is_resolved_at_its_branch() -> None:
    asked: list[tuple[str, str]] = []

    def resolve(repo: str, revision: str) -> str:
        asked.append((repo, revision))
        return SHA

    wanted, unresolved = reference_commits(report_naming(3) | {"references": [
        {"repo": "org/r0"}, {"repo": "org/r0", "revision": "main"}, {"repo": "org/self"}, {"repo": "org/r1"}]},
        resolve)
    assert wanted == [("org/r0", "main", SHA), ("org/r1", "main", SHA)]
    assert unresolved == [] and asked == [("org/r0", "main"), ("org/r1", "main")]


def test_more_references_than_one_request_may_resolve_are_refused_before_the_hub_is_asked() -> None:
    asked: list[str] = []

    def resolve(repo: str, revision: str) -> str:
        asked.append(repo)
        return SHA

    with pytest.raises(TooManyReferences, match=f"names {MAX_REFERENCES + 1} other repos"):
        reference_commits(report_naming(MAX_REFERENCES + 1), resolve)
    assert asked == []
    wanted, _ = reference_commits(report_naming(MAX_REFERENCES), resolve)
    assert len(wanted) == MAX_REFERENCES == len(asked)
