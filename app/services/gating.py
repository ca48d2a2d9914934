"""The deploy gate: may this repo at this revision be pulled? Answered under the active policy."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from app.core.gate import Answer, Approved, Denied, Moved, NotVetted, Outcome, decide_gate, is_commit
from app.core.policy import LoadedPolicy, PolicyError, evaluate, facts_from_report_dict, load_policy
from app.core.ports import SourceError
from app.core.review import Review, apply_review
from app.db.repository import StoredReport, manifest_of, reports_for, store_version
from app.db.reviews import effective_reviews
from app.db.session import Store
from app.errors import HfvetError, InputError
from app.settings import Settings

Resolver = Callable[[str, str], str]  # (repo id, branch or tag) -> 40-hex commit on the hub now


class GateError(HfvetError):
    """The gate cannot answer (the hub is unreachable for a branch): it fails closed."""


@dataclass(frozen=True)
class GateResult:
    repo: str
    requested: str | None
    answer: Answer
    policy: LoadedPolicy
    files: list[dict[str, Any]]  # the approved commit's manifest; empty unless approved

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


def active_policy(settings: Settings) -> LoadedPolicy:
    if str(settings.policy) == "interim":  # vetting.INTERIM: a per-command choice, never the active policy
        raise InputError("HFVET_POLICY=interim is not a trust policy: the gate needs one (e.g. default)")
    try:
        return load_policy(settings.resolve_policy(settings.policy))
    except PolicyError as exc:
        raise InputError(f"the active policy (HFVET_POLICY={settings.policy}) does not load: {exc}") from exc


def gate(repo: str, revision: str | None, *, store: Store, policy: LoadedPolicy, resolve: Resolver) -> GateResult:
    """The gate's answer for ``repo`` at ``revision`` (None: the newest approved revision)."""
    with store.session() as session:
        stored = reports_for(session, repo)
        reviews = effective_reviews(session, repo, stored) if stored else {}
    head = _head(repo, revision, resolve) if stored or revision else None
    answer = decide_gate(revision, head, [outcome(r, policy, reviews.get(r.id)) for r in stored])
    files: list[dict[str, Any]] = []
    if isinstance(answer, Approved):
        with store.session() as session:
            files = manifest_of(session, repo, answer.outcome.sha) or []
    return GateResult(repo, revision, answer, policy, files)


class GateCache:
    """Answers for exact commits, kept while the store is unchanged (no report or review added since).

    Only exact commits are cached: a branch's answer also depends on where the hub says it is now.
    """

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._entries: OrderedDict[tuple[str, str, str], tuple[tuple[int, int], GateResult]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str, str], version: tuple[int, int]) -> GateResult | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != version:
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def put(self, key: tuple[str, str, str], version: tuple[int, int], result: GateResult) -> None:
        with self._lock:
            self._entries[key] = (version, result)
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)


def cached_gate(cache: GateCache, repo: str, revision: str | None, *, store: Store, policy: LoadedPolicy,
                resolve: Resolver) -> GateResult:
    """gate(), answered from ``cache`` for an exact commit when nothing was stored since it was computed."""
    if not is_commit(revision):
        return gate(repo, revision, store=store, policy=policy, resolve=resolve)
    key = cache_key(repo, revision or "", policy)
    with store.engine.connect() as conn:
        version = store_version(conn)  # read first: a write racing the gate below only makes the entry stale
    hit = cache.get(key, version)
    if hit is not None:
        return hit
    result = gate(repo, revision, store=store, policy=policy, resolve=resolve)
    cache.put(key, version, result)
    return result


def cache_key(repo: str, sha: str, policy: LoadedPolicy) -> tuple[str, str, str]:
    """GateCache's key, for cached_gate and for the fast path that reads the cache (app.api.fastgate)."""
    return (repo, sha, policy.sha256)


def outcome(report: StoredReport, policy: LoadedPolicy, review: Review | None = None) -> Outcome:
    """The stored report's effective outcome: its policy outcome as its newest review changed it."""
    if review is not None and review.decision == "approve" and is_local_scan(report):
        review = None  # nobody can vouch that local bytes are the hub's commit: only a reject applies
    return apply_review(policy_outcome(report, policy), review)


def is_local_scan(report: StoredReport) -> bool:
    """Recorded by `hfvet scan` of local files: never checked against the hub's commit."""
    return not (report.document.get("identity") or {}).get("endpoint")


def policy_outcome(report: StoredReport, policy: LoadedPolicy) -> Outcome:
    """The stored report's outcome, re-decided when it was recorded under another policy."""
    if report.policy_sha256 == policy.sha256:
        verdict = report.verdict
        reasons = [f"{r.get('rule')}: {r.get('message')}" for r in report.document.get("reasons") or []]
        by = f"policy {report.policy_name}"
    else:
        decision = evaluate(policy, facts_from_report_dict(report.document, f"report {report.id}"))
        verdict = decision.verdict.value
        reasons = [f"{r.rule}: {r.message}" for r in decision.reasons]
        by = f"policy {policy.name} (re-decided from the findings recorded under {report.policy_name})"
    approved = verdict == "approve"
    if approved and is_local_scan(report):
        # A local scan's bytes were never checked against the hub's commit: it cannot vouch for it.
        approved = False
        reasons.append(LOCAL_SCAN)
    return Outcome(report.sha, approved, verdict, tuple(reasons), report.decided_at, by)


LOCAL_SCAN = "local-scan: recorded by `hfvet scan`; only `hfvet vet` from the hub approves a commit"


def _head(repo: str, revision: str | None, resolve: Resolver) -> str | None:
    if revision is None:
        return None
    if is_commit(revision):
        return revision  # an exact commit needs no hub
    try:
        return resolve(repo, revision)
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
                "reasons": [f"not vetted: run `hfvet vet {result.repo}"
                            + (f" --revision {result.requested}`" if result.requested else "`")]}
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
