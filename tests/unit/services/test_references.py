"""The store's judgement of referenced repos (app/services/references.py) and what the gate makes of it."""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from app.core.findings import Severity
from app.core.pipeline import vet
from app.core.policy import load_policy, make_decide
from app.core.repo_refs import RepoReference
from app.core.scanners.repo_refs_scanner import RepoReferenceScanner
from app.db.repository import save_report
from app.db.session import Store, upgrade
from app.errors import HfvetError
from app.services.gating import GateCache, cached_gate, gate
from app.services.references import StoreJudge
from app.services.reviews import ReviewRequest, submit_review
from app.settings import Settings
from tests.fakes import MemorySource, TextScanner

DEFAULT = load_policy(Settings().resolve_policy(Path("default")))
HUB: dict[str, object] = {"endpoint": "http://127.0.0.1:9"}  # a vet from the hub (a local scan never approves)
ADAPTER, BASE = "nvidia/lora-chat", "meta-llama/base-8b"
SHA_A, SHA_B, SHA_C, SHA_D, SHA_E = (c * 40 for c in "abcde")


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "store.db"
    upgrade(f"sqlite:///{path}")
    return path


@pytest.fixture
def store(migrated: Path, tmp_path: Path) -> Iterator[Store]:
    shutil.copy(migrated, tmp_path / "store.db")  # a migrated copy: one migration per module, not per test
    opened = Store(f"sqlite:///{tmp_path / 'store.db'}")
    yield opened
    opened.close()


def stored(store: Store, repo: str, sha: str, base: tuple[str, str | None] | None = None, *,
           evil: bool = False) -> None:
    """A vet of ``repo`` at ``sha`` under the default policy; ``base``: the adapter's (repo, revision)."""
    files = {"config.json": b"{}", "README.md": b"EVIL" if evil else b"fine"}
    if base is not None:
        files["adapter_config.json"] = json.dumps({"base_model_name_or_path": base[0], "revision": base[1]}).encode()
    source = MemorySource(files, repo_id=repo, revision=sha, facts=HUB)
    report = vet(source, [RepoReferenceScanner(), TextScanner(Severity.CRITICAL)], decide=make_decide(DEFAULT))
    with store.session() as session:
        save_report(session, report, requested_revision="main", actor="test")


def ref(repo: str, revision: str | None) -> RepoReference:
    return RepoReference(repo, revision, "adapter_config.json", "adapter base model")


