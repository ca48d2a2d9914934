"""Short commit ids and did-you-mean, resolved against the store's vetted commits (app.services.commits):
the one home the gate, reviews, downloads and the dashboard share."""

from __future__ import annotations

import pytest

from app.db.session import Store
from app.services.commits import AmbiguousCommit, NotACommit, expand_commit, similar_repos, vetted_commit
from app.services.gating import gate
from app.services.reviews import ReviewRefused, ReviewRequest, submit_review
from tests.unit.services.test_references import DEFAULT, migrated, store, stored

__all__ = ["migrated", "store"]  # the fixtures, shared with test_references
REPO = "nvidia/short-ids"
ONE, TWO, THREE = "9f0f442e9a56" + "1" * 28, "abcdef01" + "2" * 32, "abcdef01" + "3" * 32


@pytest.fixture
def vetted(store: Store) -> Store:
    for sha in (ONE, TWO, THREE):
        stored(store, REPO, sha)
    stored(store, "nvidia/other", "9f0f442e9a56" + "4" * 28)  # the same prefix in another repo does not count
    return store


def no_hub(repo: str, revision: str) -> str:
    raise AssertionError("the store knew it: the hub is not asked")


def test_a_unique_prefix_names_its_vetted_commit(vetted: Store) -> None:
    assert expand_commit(vetted, REPO, "9f0f442e9a56", no_hub) == ONE
    assert expand_commit(vetted, REPO, "9f0f442", no_hub) == ONE
    assert expand_commit(vetted, REPO, ONE, no_hub) == ONE
    assert vetted_commit(vetted, REPO, "9f0f442e9a56") == ONE


def test_a_shared_prefix_is_refused_with_the_candidates(vetted: Store) -> None:
    with pytest.raises(AmbiguousCommit, match="abcdef01 is ambiguous in nvidia/short-ids") as raised:
        expand_commit(vetted, REPO, "abcdef01", no_hub)
    assert raised.value.candidates == [TWO, THREE]
    assert TWO in str(raised.value) and THREE in str(raised.value)


def test_branches_and_none_pass_through(vetted: Store) -> None:
    assert expand_commit(vetted, REPO, None, no_hub) is None
    assert expand_commit(vetted, REPO, "main", no_hub) == "main"
    assert expand_commit(vetted, REPO, "9f0f44", no_hub) == "9f0f44"  # 6 hex: not a commit id


def test_an_unknown_prefix_is_asked_of_the_hub_when_there_is_one(vetted: Store) -> None:
    asked: list[tuple[str, str]] = []

    def hub(repo: str, revision: str) -> str:
        asked.append((repo, revision))
        return {"1234567": "1234567" + "0" * 33, "deadbeef": "f" * 40}[revision]

    assert expand_commit(vetted, REPO, "1234567", hub) == "1234567" + "0" * 33
    assert expand_commit(vetted, REPO, "deadbeef", hub) == "deadbeef"  # a branch named like hex stays one
    assert expand_commit(vetted, REPO, "1234567") == "1234567"  # no hub: left to the caller's not-vetted
    assert asked == [(REPO, "1234567"), (REPO, "deadbeef")]


def test_only_a_commit_may_be_reviewed(vetted: Store) -> None:
    with pytest.raises(NotACommit, match=r"revision must be a commit: its 40-hex sha.*not 'main'"):
        vetted_commit(vetted, REPO, "main")
    assert vetted_commit(vetted, REPO, "1234567") == "1234567"  # not vetted: the review says so


def test_did_you_mean_compares_the_vetted_repo_ids(vetted: Store) -> None:
    assert similar_repos(vetted, "nvidia/short-id", DEFAULT) == [REPO]
    assert similar_repos(vetted, "NVIDIA/Short-Ids", DEFAULT) == [REPO]  # hub ids are case-insensitive
    assert similar_repos(vetted, REPO, DEFAULT) == []  # vetted itself: nothing to suggest
    assert similar_repos(vetted, "meta-llama/llama-3", DEFAULT) == []


def test_did_you_mean_never_names_a_lookalike_org(vetted: Store) -> None:
    """A typo of a vendor's repo must not send anyone to the typosquat of it the store holds (vetted, denied)."""
    stored(vetted, "nvldia/short-ids", "5" * 40)
    assert similar_repos(vetted, "nvidia/short-idz", DEFAULT) == [REPO]
    assert similar_repos(vetted, "nvldia/short-idz", DEFAULT) == [REPO]  # asked for the look-alike: the real one


def test_the_gates_not_vetted_answer_suggests_a_close_repo(vetted: Store) -> None:
    doc = gate("nvidia/short-idz", None, store=vetted, policy=DEFAULT, resolve=no_hub).to_dict()
    assert doc["status"] == "not-vetted"
    assert doc["reasons"] == [f"did you mean {REPO}?", "not vetted: run `hfvet vet nvidia/short-idz`"]
    known = gate(REPO, "f" * 40, store=vetted, policy=DEFAULT, resolve=no_hub).to_dict()
    assert known["status"] == "not-vetted" and len(known["reasons"]) == 1  # a known repo, an unvetted commit


def test_a_review_of_a_typo_suggests_the_vetted_repo(vetted: Store) -> None:
    request = ReviewRequest("nvidia/short-idz", ONE, "approve", "read it", "test", "admin")
    with pytest.raises(ReviewRefused, match=f"never vetted.*; did you mean {REPO}[?]") as raised:
        submit_review(vetted, DEFAULT, request)
    assert raised.value.kind == "not-vetted"
    with pytest.raises(ReviewRefused) as known:  # a vetted repo, an unvetted commit: nothing to suggest
        submit_review(vetted, DEFAULT, ReviewRequest(REPO, "f" * 40, "approve", "read it", "test", "admin"))
    assert "did you mean" not in str(known.value)


def test_the_prefilter_keeps_every_repo_difflib_finds_close() -> None:
    """similar_repos asks difflib only about the ids rapidfuzz keeps: the answer must be difflib's own."""
    import difflib
    import random
    import string

    from app.services.commits import CLOSE, _within_reach

    rng = random.Random(7)
    seeds = ["nvidia/deepseek-v4-flash-nvfp4", "nvldia/deepseek-v4-flash-nvfp4", "meta/llama-3.1-8b"]
    near = [s[:i] + rng.choice("ab-.") + s[i + 1:] for s in seeds for i in range(len(s))]
    noise = ["".join(rng.choices(string.ascii_lowercase + "-./0123456789", k=rng.randint(5, 60))) for _ in range(2000)]
    known = seeds + near + noise
    for wanted in [*seeds, "nvidia/deepseek-v4-flash-nvfp5", "meta/llama-3-8b", *rng.sample(known, 50)]:
        assert difflib.get_close_matches(wanted, _within_reach(wanted, known), n=len(known), cutoff=CLOSE) == \
            difflib.get_close_matches(wanted, known, n=len(known), cutoff=CLOSE), wanted
