"""The store failing under a running service: connections killed mid-vet, a locked or full SQLite file,
a crash between the report and the job's outcome, and reviews racing from two processes.

Whatever happens, a vet ends `done` with exactly one report or `failed` with none (never half a
report, never `running` for ever), an earlier verdict is never lost, and one commit is approved once.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, event, func, select, text
from sqlalchemy.exc import OperationalError

from app.core.findings import Severity
from app.core.gate import Approved
from app.core.jobs import VetJob
from app.core.pipeline import vet as vet_files
from app.core.report import Report
from app.db import session as db_session
from app.db.models import AuditRow, RepoRow, ReportRow, ReviewRow, RevisionRow, VetRow
from app.db.repository import save_report
from app.db.session import Store, upgrade
from app.jobs import inprocess
from app.jobs.inprocess import InProcessQueue
from app.services.gating import gate
from app.services.reviews import ReviewRefused, ReviewRequest, submit_review
from tests.fakes import MemorySource, TextScanner
from tests.integration.db.test_store import _report
from tests.integration.vetted import REVIEW_REPO, Vetted, policy, vet_examples

SHA, OTHER_SHA = "1" * 40, "2" * 40
POLICY = ("default", "0" * 64)



def rows(store: Store) -> dict[str, int]:
    """How many rows each table that a vet writes holds."""
    with store.session() as session:
        counted = {model.__tablename__: session.execute(select(func.count()).select_from(model)).scalar_one()
                   for model in (RepoRow, RevisionRow, ReportRow, ReviewRow)}
        counted["vet audit"] = session.execute(
            select(func.count()).select_from(AuditRow).where(AuditRow.action == "vet")).scalar_one()
    return counted


def run_job(store: Store, vet: Callable[[VetJob], Report], sha: str = SHA, timeout: float = 60) -> VetJob:
    queue = InProcessQueue(store, vet, POLICY, workers=1)
    queue.start()
    try:
        job = queue.submit("acme/model", "main", sha, requested_by="test")
        try:
            done = queue.wait(job.id, timeout)
        except OperationalError:  # this test's own read, on a connection a kill_connections ended mid-query
            done = queue.wait(job.id, timeout)
    finally:
        queue.stop()
    assert done is not None and done.finished, f"the job did not finish: {done}"
    return done


def assert_done_once(store: Store, job: VetJob) -> None:
    assert job.status == "done" and job.report_id is not None, job.error
    assert rows(store)["reports"] == rows(store)["vet audit"] == 1


def assert_failed_clean(store: Store, job: VetJob, before: dict[str, int]) -> None:
    assert job.status == "failed" and job.report_id is None and job.error
    assert rows(store) == before  # not a row of the report, its revision or its audit entry


# -- connections dropped (PostgreSQL) --------------------------------------------------------------

def kill_connections(store: Store) -> int:
    """pg_terminate_backend every other session on the store's database: what a server restart does to them."""
    engine = create_engine(store.url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as admin:
            killed = admin.execute(text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()")).scalar_one()
    finally:
        engine.dispose()
    return int(killed)


@pytest.mark.postgres
def test_connections_killed_mid_vet_the_job_still_ends_with_one_report(store: Store) -> None:
    if not store.url.startswith("postgresql"):
        pytest.skip("pg_terminate_backend is PostgreSQL's")

    def vet(job: VetJob) -> Report:
        assert kill_connections(store) >= 1  # the pool's connections die while the files are read
        return _report(sha=job.sha)

    assert_done_once(store, run_job(store, vet))


@pytest.mark.postgres
def test_a_connection_killed_inside_the_report_write_fails_the_job_and_writes_nothing(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not store.url.startswith("postgresql"):
        pytest.skip("pg_terminate_backend is PostgreSQL's")
    real_save = inprocess.save_report

    def save_then_die(session: Any, report: Report, **kwargs: Any) -> int:
        report_id = real_save(session, report, **kwargs)  # the report is written, not yet committed
        kill_connections(store)
        return report_id

    monkeypatch.setattr(inprocess, "save_report", save_then_die)
    before = rows(store)
    assert_failed_clean(store, run_job(store, lambda job: _report(sha=job.sha)), before)
    monkeypatch.setattr(inprocess, "save_report", real_save)
    assert_done_once(store, run_job(store, lambda job: _report(sha=job.sha)))  # a re-vet is not refused


# -- a crash between the report and the job's outcome ------------------------------------------------

def test_a_crash_between_the_report_and_the_verdict_leaves_no_half_state(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_finish = inprocess.rows.finish
    crashed: list[str] = []

    def crash_once(session: Any, job_id: str, **kwargs: Any) -> None:
        if not crashed and kwargs.get("report_id") is not None:  # the report row is flushed: crash now
            crashed.append(job_id)
            raise OperationalError("UPDATE vets", {}, Exception("server closed the connection"))
        real_finish(session, job_id, **kwargs)

    monkeypatch.setattr(inprocess.rows, "finish", crash_once)
    before = rows(store)
    job = run_job(store, lambda job: _report(sha=job.sha))
    assert crashed and "cannot store the report" in (job.error or "")
    assert_failed_clean(store, job, before)


# -- SQLite: a locked file, a full disk --------------------------------------------------------------

def sqlite_path(store: Store) -> str:
    if not store.url.startswith("sqlite:///"):
        pytest.skip("a SQLite file's fault")
    return store.url.removeprefix("sqlite:///")


def hold_exclusive_lock(path: str, seconds: float) -> threading.Thread:
    """Another writer holding the file's write lock for ``seconds`` (what a second process can do)."""
    locked = threading.Event()

    def holder() -> None:
        conn = sqlite3.connect(path, timeout=5, isolation_level=None)
        conn.execute("BEGIN EXCLUSIVE")
        locked.set()
        time.sleep(seconds)
        conn.execute("ROLLBACK")
        conn.close()

    thread = threading.Thread(target=holder)
    thread.start()
    assert locked.wait(10)
    return thread


@pytest.fixture
def short_busy_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's SQLite connections wait 0.3 s for a lock instead of 30 s, so a test can outlast it."""
    real = db_session.create_engine

    def quick(url: str, **kwargs: Any) -> Any:
        if url.startswith("sqlite"):
            kwargs["connect_args"] = {**kwargs.get("connect_args", {}), "timeout": 0.3}
        return real(url, **kwargs)

    monkeypatch.setattr(db_session, "create_engine", quick)


def test_a_briefly_locked_sqlite_file_only_delays_the_vet(store: Store) -> None:
    path = sqlite_path(store)

    def vet(job: VetJob) -> Report:
        hold_exclusive_lock(path, 1.0)  # held while the report is written: the write waits it out
        return _report(sha=job.sha)

    assert_done_once(store, run_job(store, vet))


def test_a_sqlite_file_locked_past_the_timeout_fails_the_job_cleanly(store_url: str, short_busy_timeout: None) -> None:
    if not store_url.startswith("sqlite"):
        pytest.skip("a SQLite file's fault")
    upgrade(store_url)
    store = Store(store_url)  # its connections give up on a lock after 0.3 s
    before = rows(store)
    holders: list[threading.Thread] = []

    def vet(job: VetJob) -> Report:
        holders.append(hold_exclusive_lock(sqlite_path(store), 1.5))  # longer than the timeout
        return _report(sha=job.sha)

    job = run_job(store, vet)  # the outcome is recorded once the lock is gone, not left `running`
    holders[0].join()
    assert "locked" in (job.error or "")
    assert_failed_clean(store, job, before)
    store.close()


def limit_pages(store: Store, extra_pages: int) -> None:
    """SQLITE_FULL on demand: every new connection may grow the file by ``extra_pages`` at most."""
    path = sqlite_path(store)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
    store.engine.dispose()

    @event.listens_for(store.engine, "connect")
    def _cap(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.execute(f"PRAGMA max_page_count = {pages + extra_pages}")


def big_report(sha: str, files: int = 3000) -> Report:
    """A report whose manifest needs many new pages of the store."""
    source = MemorySource({f"weights/part-{i:05d}.txt": b"fine" for i in range(files)}, repo_id="acme/model",
                          revision=sha)
    return vet_files(source, [TextScanner(Severity.HIGH)])


def test_a_full_sqlite_store_fails_the_vet_and_keeps_the_earlier_verdict(store: Store) -> None:
    first = run_job(store, lambda job: _report(sha=job.sha))
    assert_done_once(store, first)
    before = rows(store)
    limit_pages(store, 4)  # room for the job's row, not for the report
    big = big_report(OTHER_SHA)
    full = run_job(store, lambda job: big, sha=OTHER_SHA)
    assert "full" in (full.error or "")
    assert_failed_clean(store, full, before)
    with store.session() as session:  # the earlier report is intact and still answers
        assert session.get(ReportRow, first.report_id) is not None
        statuses = dict(session.execute(select(VetRow.sha, VetRow.status)).all())
    assert statuses == {SHA: "done", OTHER_SHA: "failed"}


def fill_up(folder: Path) -> Path:
    """A file taking every free byte of ``folder``'s file system."""
    filler = folder / "filler"
    with filler.open("wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass
    return filler


def test_a_real_full_disk_under_sqlite(tmp_path: Path) -> None:
    """The same on a tiny tmpfs that fills up mid-vet (mounting needs root: skipped elsewhere)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)],
                      capture_output=True, check=False).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (not root)")
    try:
        url = f"sqlite:///{mount / 'store.db'}"
        upgrade(url)
        store = Store(url)
        first = run_job(store, lambda job: _report(sha=job.sha))
        before = rows(store)

        big = big_report(OTHER_SHA)  # built first: on a loaded machine building it outlasted the timer below

        def vet_while_the_disk_fills(job: VetJob) -> Report:
            filler = fill_up(mount)  # full as the report is written (at once); space comes back 4 s later,
            threading.Timer(4.0, filler.unlink).start()  # well within the ~16 s the failure's record is retried
            return big

        full = run_job(store, vet_while_the_disk_fills, sha=OTHER_SHA)
        assert "full" in (full.error or ""), full
        assert_failed_clean(store, full, before)
        filler = fill_up(mount)
        with pytest.raises(inprocess.QueueError):  # no room for even the job: refused, nothing recorded (503)
            InProcessQueue(store, vet_while_the_disk_fills, POLICY).submit("acme/model", "main", "3" * 40,
                                                                           requested_by="test")
        filler.unlink()
        assert rows(store) == before
        with store.session() as session:
            assert session.get(ReportRow, first.report_id) is not None
        store.close()
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


# -- reviews of one commit from two processes ---------------------------------------------------------

@pytest.fixture(scope="module")
def vetted(tmp_path_factory: pytest.TempPathFactory) -> Vetted:
    return vet_examples(tmp_path_factory.mktemp("hub"))


def approve_in_a_process(store_url: str, sha: str, who: str, start: Any, out: Any) -> None:
    store = Store(store_url)
    request = ReviewRequest(REVIEW_REPO, sha, "approve", "read the remote code", who, "reviewer")
    start.wait(30)
    try:
        submit_review(store, policy("default"), request)
        out.put((who, "recorded"))
    except ReviewRefused as exc:
        out.put((who, exc.kind))
    finally:
        store.close()


def test_two_processes_approving_one_commit_record_one_approval(store: Store, vetted: Vetted) -> None:
    with store.session() as session:
        save_report(session, vetted.review, requested_revision="main", actor="test")
    sha = vetted.review.revision or ""
    spawn = multiprocessing.get_context("spawn")
    start, out = spawn.Event(), spawn.Queue()
    procs = [spawn.Process(target=approve_in_a_process, args=(store.url, sha, f"token:r{i}", start, out))
             for i in range(2)]
    for proc in procs:
        proc.start()
    time.sleep(2)  # both imported and waiting
    start.set()
    outcomes = sorted(out.get(timeout=60)[1] for _ in procs)
    for proc in procs:
        proc.join(30)
    assert outcomes == ["already-approved", "recorded"]
    with store.session() as session:
        assert session.execute(select(func.count()).select_from(ReviewRow)).scalar_one() == 1
    found = gate(REVIEW_REPO, sha, store=store, policy=policy("default"), resolve=lambda r, v: sha).answer
    assert isinstance(found, Approved)
