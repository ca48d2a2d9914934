"""The deploy gate: may this repo at this revision be pulled? Answered under the active policy."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from functools import cached_property, partial
from typing import Any

from app.core.gate import Answer, Approved, Denied, Moved, NotVetted, Outcome, decide_gate
from app.core.ids import is_commit
from app.core.manifest_json import ManifestDoc
from app.core.policy import LoadedPolicy
from app.core.policy.engine import reads_references
from app.core.ports import SourceError
from app.core.repo_refs import RepoReference
from app.db.repository import MaybeLean, manifest_of, reports_for
from app.db.reviews import effective_reviews, newest_of_commit
from app.db.session import Store
from app.db.version import repos_written_since, store_version
from app.errors import HfvetError
from app.services.commits import similar_repos
from app.services.deployable import deployable
from app.services.outcomes import Resolver, outcome
from app.services.references import Bounds, StoreJudge
from app.sources.hub_errors import HubRepoNotFound, HubRevisionNotFound


class GateError(HfvetError):
    """The gate cannot answer (the hub is unreachable for a branch): it fails closed.

    A branch, tag or repo the hub says does not exist is not this: its HubRevisionNotFound or
    HubRepoNotFound goes up as it is (the API's 404, as POST /vet answers it).
    """


@dataclass(frozen=True)
class GateResult:
    repo: str
    requested: str | None
    answer: Answer
    policy: LoadedPolicy
    files: ManifestDoc  # the approved commit's stored manifest (app.core.manifest_json); empty unless approved
    asked_hub: bool = False  # a referenced repo's branch was resolved: the answer holds only for now
    depends_on: frozenset[str] = frozenset()  # the repos whose reports and reviews the answer read
    suggestions: tuple[str, ...] = ()  # not vetted, and the repo is not in the store: vetted repos named alike
    warnings: tuple[str, ...] = ()  # said beside the answer, never changing it (moved_warning)

    @property
    def approved(self) -> bool:
        return isinstance(self.answer, Approved)

    def to_dict(self) -> dict[str, Any]:
        return gate_document(self)

    @property
    def status(self) -> str:
        """approved, denied, not-vetted or moved: the answer's `status` and the metric's label."""
        if isinstance(self.answer, Moved):
            return "moved"
        if isinstance(self.answer, NotVetted):
            return "not-vetted"
        return "approved" if self.approved else "denied"

    @cached_property
    def body(self) -> bytes:
        """The JSON answer, rendered once per result (cached answers are served again and again)."""
        return json.dumps(self.to_dict(), separators=(",", ":")).encode()


def gate(repo: str, revision: str | None, *, store: Store, policy: LoadedPolicy, resolve: Resolver,
         bounds: Bounds | None = None, references: Resolver | None = None) -> GateResult:
    """The gate's answer for ``repo`` at ``revision`` (None: the newest approved revision).

    Referenced repos are judged now, against the store (and the hub for their branches), so a base
    model approved after this repo's vet counts without a re-vet. ``bounds`` caps the branches and
    tags one answer resolves (past the budget the commit is refused) and stops it when cancelled.
    ``resolve`` names the asked branch's head, always as the hub says it now; ``references`` (default:
    ``resolve``) the referenced repos' branches, which the server answers from a short-lived shared cache.
    """
    if is_commit(revision):
        return gate_commit(repo, revision or "", store=store, policy=policy, resolve=resolve, bounds=bounds,
                           references=references)
    with store.session() as session:
        stored = reports_for(session, repo, lean_under=policy.sha256)  # no findings decoded unless needed
        reviews = effective_reviews(session, repo, stored) if stored else {}
    head = _head(repo, revision, resolve) if stored or revision else None
    judge = StoreJudge(store, policy, references or resolve, bounds=bounds)
    outcomes = [_bounded(judge, r, policy, partial(outcome, r, policy, reviews.get(r.id), judge.of((repo, r.sha))))
                for r in stored]
    answer = decide_gate(revision, head, outcomes)
    files: ManifestDoc = []
    if isinstance(answer, Approved):
        with store.session() as session:
            files = manifest_of(session, repo, answer.outcome.sha) or []
    warnings = () if revision is not None else deployable(stored, outcomes).warnings
    return _suggesting(store, GateResult(repo, revision, answer, policy, files, judge.asked_hub,
                                         warnings=warnings))


def gate_commit(repo: str, sha: str, *, store: Store, policy: LoadedPolicy, resolve: Resolver,
                bounds: Bounds | None = None, references: Resolver | None = None) -> GateResult:
    """gate() for an exact commit: only its newest report counts (decide_gate), so only that one is read.

    A repo re-vetted hundreds of times costs one report per answer, not hundreds (the soak showed the
    uncached answer growing with every vet the store kept).
    """
    with store.session() as session:
        newest = newest_of_commit(session, repo, sha, lean_under=policy.sha256)
    judge = StoreJudge(store, policy, references or resolve, bounds=bounds)
    outcomes = [] if newest is None else [
        _bounded(judge, newest[0], policy, partial(outcome, newest[0], policy, newest[1], judge.of((repo, sha))))]
    answer = decide_gate(sha, sha, outcomes)
    files: ManifestDoc = []
    if isinstance(answer, Approved):
        with store.session() as session:
            files = manifest_of(session, repo, sha) or []
    return _suggesting(store, GateResult(repo, sha, answer, policy, files, judge.asked_hub,
                                         frozenset({repo, *judge.read_repos})))


def _suggesting(store: Store, result: GateResult) -> GateResult:
    """``result``, with the did-you-mean of a repo the store has no report of (app.services.commits)."""
    if not isinstance(result.answer, NotVetted):
        return result
    return replace(result, suggestions=tuple(similar_repos(store, result.repo, result.policy)))


OVER_BUDGET = "gate-hub-budget"


def _bounded(judge: StoreJudge, report: MaybeLean, policy: LoadedPolicy, decide: Callable[[], Outcome]) -> Outcome:
    """``decide()``'s outcome, or a refusal naming the budget when ``report`` names more references than
    the budget (refused before any is judged: judging 3,000 costs seconds of CPU even with no hub call)
    or when judging its references, and theirs, went past it.

    References left unresolved count as not approved, but a policy need not be monotone in them, and
    an answer that did not look at everything it names is not an answer: fail closed, say why.
    """
    budget = judge.budget
    if budget is not None and reads_references(policy) and _distinct(report.references) > budget:
        return _over_budget(Outcome(report.sha, False, report.verdict, (), report.decided_at, ""), budget)
    before = judge.over_budget
    decided = decide()
    return decided if judge.over_budget == before else _over_budget(decided, budget)


def _distinct(references: Sequence[RepoReference]) -> int:
    return len({(r.repo, r.revision) for r in references})


def _over_budget(decided: Outcome, budget: int | None) -> Outcome:
    reason = (f"{OVER_BUDGET}: references exceed the gate's hub budget of {budget} per answer "
              "(HFVET_GATE_HUB_BUDGET), so they were not all judged and the commit is not approved; pin fewer "
              "references (a vet of such a repo reports too-many-references)")
    return replace(decided, approved=False, verdict="reject", reasons=(reason, *decided.reasons),
                   decided_by="gate (hub budget)")


@dataclass(frozen=True)
class Stale:
    """A cached answer computed (or last re-stamped) at ``since``, an older version than the store's now."""

    since: tuple[int, int]  # ask the repos written after this version (GateCache.restamp)
    result: GateResult


