"""The verdict store on SQLite and on the real PostgreSQL: migrations, writes, reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect

from app.core.findings import Severity
from app.core.pipeline import vet
from app.core.report import Report
from app.db.base import Base
from app.db.repository import manifest_of, reports_for, save_report
from app.db.session import Store, upgrade
from tests.fakes import MemorySource, TextScanner

SHA = "0123456789abcdef0123456789abcdef01234567"


def _report(text: bytes = b"fine", sha: str = SHA) -> Report:
    source = MemorySource({"README.md": text, "config.json": b"{}"}, repo_id="acme/model", revision=sha)
    return vet(source, [TextScanner(Severity.HIGH)])


def test_models_and_migrations_agree(store_url: str) -> None:
    upgrade(store_url)
    engine = create_engine(store_url)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    engine.dispose()
    assert diff == []


def test_upgrade_twice_is_a_no_op(store_url: str) -> None:
    upgrade(store_url)
    upgrade(store_url)
    engine = create_engine(store_url)
    assert {"repos", "revisions", "reports", "audit_log", "alembic_version"} <= set(inspect(engine).get_table_names())
    engine.dispose()


def test_a_saved_report_reads_back_with_its_manifest(store_url: str) -> None:
    upgrade(store_url)
    store = Store(store_url)
    good, bad = _report(), _report(b"EVIL", "f" * 40)
    with store.session() as session:
        save_report(session, good, requested_revision="main", actor="test")
        save_report(session, bad, requested_revision=None, actor="test")
        save_report(session, good, requested_revision=SHA, actor="test")  # a re-vet of the same commit
    with store.session() as session:
        stored = reports_for(session, "acme/model")
        manifest = manifest_of(session, "acme/model", SHA)
    store.close()
    assert [(r.sha, r.verdict) for r in stored] == [(SHA, "approve"), ("f" * 40, "reject"), (SHA, "approve")]
    assert stored[0].document["files"][0]["path"] == "README.md"
    assert stored[0].decided_at.tzinfo is not None
    assert manifest == [
        {"path": "README.md", "size": 4, "sha256": None, "blob_id": None, "format": "text"},
        {"path": "config.json", "size": 2, "sha256": None, "blob_id": None, "format": "text"},
    ]


def test_a_failed_write_leaves_nothing_behind(store_url: str) -> None:
    upgrade(store_url)
    store = Store(store_url)
    try:
        with store.session() as session:
            save_report(session, _report(), requested_revision="main", actor="test")
            raise RuntimeError("crash between the report and the commit")
    except RuntimeError:
        pass
    with store.session() as session:
        assert reports_for(session, "acme/model") == []
    store.close()


def test_the_default_sqlite_store_is_created_on_first_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.services.store import open_store
    from app.settings import Settings

    monkeypatch.delenv("HFVET_DATABASE_URL")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "fresh" / "share"))  # no folder yet: a new machine
    store = open_store(Settings())
    store.close()
    assert (tmp_path / "fresh" / "share" / "hfvet" / "hfvet.db").is_file()
