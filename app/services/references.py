"""Are the repos a repo references vetted and approved? The store's answer, for the policy's `referenced_repos`.

A reference pinned to a commit is judged at that commit; a branch, a tag or no revision (the
default branch, `main`) at the commit the hub names now. Judged means the gate's own rule: the
commit's stored reports re-decided under the policy, reviews applied, and their own references
judged in turn. Whatever cannot be known is not approved: an unresolvable revision, a cycle
(A references B references A), a chain deeper than ``MAX_DEPTH``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from app.core.gate import Approved, decide_gate
from app.core.ids import is_commit
from app.core.policy import LoadedPolicy
from app.core.policy.facts import ReferenceFact, ReferenceJudge
from app.core.ports import SourceError
from app.core.repo_refs import RepoReference
from app.db.reviews import newest_of_commit
from app.db.session import Store
from app.errors import HfvetError
from app.services.outcomes import Resolver, outcome

MAX_DEPTH = 3  # references of references of references; deeper ones are not approved
DEFAULT_BRANCH = "main"  # what a loader fetches when a reference names no revision
Commit = tuple[str, str]  # (repo id, 40-hex sha)
DEFAULT_HUB_BUDGET = 64  # branch and tag resolutions one answer may make (HFVET_GATE_HUB_BUDGET)


class Cancelled(HfvetError):
    """The answer is no longer wanted (the client left, the server is stopping): resolving stopped."""


def _never() -> bool:
    return False


@dataclass(frozen=True)
class Bounds:
    """The work one answer may do: ``budget`` branch or tag resolutions (None: no cap), and ``cancelled``,
    asked before each, which ends the answer (``Cancelled``) once the caller no longer wants it."""

    budget: int | None = DEFAULT_HUB_BUDGET
    cancelled: Callable[[], bool] = _never


class StoreJudge:
    """Judges references against the store, once per (repo, commit) for the life of one call (a vet, a gate).

    At most ``bounds.budget`` distinct branches and tags are resolved, whether the hub or a cache
    answers (so the answer does not depend on what happens to be cached); past it a reference is
    not resolved (not approved) and ``over_budget`` counts it: the gate then refuses the answer.
    """

    def __init__(self, store: Store, policy: LoadedPolicy, resolve: Resolver, *, max_depth: int = MAX_DEPTH,
                 bounds: Bounds | None = None) -> None:
        self._store, self._policy, self._resolve, self._max_depth = store, policy, resolve, max_depth
        self._bounds = bounds or Bounds()
        self._heads: dict[tuple[str, str], str | None] = {}
        self._judged: dict[Commit, tuple[bool, bool]] = {}
        self._cuts = 0  # cycles and depth limits met: a result computed across one is not cached
        self.asked_hub = False  # a branch or tag was resolved (or failed): the answer holds only for now
        self.over_budget = 0  # references left unresolved because the budget was spent
        self.read_repos: set[str] = set()  # whose reports and reviews were read: what the answer depends on

    @property
    def budget(self) -> int | None:
        return self._bounds.budget

    def of(self, referrer: Commit | None) -> ReferenceJudge:
        """The judge of ``referrer``'s references (a chain leading back to it is a cycle)."""
        trail = (referrer,) if referrer else ()
        return lambda references: self.judge(references, trail, 1)

    def judge(self, references: Sequence[RepoReference], trail: tuple[Commit, ...], level: int) -> list[ReferenceFact]:
        wanted = dict.fromkeys((r.repo, r.revision) for r in references)
        return [self._fact(repo, revision, trail, level) for repo, revision in wanted]

    def _fact(self, repo: str, revision: str | None, trail: tuple[Commit, ...], level: int) -> ReferenceFact:
        sha = self._sha(repo, revision)
        if sha is None:
            return ReferenceFact(repo=repo, revision=revision)
        vetted, approved = self._commit(repo, sha, trail, level)
        return ReferenceFact(repo=repo, revision=revision, sha=sha, vetted=vetted, approved=approved)

    def _sha(self, repo: str, revision: str | None) -> str | None:
        if is_commit(revision):
            return revision
        key = (repo, revision or DEFAULT_BRANCH)
        if key not in self._heads:
            if self._bounds.cancelled():
                raise Cancelled(f"stopped before resolving {repo}@{key[1]}: the answer is no longer wanted")
            budget = self._bounds.budget
            if budget is not None and len(self._heads) >= budget:
                self.over_budget += 1
                return None  # not resolved, not approved; the gate refuses the whole answer
            self.asked_hub = True
            try:
                self._heads[key] = self._resolve(*key)
            except (HfvetError, SourceError):
                self._heads[key] = None  # unresolvable: not approved
        return self._heads[key]

    def _commit(self, repo: str, sha: str, trail: tuple[Commit, ...], level: int) -> tuple[bool, bool]:
        """(vetted, approved) of one commit, as the gate would answer for it."""
        key = (repo, sha)
        if key in trail or level > self._max_depth:
            self._cuts += 1
            return (False, False)
        if key in self._judged:
            return self._judged[key]
        cuts = self._cuts
        self.read_repos.add(repo)
        with self._store.session() as session:
            newest = newest_of_commit(session, repo, sha, lean_under=self._policy.sha256)

        def deeper(refs: Sequence[RepoReference]) -> list[ReferenceFact]:
            return self.judge(refs, (*trail, key), level + 1)

        outcomes = [] if newest is None else [outcome(newest[0], self._policy, newest[1], deeper)]
        result = (newest is not None, isinstance(decide_gate(sha, sha, outcomes), Approved))
        if self._cuts == cuts:  # an answer cut short by a cycle or the depth limit depends on the path taken
            self._judged[key] = result
        return result


class HubNotAsked(HfvetError):
    """A listing judges references by the store alone: asking the hub per row would make a page slow."""


def _no_hub(repo: str, revision: str) -> str:
    raise HubNotAsked(f"{repo}@{revision}: a listing does not resolve branches on the hub; the gate does")


def store_only_judge(store: Store, policy: LoadedPolicy) -> StoreJudge:
    """The judge of listings and pages: pinned references as the store says, branches not approved (fail closed).

    The gate resolves a referenced branch on the hub, so a page may show a repo as not deployable
    that `GET /gate` approves; never the other way round.
    """
    return StoreJudge(store, policy, _no_hub)