class GateCache:
    """Answers for exact commits, each stamped with the store version and the UTC day it holds for.

    Only exact commits are cached: a branch's answer also depends on where the hub says it is now,
    and so does an answer that judged a referenced repo at its branch (``GateResult.asked_hub``).
    A pinned reference's approval changes only with a report or a review, which moves the version;
    the day, because a re-decision applies waivers as of today. When the version moved, an answer none
    of whose repos (``GateResult.depends_on``) got a report or review since is re-stamped: ``lookup`` says
    which versions to ask about, ``restamp`` decides; cached_gate and app.api.routes.gate_fast only do the asking.
    """

    def __init__(self, size: int = 4096, max_bytes: int = 8 * 1024 * 1024) -> None:
        self._size = size
        # Bounded in bytes too: an approved answer carries its commit's manifest (a 200-file repo's body is
        # ~17 KiB, ~80 KiB resident with the parsed manifest), so 4,096 of them grew the API by hundreds of MiB
        # as distinct commits were vetted (bench/gate_cache_memory.py). Counted as the answers' JSON bodies:
        # 8 MiB of them is ~40 MiB resident.
        self._max_bytes = max_bytes
        self._bytes = 0
        self._entries: OrderedDict[tuple[str, str, str], tuple[tuple[int, int], date, GateResult]] = OrderedDict()
        self._lock = threading.Lock()
        self._stripes = tuple(threading.Lock() for _ in range(64))

    def computing(self, key: tuple[str, str, str]) -> threading.Lock:
        """Held while one request computes ``key``'s answer: the others that missed wait, then find it.

        Without it, every connection that asks in the moment after a vet lands computes the same answer
        at once (on the API's threads and GIL). Striped: a bounded set of locks, shared by unrelated keys.
        """
        return self._stripes[hash(key) % len(self._stripes)]

    def get(self, key: tuple[str, str, str], version: tuple[int, int]) -> GateResult | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != version or entry[1] != _today():
                return None
            self._entries.move_to_end(key)
            return entry[2]

    def lookup(self, key: tuple[str, str, str], version: tuple[int, int]) -> GateResult | Stale | None:
        """``key``'s answer at ``version`` (a hit); else its answer of today at an older version, which holds
        again if none of its repos was written since (``Stale``: ask, then ``restamp``); else None (a miss).

        The one rule both callers follow (cached_gate, and app.api.routes.gate_fast in front of the route); they
        differ only in how they ask the store which repos were written since.
        """
        hit = self.get(key, version)
        if hit is not None:
            return hit
        with self._lock:
            entry = self._entries.get(key)
        # Not newer than ``version`` in either part (ids only grow: otherwise it is another store's answer).
        if entry is None or entry[1] != _today() or not (entry[0][0] <= version[0] and entry[0][1] <= version[1]):
            return None
        return Stale(entry[0], entry[2])

    def restamp(self, key: tuple[str, str, str], version: tuple[int, int], stale: Stale,
                written: set[str]) -> GateResult | None:
        """``stale``'s answer, kept again at ``version``, if no repo it read is among ``written`` (the repos
        that got a report or a review since ``stale.since``); None when it has to be computed again."""
        if not written.isdisjoint(stale.result.depends_on):
            return None
        self.put(key, version, stale.result)
        return stale.result

    def put(self, key: tuple[str, str, str], version: tuple[int, int], result: GateResult) -> None:
        """Keep ``result``, dropping the least recently used answers past the count or the byte bound (an
        answer bigger than the byte bound alone is not kept)."""
        if len(result.body) > self._max_bytes:  # rendered here, outside the lock: every answer served needs it
            return
        with self._lock:
            replaced = self._entries.pop(key, None)
            self._bytes += len(result.body) - (0 if replaced is None else len(replaced[2].body))
            self._entries[key] = (version, _today(), result)
            while len(self._entries) > self._size or self._bytes > self._max_bytes:
                self._bytes -= len(self._entries.popitem(last=False)[1][2].body)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def bytes(self) -> int:
        """The JSON bodies of the answers kept (what the byte bound counts)."""
        return self._bytes


