"""The content index on SQLite and PostgreSQL: written with each report, once per commit, backfilled by 0009."""

from __future__ import annotations

import hashlib
from dataclasses import replace

from alembic import command
from sqlalchemy import create_engine, insert, select

from app.core.findings import Severity
from app.core.pipeline import vet
from app.core.report import Report
from app.db.content_index import commit_files, commits_holding, indexed_rows
from app.db.models import ContentRow, RepoRow, RevisionRow
from app.db.repository import save_report
from app.db.session import Store, alembic_config, upgrade
from tests.fakes import MemorySource, TextScanner

SHA = "0123456789abcdef0123456789abcdef01234567"


def _report(repo: str = "acme/model", sha: str = SHA, readme: bytes = b"fine") -> Report:
    """A vet of two small files whose sha256s are known (as a hub's LFS files' are) and one with a blob id."""
    content = {"README.md": readme, "config.json": b"{}"}
    report = vet(MemorySource(content, repo_id=repo, revision=sha), [TextScanner(Severity.HIGH)])
    files = tuple(replace(f, sha256=hashlib.sha256(content[f.path]).hexdigest(),
                          blob_id=("b" * 40 if f.path == "config.json" else None)) for f in report.files)
    return replace(report, files=files)


def test_a_stored_report_indexes_its_files_once_however_often_the_commit_is_vetted(store: Store) -> None:
    report = _report()
    with store.session() as session:
        save_report(session, report, requested_revision="main", actor="test")
    with store.session() as session:
        save_report(session, report, requested_revision=SHA, actor="test")  # a re-vet of the same commit
        save_report(session, _report(sha="f" * 40), requested_revision=None, actor="test")
    expected = sum(bool(f.sha256) + bool(f.blob_id) for f in report.files)
    with store.session() as session:
        rows = session.execute(select(ContentRow).where(ContentRow.sha == SHA)).scalars().all()
        assert len(rows) == expected > 0
        assert all(r.digest.startswith(("sha256:", "gitblob:")) and r.repo_id == "acme/model" for r in rows)
        assert indexed_rows(session, "acme/model") == 2 * expected


def test_the_index_finds_the_commits_holding_the_same_bytes(store: Store) -> None:
    with store.session() as session:
        save_report(session, _report("vendor/base"), requested_revision=None, actor="test")
        save_report(session, _report("copier/copy", "c" * 40), requested_revision=None, actor="test")
        save_report(session, _report("other/thing", "d" * 40, b"different"), requested_revision=None, actor="test")
        for n in range(3):  # the copier's own org shares the bytes too: left out by the query, not the ranking
            save_report(session, _report(f"Copier/copy-{n}", f"{n}" * 40), requested_revision=None, actor="test")
    with store.session() as session:
        files = commit_files(session, "copier/copy", "c" * 40)
        digests = [d for f in files for d in f.digests()]
        found = commits_holding(session, digests, outside_org="copier", limit=2)
    assert [f.path for f in files] == ["README.md", "config.json"]
    assert found == [("vendor/base", SHA, 2), ("other/thing", "d" * 40, 1)]  # every file; config.json only


def test_upgrading_a_store_from_before_the_index_backfills_it(store_url: str) -> None:
    command.upgrade(alembic_config(store_url), "0008")
    report = _report()
    manifest = [{"path": f.path, "size": f.size, "sha256": f.sha256, "blob_id": f.blob_id, "format": f.format}
                for f in report.files]
    engine = create_engine(store_url)
    with engine.begin() as conn:
        conn.execute(insert(RepoRow.__table__).values(id=1, repo_id="acme/model", org="acme", name="model"))
        conn.execute(insert(RevisionRow.__table__).values(id=1, repo_pk=1, sha=SHA, manifest=manifest))
    engine.dispose()
    upgrade(store_url)
    store = Store(store_url)
    try:
        with store.session() as session:
            files = commit_files(session, "acme/model", SHA)
            assert {f.path for f in files} == {"README.md", "config.json"}
            before = indexed_rows(session)
            save_report(session, report, requested_revision=None, actor="test")  # vetted again after the upgrade
            assert indexed_rows(session) == before  # backfilled rows are not written twice
    finally:
        store.close()
