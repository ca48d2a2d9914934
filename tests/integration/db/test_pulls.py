"""Pulls through the Hub endpoint in the audit log (SQLite and PostgreSQL): one row per file served,
listed grouped by (actor, commit)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from app.db.models import AuditRow
from app.db.pulls import PullDetail, detail_of, parse_detail
from app.db.session import Store
from app.services.pulls import PullSummary, recent_pulls, record_pull, repo_pulls
from app.services.review_queue import repo_audit

REPO, OTHER = "acme/model", "acme/model-2"
SHA, SHA2 = "a" * 40, "b" * 40


def test_a_pull_is_one_audit_row_naming_who_what_and_where_from(store: Store) -> None:
    record_pull(store, "ci", REPO, SHA, "model.safetensors", 1234, "upstream")
    with store.session() as session:
        rows = [(r.actor, r.action, r.subject, r.detail) for r in session.execute(select(AuditRow)).scalars()]
    assert rows == [("ci", "pull", f"{REPO}@{SHA}", "model.safetensors (1234 bytes, upstream)")]


def test_two_files_of_one_commit_are_one_row_with_two_files(store: Store) -> None:
    record_pull(store, "ci", REPO, SHA, "config.json", 100, "upstream")
    record_pull(store, "ci", REPO, SHA, "model.safetensors", 5000, "cache")
    [pulled] = recent_pulls(store)
    assert (pulled.actor, pulled.repo, pulled.sha, pulled.files, pulled.bytes, pulled.downloads) == \
        ("ci", REPO, SHA, 2, 5100, 2)
    assert pulled.first <= pulled.last and pulled.last.tzinfo is not None


def test_a_file_pulled_again_counts_once_in_files_and_bytes_but_twice_in_downloads(store: Store) -> None:
    for source in ("upstream", "cache", "cache"):
        record_pull(store, "ci", REPO, SHA, "model.safetensors", 5000, source)
    [pulled] = recent_pulls(store)
    assert (pulled.files, pulled.bytes, pulled.downloads) == (1, 5000, 3)


def test_each_actor_and_commit_is_its_own_row_the_latest_pulled_first(store: Store) -> None:
    record_pull(store, "ci", REPO, SHA, "a.bin", 1, "upstream")
    record_pull(store, "alice", REPO, SHA, "a.bin", 1, "cache")
    record_pull(store, "ci", OTHER, SHA2, "b.bin", 2, "upstream")
    record_pull(store, "ci", REPO, SHA, "c.bin", 3, "upstream")  # ci's first pair is the latest again
    assert [(p.actor, p.repo, p.files) for p in recent_pulls(store)] == \
        [("ci", REPO, 2), ("ci", OTHER, 1), ("alice", REPO, 1)]


def test_the_limit_counts_pairs_and_keeps_each_pairs_every_file(store: Store) -> None:
    record_pull(store, "alice", REPO, SHA, "a.bin", 1, "upstream")
    for path in ("a.bin", "b.bin", "c.bin"):
        record_pull(store, "ci", REPO, SHA2, path, 10, "upstream")
    assert [(p.actor, p.sha, p.files, p.bytes) for p in recent_pulls(store, limit=1)] == [("ci", SHA2, 3, 30)]


def test_a_repos_pulls_are_its_own_only(store: Store) -> None:
    record_pull(store, "ci", REPO, SHA, "a.bin", 1, "upstream")
    record_pull(store, "ci", OTHER, SHA2, "b.bin", 2, "upstream")  # same prefix, another repo
    record_pull(store, "ci", "acme/mo_el", SHA2, "c.bin", 3, "upstream")  # `_` is no wildcard
    assert [(p.repo, p.sha) for p in repo_pulls(store, REPO)] == [(REPO, SHA)]
    assert [p.repo for p in repo_pulls(store, "acme/mo_el")] == ["acme/mo_el"]
    assert repo_pulls(store, "acme/none") == []


def test_no_pulls_lists_nothing(store: Store) -> None:
    assert recent_pulls(store) == [] and repo_pulls(store, REPO) == []


def test_the_repo_audit_trail_leaves_pulls_to_their_own_list(store: Store) -> None:
    record_pull(store, "ci", REPO, SHA, "a.bin", 1, "upstream")
    with store.session() as session:
        session.add(AuditRow(actor="rev", action="review", subject=f"{REPO}@{SHA}", detail="approve"))
    assert [e.action for e in repo_audit(store, REPO)] == ["review"]


@pytest.mark.parametrize(("size", "source"), [(-1, "upstream"), (10, "disk"), (10, "")])
def test_a_pull_the_list_could_not_read_back_is_refused_and_not_written(store: Store, size: int,
                                                                        source: str) -> None:
    with pytest.raises(ValueError, match="a pull serves 0 or more bytes"):
        record_pull(store, "ci", REPO, SHA, "a.bin", size, source)
    with store.session() as session:
        assert session.execute(select(func.count()).select_from(AuditRow)).scalar_one() == 0


@pytest.mark.parametrize("path", ["model.safetensors", "dir with space/w (1).bin", "x (3 bytes, cache).bin",
                                  "a\nb", ""])
def test_a_detail_reads_back_exactly_whatever_the_path(path: str) -> None:
    assert parse_detail(detail_of(path, 42, "cache")) == PullDetail(path, 42, "cache")


@pytest.mark.parametrize("detail", ["approve", "a.bin (12 bytes)", "a.bin (x bytes, cache)",
                                    "a.bin (1 bytes, disk)", "a.bin (1 bytes, cache) "])
def test_a_detail_not_written_by_a_pull_reads_as_none(detail: str) -> None:
    assert parse_detail(detail) is None


def test_a_foreign_pull_row_counts_as_a_download_of_unknown_size(store: Store) -> None:
    with store.session() as session:
        session.add(AuditRow(actor="ci", action="pull", subject=f"{REPO}@{SHA}", detail="by hand"))
    record_pull(store, "ci", REPO, SHA, "a.bin", 7, "cache")
    [pulled] = recent_pulls(store)
    assert isinstance(pulled, PullSummary) and (pulled.files, pulled.bytes, pulled.downloads) == (2, 7, 2)
