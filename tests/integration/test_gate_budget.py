"""The gate's bounds in process: the shared resolver (single flight, TTLs, the store's rows shared by
replicas), the hub budget reached through references of references, and cancellation."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from app.core.pipeline import vet
from app.core.policy import LoadedPolicy, load_policy, make_decide
from app.core.scanners.repo_refs_scanner import RepoReferenceScanner
from app.db.repository import save_report
from app.db.session import Store
from app.services.gating import gate_commit
from app.services.hub_resolutions import SharedResolver, Unresolvable
from app.services.references import Bounds, Cancelled
from app.settings import Settings
from tests.fakes import CountingResolver, FakeClock, MemorySource

HUB = {"endpoint": "http://127.0.0.1:9"}
ADAPTER, ADAPTER_SHA = "nvidia/lora", "a" * 40
BASE, BASE_SHA = "tinyco/base", "b" * 40
RESOLVED = "c" * 40  # what the counting hub answers for every repo


@pytest.fixture
def policy() -> LoadedPolicy:
    return load_policy(Settings().resolve_policy(Path("default")))


def test_requests_asking_at_once_make_one_hub_call(store: Store) -> None:
    hub = CountingResolver(RESOLVED)
    hub.gate.clear()
    shared = SharedResolver(hub, store, ttl=60, failure_ttl=10)
    with ThreadPoolExecutor(8) as pool:
        asked = [pool.submit(shared, "org/repo", "main") for _ in range(8)]
        hub.gate.set()
        assert {f.result() for f in asked} == {RESOLVED}
    assert hub.calls == 1


def test_a_resolution_is_reused_for_the_ttl_and_a_failure_for_its_own(store: Store) -> None:
    hub, clock = CountingResolver(RESOLVED), FakeClock()
    shared = SharedResolver(hub, None, ttl=60, failure_ttl=10, clock=clock)
    assert shared("org/repo", "main") == shared("org/repo", "main")
    clock.now += 59
    shared("org/repo", "main")
    assert hub.calls == 1
    clock.now += 2
    shared("org/repo", "main")
    assert hub.calls == 2
    hub.fail = True
    for _ in range(3):
        with pytest.raises(Unresolvable, match="no such repo"):
            shared("org/gone", "main")
    assert hub.calls == 3  # a failing hub is asked once per failure TTL
    clock.now += 11
    with pytest.raises(Unresolvable):
        shared("org/gone", "main")
    assert hub.calls == 4


def save(store: Store, policy: LoadedPolicy, repo: str, sha: str, files: dict[str, bytes]) -> None:
    source = MemorySource(files, repo_id=repo, revision=sha, facts=HUB)
    report = vet(source, [RepoReferenceScanner()], decide=make_decide(policy))
    with store.session() as session:
        save_report(session, report, requested_revision="main", actor="test")


def adapter_on_a_base_naming(store: Store, policy: LoadedPolicy, n: int) -> None:
    """ADAPTER pinned on BASE@BASE_SHA, whose own config names ``n`` repos by branch."""
    save(store, policy, ADAPTER, ADAPTER_SHA, {"adapter_config.json": json.dumps(
        {"peft_type": "LORA", "base_model_name_or_path": BASE, "revision": BASE_SHA}).encode()})
    pipelines = {f"t{i}": f"org{i}/pipe--p.P" for i in range(n)}
    save(store, policy, BASE, BASE_SHA, {"config.json": json.dumps({"custom_pipelines": pipelines}).encode()})


def test_references_of_references_past_the_budget_refuse_the_answer(store: Store, policy: LoadedPolicy) -> None:
    adapter_on_a_base_naming(store, policy, 10)
    hub = CountingResolver(RESOLVED)
    result = gate_commit(ADAPTER, ADAPTER_SHA, store=store, policy=policy, resolve=hub, bounds=Bounds(budget=5))
    assert not result.approved
    assert result.to_dict()["reasons"][0].startswith("gate-hub-budget: references exceed the gate's hub budget")
    assert hub.calls == 5


def test_a_cancelled_answer_stops_before_the_hub(store: Store, policy: LoadedPolicy) -> None:
    adapter_on_a_base_naming(store, policy, 10)
    hub = CountingResolver(RESOLVED)
    with pytest.raises(Cancelled):
        gate_commit(ADAPTER, ADAPTER_SHA, store=store, policy=policy, resolve=hub,
                    bounds=Bounds(budget=None, cancelled=lambda: hub.calls >= 3))
    assert hub.calls == 3