def cached_gate(cache: GateCache, repo: str, revision: str | None, *, store: Store, policy: LoadedPolicy,
                resolve: Resolver, bounds: Bounds | None = None, references: Resolver | None = None) -> GateResult:
    """gate(), answered from ``cache`` for an exact commit when nothing was stored since it was computed."""
    if not is_commit(revision):
        return gate(repo, revision, store=store, policy=policy, resolve=resolve, bounds=bounds,
                    references=references)
    key = cache_key(repo, revision or "", policy)
    with store.engine.connect() as conn:
        version = store_version(conn)  # read first: a write racing the gate below only makes the entry stale
    found = cache.lookup(key, version)
    if isinstance(found, GateResult):
        return found
    with cache.computing(key):
        found = cache.lookup(key, version)  # another request computed it while this one waited
        if isinstance(found, GateResult):
            return found
        result = None if found is None else _restamped(cache, key, version, found, store)
        if result is None:
            result = gate_commit(repo, revision or "", store=store, policy=policy, resolve=resolve, bounds=bounds,
                                 references=references)
            if not result.asked_hub and not result.suggestions:  # a did-you-mean changes with other repos' vets
                cache.put(key, version, result)
    return result


def _restamped(cache: GateCache, key: tuple[str, str, str], version: tuple[int, int], stale: Stale,
               store: Store) -> GateResult | None:
    """``stale``'s answer if no repo it read got a report or a review since (GateCache.restamp).

    Vets of other repos move the store version too: without this, every vet landing anywhere sent
    each cached commit's next request down the full path. The repos written since are asked with no
    upper bound, so a write racing this one makes the answer recomputed, never kept.
    """
    with store.engine.connect() as conn:
        written = repos_written_since(conn, stale.since)
    return cache.restamp(key, version, stale, written)


