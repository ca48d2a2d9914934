"""An exact commit's gate answer reads one report (the newest of the commit) and still says what the
whole history says: re-vets, reviews of older reports, rejects carried forward, reports under another
policy, other commits of the same repo. The oracle is the whole-history rule (reports_for, every
effective review, decide_gate over every outcome), as the gate answered before.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.gate import Answer, Approved, Denied, decide_gate
from app.db import reviews as reviews_db
from app.db.repository import report_by_id, reports_for
from app.db.reviews import effective_reviews
from app.db.session import Store, upgrade
from app.services import gating
from app.services.gating import GateCache, cached_gate, gate_commit
from app.services.outcomes import outcome
from tests.integration.api.stored import no_hub, policy, report, save

DEFAULT, STRICT = policy("default"), policy("strict")
SHAS = ("a" * 40, "b" * 40, "c" * 40)
_names = itertools.count()

Vet = tuple[str, int, bool, bool]  # ("vet", commit index, evil, under strict)
Reviewed = tuple[str, int, str]  # ("review", which stored report (mod count), approve|reject)
vets = st.tuples(st.just("vet"), st.integers(0, 2), st.booleans(), st.booleans())
reviews = st.tuples(st.just("review"), st.integers(0, 50), st.sampled_from(["approve", "reject"]))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    url = f"sqlite:///{tmp_path_factory.mktemp('gate-commit') / 'store.db'}"
    upgrade(url)
    opened = Store(url)
    yield opened
    opened.close()


def whole_history(store: Store, repo: str, sha: str) -> Answer:
    with store.session() as session:
        stored = reports_for(session, repo)
        effective = effective_reviews(session, repo, stored) if stored else {}
    return decide_gate(sha, sha, [outcome(r, DEFAULT, effective.get(r.id)) for r in stored])


def replay(store: Store, repo: str, history: list[Vet | Reviewed]) -> None:
    ids: list[int] = []
    for step in history:
        if step[0] == "vet":
            _, commit, evil, strict = step
            ids.append(save(store, report(repo, SHAS[commit], b"EVIL" if evil else b"fine",
                                          under=STRICT if strict else DEFAULT)))
        elif ids:
            _, which, decision = step
            with store.session() as session:
                stored = report_by_id(session, ids[which % len(ids)])
                assert stored is not None
                reviews_db.add_review(session, stored, decision=str(decision), reason="looked", actor="token:r",
                                      role="reviewer", verdict=stored.verdict, policy=("default", DEFAULT.sha256))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["nvidia", "canada-quant"]), st.lists(st.one_of(vets, reviews), min_size=1, max_size=12))
def test_the_newest_report_of_a_commit_answers_as_the_whole_history(store: Store, org: str,
                                                                    history: list[Vet | Reviewed]) -> None:
    repo = f"{org}/m{next(_names)}"
    replay(store, repo, history)
    for sha in SHAS:
        fast = gate_commit(repo, sha, store=store, policy=DEFAULT, resolve=no_hub).answer
        assert fast == whole_history(store, repo, sha)


def test_a_revet_that_finds_something_overturns_an_approval_of_the_same_commit(store: Store) -> None:
    repo, sha = f"nvidia/m{next(_names)}", SHAS[0]
    save(store, report(repo, sha, under=DEFAULT))
    assert isinstance(gate_commit(repo, sha, store=store, policy=DEFAULT, resolve=no_hub).answer, Approved)
    save(store, report(repo, sha, b"EVIL", under=DEFAULT))
    denied = gate_commit(repo, sha, store=store, policy=DEFAULT, resolve=no_hub).answer
    assert isinstance(denied, Denied) and denied.outcome.verdict == "reject"


def test_concurrent_misses_of_one_commit_compute_its_answer_once(store: Store,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    repo, sha = f"nvidia/m{next(_names)}", SHAS[1]
    save(store, report(repo, sha, under=DEFAULT))
    computed: list[str] = []
    release = threading.Event()
    real = gating.gate_commit

    def slow_gate(*args: object, **kwargs: object) -> gating.GateResult:
        computed.append(repo)
        release.wait(5)  # the other requests arrive while this one computes
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gating, "gate_commit", slow_gate)
    cache = GateCache()
    answers: list[str] = []

    def ask() -> None:
        answers.append(cached_gate(cache, repo, sha, store=store, policy=DEFAULT, resolve=no_hub).status)

    askers = [threading.Thread(target=ask) for _ in range(8)]
    for asker in askers:
        asker.start()
    time.sleep(0.3)  # every asker has missed by now: without one computation per key, all 8 would be computing
    release.set()
    for asker in askers:
        asker.join(10)
    assert answers == ["approved"] * 8
    assert computed == [repo]
