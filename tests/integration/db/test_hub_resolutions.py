"""The gate's hub resolutions in the store, on SQLite and PostgreSQL: one replica's ask serves the others
for the TTL, a failure for its own, and a row rewritten in place (the upsert of each dialect)."""

from __future__ import annotations

import pytest

from app.db.session import Store
from app.services.hub_resolutions import SharedResolver, Unresolvable
from tests.fakes import CountingResolver, FakeClock


def replicas(store: Store, hub: CountingResolver, clock: FakeClock) -> tuple[SharedResolver, SharedResolver]:
    return (SharedResolver(hub, store, ttl=60, failure_ttl=10, clock=clock),
            SharedResolver(hub, store, ttl=60, failure_ttl=10, clock=clock))


def test_a_replica_uses_another_replicas_resolution_until_it_is_stale(store: Store) -> None:
    hub, clock = CountingResolver(), FakeClock()
    first, second = replicas(store, hub, clock)
    assert first("org/repo", "main") == second("org/repo", "main") == f"{1:040x}"
    assert hub.calls == 1
    clock.now += 61
    assert second("org/repo", "main") == f"{2:040x}"  # stale: asked again, the row replaced
    assert first("org/repo", "main") == f"{2:040x}"  # its memory is stale too: the replaced row answers
    assert hub.calls == 2


def test_a_failure_is_shared_for_the_failure_ttl(store: Store) -> None:
    hub, clock = CountingResolver(), FakeClock()
    hub.fail = True
    first, second = replicas(store, hub, clock)
    for resolver in (first, second, second):
        with pytest.raises(Unresolvable, match="no such repo"):
            resolver("org/gone", "main")
    assert hub.calls == 1
    clock.now += 11
    hub.fail = False
    assert second("org/gone", "main") == f"{2:040x}"
