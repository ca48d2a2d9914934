"""A cached gate answer outlives writes to repos it never read, and no write to one it read.

cached_gate re-stamps an answer when the store version moved but none of the repos it depends on
(itself, and the referenced repos the judge read) got a report or a review since; otherwise, and at
a new UTC day, it computes the answer again. The property: whatever the interleaving of vets,
reviews and asks across an adapter, its pinned base and an unrelated repo, every cached answer is
the one computed fresh at that moment.
"""

from __future__ import annotations

import itertools
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.db import reviews as reviews_db
from app.db.session import Store
from app.services import gating
from app.services.gating import GateCache, GateResult, cached_gate, gate_commit
from tests.unit.services.test_references import DEFAULT, SHA_A, SHA_B, SHA_C, migrated, store, stored

__all__ = ["migrated", "store"]  # the fixtures, shared with test_references
_names = itertools.count()


def _no_hub(repo: str, revision: str) -> str:
    raise AssertionError("pinned references only: the hub is never asked")


class World:
    """An adapter pinned to a base commit, the base, and a repo neither reads."""

    def __init__(self, store: Store) -> None:
        n = next(_names)
        self.store, self.cache = store, GateCache()
        self.adapter, self.base, self.other = f"nvidia/lora-{n}", f"meta-llama/base-{n}", f"nvidia/other-{n}"
        self.shas = {self.adapter: SHA_A, self.base: SHA_B, self.other: SHA_C}

    def vet(self, repo: str, evil: bool = False) -> None:
        base = (self.base, SHA_B) if repo == self.adapter else None
        stored(self.store, repo, self.shas[repo], base, evil=evil)

    def review(self, repo: str, decision: str) -> bool:
        with self.store.session() as session:
            report = reviews_db.newest_report(session, repo, self.shas[repo])
            if report is None:
                return False
            reviews_db.add_review(session, report, decision=decision, reason="looked", actor="token:r",
                                  role="reviewer", verdict=report.verdict, policy=("default", DEFAULT.sha256))
        return True

    def cached(self, repo: str) -> GateResult:
        return cached_gate(self.cache, repo, self.shas[repo], store=self.store, policy=DEFAULT, resolve=_no_hub)

    def fresh(self, repo: str) -> GateResult:
        return gate_commit(repo, self.shas[repo], store=self.store, policy=DEFAULT, resolve=_no_hub)


steps = st.lists(st.tuples(st.sampled_from(["vet", "vet-evil", "approve", "reject", "ask"]), st.integers(0, 2)),
                 min_size=1, max_size=16)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps)
def test_every_cached_answer_is_the_fresh_one(store: Store, history: list[tuple[str, int]]) -> None:
    world = World(store)
    repos = [world.adapter, world.base, world.other]
    for action, which in [*history, ("ask", 0), ("ask", 1), ("ask", 2)]:
        repo = repos[which]
        if action.startswith("vet"):
            world.vet(repo, evil=action == "vet-evil")
        elif action in ("approve", "reject"):
            world.review(repo, action)
        else:
            cached, fresh = world.cached(repo), world.fresh(repo)
            assert (cached.answer, cached.files) == (fresh.answer, fresh.files)


def counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    computed: list[str] = []
    real = gating.gate_commit

    def spy(repo: str, sha: str, **kwargs: object) -> GateResult:
        computed.append(repo)
        return real(repo, sha, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gating, "gate_commit", spy)
    return computed


def test_writes_to_a_repo_the_answer_never_read_keep_it(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    world = World(store)
    world.vet(world.base)
    world.vet(world.adapter)
    computed = counting(monkeypatch)
    first = world.cached(world.adapter)
    assert first.approved and first.depends_on == {world.adapter, world.base}
    world.vet(world.other)
    world.review(world.other, "reject")
    assert world.cached(world.adapter) is first
    assert computed == [world.adapter]  # re-stamped, not computed again


@pytest.mark.parametrize("write", ["re-vet", "reject-review", "base-re-vet-evil", "base-reject-review"])
def test_a_write_to_a_repo_the_answer_read_recomputes_it(store: Store, monkeypatch: pytest.MonkeyPatch,
                                                         write: str) -> None:
    world = World(store)
    world.vet(world.base)
    world.vet(world.adapter)
    computed = counting(monkeypatch)
    assert world.cached(world.adapter).approved
    {"re-vet": lambda: world.vet(world.adapter, evil=True),
     "reject-review": lambda: world.review(world.adapter, "reject"),
     "base-re-vet-evil": lambda: world.vet(world.base, evil=True),
     "base-reject-review": lambda: world.review(world.base, "reject")}[write]()
    assert not world.cached(world.adapter).approved
    assert computed == [world.adapter, world.adapter]


def test_a_new_utc_day_recomputes_the_answer(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    # A re-decision applies waivers as of today: yesterday's answer may not hold.
    world = World(store)
    world.vet(world.other)
    computed = counting(monkeypatch)
    world.cached(world.other)
    monkeypatch.setattr(gating, "_today", lambda: date(2999, 1, 1))
    world.cached(world.other)
    assert computed == [world.other, world.other]