def _today() -> date:
    return datetime.now(UTC).date()


def cache_key(repo: str, sha: str, policy: LoadedPolicy) -> tuple[str, str, str]:
    """GateCache's key, for cached_gate and for the fast path that reads the cache (app.api.routes.gate_fast)."""
    return (repo, sha, policy.sha256)


def _head(repo: str, revision: str | None, resolve: Resolver) -> str | None:
    if revision is None:
        return None
    if is_commit(revision):
        return revision  # an exact commit needs no hub
    try:
        return resolve(repo, revision)
    except (HubRevisionNotFound, HubRepoNotFound):
        raise  # the hub answered: nothing by that name, which is no outage
    except (HfvetError, SourceError) as exc:
        raise GateError(f"cannot resolve {repo}@{revision} on the hub, so it is not approved: {exc}") from exc


def gate_document(result: GateResult) -> dict[str, Any]:
    """The gate's answer as JSON (the CLI's --format json and, later, GET /gate)."""
    answer = result.answer
    doc: dict[str, Any] = {"repo": result.repo, "requested": result.requested, "approved": result.approved,
                           "policy": {"name": result.policy.name, "sha256": result.policy.sha256}}
    if isinstance(answer, Approved | Denied):
        o = answer.outcome
        doc |= {"revision": o.sha, "verdict": o.verdict, "reasons": list(o.reasons),
                "decided_at": o.decided_at.isoformat(), "decided_by": o.decided_by}
    if isinstance(answer, Approved):
        doc |= {"files": result.files, "pins": pins(result.repo, answer.outcome.sha)}
    elif isinstance(answer, Moved):
        doc |= {"head": answer.head, "newest_approved": answer.newest_approved.sha,
                "reasons": [f"{result.requested} is at {answer.head}, which is not vetted; the newest approved "
                            f"commit is {answer.newest_approved.sha}"]}
    elif isinstance(answer, NotVetted):
        doc |= {"revision": answer.revision,
                "reasons": [*([f"did you mean {' or '.join(result.suggestions)}?"] if result.suggestions else []),
                            f"not vetted: run `hfvet vet {result.repo}"
                            + (f" --revision {result.requested}`" if result.requested else "`")]}
    if result.warnings:
        doc["warnings"] = list(result.warnings)
    doc["status"] = result.status
    return doc


def pins(repo: str, sha: str) -> dict[str, str]:
    """Ready-to-paste ways to pull exactly this commit."""
    return {
        "vllm": f"vllm serve {repo} --revision {sha}",
        "sglang": f"python -m sglang.launch_server --model-path {repo} --revision {sha}",
        "huggingface_hub": f"snapshot_download({repo!r}, revision={sha!r})",
        "offline": f"HF_HUB_OFFLINE=1, with models--{repo.replace('/', '--')}/snapshots/{sha} in the HF cache",
    }
