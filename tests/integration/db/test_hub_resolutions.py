"""The gate's hub resolutions in the store, on SQLite and PostgreSQL: one replica's ask serves the others
for the TTL, a failure for its own, and a row rewritten in place (the upsert of each dialect)."""

from __future__ import annotations

import pytest

from app.db.session import Store
from app.errors import HfvetError
from app.services.hub_resolutions import SharedResolver, Unresolvable


class Hub:
    def __init__(self) -> None:
        self.calls = 0
        self.fail = False

    def __call__(self, repo: str, revision: str) -> str:
        self.calls += 1
        if self.fail:
            raise HfvetError(f"{repo}@{revision}: no such repo")
        return f"{self.calls:040x}"


class Clock:
    now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def replicas(store: Store, hub: Hub, clock: Clock) -> tuple[SharedResolver, SharedResolver]:
    return (SharedResolver(hub, store, ttl=60, failure_ttl=10, clock=clock),
            SharedResolver(hub, store, ttl=60, failure_ttl=10, clock=clock))


def test_a_replica_uses_another_replicas_resolution_until_it_is_stale(store: Store) -> None:
    hub, clock = Hub(), Clock()
    first, second = replicas(store, hub, clock)
    assert first("org/repo", "main") == second("org/repo", "main") == f"{1:040x}"
    assert hub.calls == 1
    clock.now += 61
    assert second("org/repo", "main") == f"{2:040x}"  # stale: asked again, the row replaced
    assert first("org/repo", "main") == f"{2:040x}"  # its memory is stale too: the replaced row answers
    assert hub.calls == 2


def test_a_failure_is_shared_for_the_failure_ttl(store: Store) -> None:
    hub, clock = Hub(), Clock()
    hub.fail = True
    first, second = replicas(store, hub, clock)
    for resolver in (first, second, second):
        with pytest.raises(Unresolvable, match="no such repo"):
            resolver("org/gone", "main")
    assert hub.calls == 1
    clock.now += 11
    hub.fail = False
    assert second("org/gone", "main") == f"{2:040x}"