def count_lookups(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The repos whose reports the judge reads, in order (one lookup per commit judged)."""
    import app.services.references as references
    from app.core.review import Review
    from app.db.repository import StoredReport
    from app.db.reviews import newest_of_commit

    seen: list[str] = []

    def counting(session: Session, repo_id: str, sha: str, *,
                 lean_under: str | None = None) -> tuple[StoredReport, Review | None] | None:
        seen.append(repo_id)
        return newest_of_commit(session, repo_id, sha, lean_under=lean_under)

    monkeypatch.setattr(references, "newest_of_commit", counting)
    return seen


def no_hub(repo: str, revision: str) -> str:
    raise HfvetError(f"no hub here ({repo}@{revision})")


def test_a_pinned_approved_commit_is_approved_without_the_hub(store: Store) -> None:
    stored(store, BASE, SHA_B)
    judge = StoreJudge(store, DEFAULT, no_hub)
    [fact] = judge.of((ADAPTER, SHA_A))([ref(BASE, SHA_B)])
    assert (fact.vetted, fact.approved, fact.sha) == (True, True, SHA_B)
    assert judge.asked_hub is False


def test_a_pinned_rejected_commit_and_a_commit_never_vetted_are_not_approved(store: Store) -> None:
    stored(store, BASE, SHA_B, evil=True)  # a critical finding: rejected
    rejected, missing = StoreJudge(store, DEFAULT, no_hub).of(None)([ref(BASE, SHA_B), ref(BASE, SHA_C)])
    assert (rejected.vetted, rejected.approved) == (True, False)
    assert (missing.vetted, missing.approved, missing.sha) == (False, False, SHA_C)


def test_a_branch_or_no_revision_is_judged_at_the_head_the_hub_names(store: Store) -> None:
    stored(store, BASE, SHA_B)
    stored(store, BASE, SHA_C, evil=True)
    heads = {(BASE, "main"): SHA_B, (BASE, "v2"): SHA_C}
    asked: list[tuple[str, str]] = []

    def resolve(repo: str, revision: str) -> str:
        asked.append((repo, revision))
        return heads[(repo, revision)]

    judge = StoreJudge(store, DEFAULT, resolve)
    unpinned, tag = judge.of(None)([ref(BASE, None), ref(BASE, "v2")])
    assert (unpinned.sha, unpinned.approved) == (SHA_B, True)
    assert (tag.sha, tag.approved) == (SHA_C, False)
    judge.of((ADAPTER, SHA_A))([ref(BASE, None)])  # asked again in the same call: from the cache
    assert asked == [(BASE, "main"), (BASE, "v2")] and judge.asked_hub is True


def test_an_unresolvable_revision_is_not_approved(store: Store) -> None:
    stored(store, BASE, SHA_B)
    [fact] = StoreJudge(store, DEFAULT, no_hub).of(None)([ref(BASE, "main")])
    assert (fact.sha, fact.vetted, fact.approved) == (None, False, False)


def test_a_cycle_is_not_approved_until_a_reviewer_breaks_it(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    # nvidia/lora-chat@a references meta-llama/base-8b@b, which references nvidia/lora-chat@a back.
    stored(store, ADAPTER, SHA_A, (BASE, SHA_B))
    stored(store, BASE, SHA_B, (ADAPTER, SHA_A))
    opened = count_lookups(monkeypatch)
    [fact] = StoreJudge(store, DEFAULT, no_hub, max_depth=50).of((ADAPTER, SHA_A))([ref(BASE, SHA_B)])
    assert (fact.vetted, fact.approved) == (True, False)
    assert opened == [BASE]  # the way back to the adapter is cut at once, not followed to the depth limit
    assert gate(ADAPTER, SHA_A, store=store, policy=DEFAULT, resolve=no_hub).approved is False
    submit_review(store, DEFAULT, ReviewRequest(BASE, SHA_B, "approve", "read both", "token:r", "reviewer"))
    assert gate(ADAPTER, SHA_A, store=store, policy=DEFAULT, resolve=no_hub).approved is True


def test_a_chain_deeper_than_the_limit_is_not_approved(store: Store) -> None:
    # a -> b -> c -> d -> e, each another org's adapter base; e is a plain approved repo.
    chain = [("nvidia/a", SHA_A), ("meta-llama/b", SHA_B), ("nvidia/c", SHA_C), ("meta-llama/d", SHA_D),
             ("nvidia/e", SHA_E)]
    for (repo, sha), (base, base_sha) in itertools.pairwise(chain):
        stored(store, repo, sha, (base, base_sha))
    stored(store, *chain[-1])
    first = [ref(*chain[1])]
    assert StoreJudge(store, DEFAULT, no_hub, max_depth=4).of(chain[0])(first)[0].approved is True
    cut = StoreJudge(store, DEFAULT, no_hub, max_depth=3).of(chain[0])(first)[0]
    assert (cut.vetted, cut.approved) == (True, False)  # e, four references away, was never looked at


def test_the_gate_flips_when_the_pinned_base_is_approved_later_and_the_cache_follows(store: Store) -> None:
    stored(store, ADAPTER, SHA_A, (BASE, SHA_B))
    stored(store, BASE, SHA_B, evil=True)  # first vet of the base: rejected
    cache = GateCache()
    denied = cached_gate(cache, ADAPTER, SHA_A, store=store, policy=DEFAULT, resolve=no_hub)
    assert denied.approved is False and any("referenced-repo-elsewhere" in r for r in denied.to_dict()["reasons"])
    assert denied.asked_hub is False  # pinned: the store version alone keys the cached answer
    assert cached_gate(cache, ADAPTER, SHA_A, store=store, policy=DEFAULT, resolve=no_hub) is denied
    stored(store, BASE, SHA_B)  # a re-vet of the same base commit (e.g. a fixed scanner) approves it
    approved = cached_gate(cache, ADAPTER, SHA_A, store=store, policy=DEFAULT, resolve=no_hub)
    assert approved.approved is True and approved.to_dict()["decided_by"].startswith("policy default")


def test_an_answer_that_resolved_a_branch_is_not_cached(store: Store) -> None:
    stored(store, ADAPTER, SHA_A, (BASE, None))
    stored(store, BASE, SHA_B)
    head = {"sha": SHA_B}
    cache = GateCache()

    def resolve(repo: str, revision: str) -> str:
        return head["sha"]

    first = cached_gate(cache, ADAPTER, SHA_A, store=store, policy=DEFAULT, resolve=resolve)
    assert first.approved is True and first.asked_hub is True
    head["sha"] = SHA_C  # the base's main moved to a commit nobody vetted; the store did not change
    assert cached_gate(cache, ADAPTER, SHA_A, store=store, policy=DEFAULT, resolve=resolve).approved is False


def test_whether_a_verdict_depends_on_references_is_worked_out_once_per_report(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    import app.services.outcomes as outcomes

    source = MemorySource({"README.md": b"---\nbase_model: meta-llama/Llama-3.1-8B\n---\n"}, repo_id="nvidia/quant",
                          revision=SHA_A, facts=HUB)
    report = vet(source, [RepoReferenceScanner()], decide=make_decide(DEFAULT))
    assert report.references and report.verdict.value == "approve"
    with store.session() as session:
        save_report(session, report, requested_revision="main", actor="test")
    checked: list[object] = []
    real = outcomes.depends_on_references

    def counting(*args: object, **kwargs: object) -> bool:
        checked.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(outcomes, "depends_on_references", counting)
    for _ in range(3):  # a card mention: the recorded verdict stands, and the check is not repeated
        assert gate("nvidia/quant", SHA_A, store=store, policy=DEFAULT, resolve=no_hub).approved is True
    assert len(checked) == 1
