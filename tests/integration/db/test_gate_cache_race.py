"""The gate cache on PostgreSQL, where ids are handed out at insert and rows become visible at commit.

A write that took its id first but commits last must still move the store version, or a cached
approval outlives the re-vet (or the reject) that revoked it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from app.db.repository import save_report
from app.db.session import Store, upgrade
from app.db.version import VersionProbe
from app.services.gating import GateCache, cached_gate
from tests.integration.api.stored import no_hub, policy, report, save
from tests.integration.db.conftest import postgres_url

SHA = "a" * 40
DEFAULT = policy("default")


@pytest.fixture
def pg_store() -> Iterator[Store]:
    for url in postgres_url():
        upgrade(url)
        store = Store(url)
        yield store
        store.close()


@pytest.mark.postgres
def test_a_write_that_commits_after_a_later_id_still_invalidates_the_cache(pg_store: Store) -> None:
    cache = GateCache()
    probe = VersionProbe(pg_store.engine)  # the fast path's version (app.api.routes.gate_fast) must move alike
    versions: list[tuple[int, int]] = []

    def status() -> str:
        versions.append(probe())
        return cached_gate(cache, "nvidia/model", SHA, store=pg_store, policy=DEFAULT, resolve=no_hub).status

    save(pg_store, report("nvidia/model", SHA, under=DEFAULT))
    assert status() == "approved"
    later = threading.Thread(target=save, args=(pg_store, report("nvidia/other", SHA, under=DEFAULT)))
    with pg_store.session() as slow:  # a re-vet that finds something: it takes its id first, commits last
        save_report(slow, report("nvidia/model", SHA, b"EVIL", under=DEFAULT), requested_revision="main",
                    actor="test")
        later.start()  # another write, which would take a later id and commit first
        later.join(1.0)
        assert status() == "approved"  # the re-vet is not visible yet
    later.join(30)
    assert not later.is_alive()
    assert status() == "denied"
    assert versions[0] == versions[1] != versions[2]
    probe.close()
