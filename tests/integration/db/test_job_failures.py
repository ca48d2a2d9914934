"""The embedded job runner when the store fails: a job fails visibly, never hangs; a batch is all or none."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError

from app.db.models import AuditRow, VetRow
from app.db.session import Store
from app.jobs import inprocess
from app.jobs.inprocess import InProcessQueue

SHA = "a" * 40



def test_a_job_whose_report_cannot_be_stored_is_failed_not_left_running(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> int:
        raise OperationalError("INSERT INTO reports", {}, Exception("disk full"))

    monkeypatch.setattr(inprocess, "save_report", refuse)
    queue = InProcessQueue(store, lambda job: object(), ("default", "0" * 64), workers=1)  # type: ignore[arg-type,return-value]
    queue.start()
    try:
        job = queue.submit("org/name", "main", SHA, requested_by="test")
        done = queue.wait(job.id, 10)
    finally:
        queue.stop()
    assert done is not None and done.status == "failed" and done.report_id is None
    assert done.error is not None and "cannot store the report" in done.error



def test_several_vets_are_queued_all_or_none(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A webhook's refs are one request: a fault on the second leaves not even the first recorded."""
    real = inprocess.rows.create_or_join
    calls: list[str] = []

    def second_fails(session: Any, repo: str, revision: str, sha: str, *args: Any) -> Any:
        calls.append(revision)
        if len(calls) == 2:
            raise OperationalError("INSERT INTO vets", {}, Exception("disk full"))
        return real(session, repo, revision, sha, *args)

    monkeypatch.setattr(inprocess.rows, "create_or_join", second_fails)
    ran: list[object] = []
    queue = InProcessQueue(store, ran.append, ("default", "0" * 64), workers=1)  # type: ignore[arg-type]
    queue.start()
    try:
        with pytest.raises(inprocess.QueueError, match="nothing was queued"):
            queue.submit_all([("org/name", "main", SHA), ("org/name", "v1", "b" * 40)], requested_by="webhook")
    finally:
        queue.stop()
    assert calls == ["main", "v1"] and ran == []
    with store.session() as session:
        assert session.execute(select(func.count()).select_from(VetRow)).scalar_one() == 0
        assert session.execute(select(func.count()).select_from(AuditRow)).scalar_one() == 0


def test_several_vets_queued_together_each_get_a_job_and_a_repeat_joins_them(store: Store) -> None:
    queue = InProcessQueue(store, lambda job: object(), ("default", "0" * 64), workers=1)  # type: ignore[arg-type,return-value]
    wanted = [("org/name", "main", SHA), ("org/name", "v1", "b" * 40), ("org/name", "v1-tag", SHA)]
    jobs = queue.submit_all(wanted, requested_by="webhook")  # not started: they stay queued
    assert [j.sha for j in jobs] == [SHA, "b" * 40, SHA] and jobs[0].id == jobs[2].id  # same commit: one job
    again = queue.submit_all(wanted, requested_by="webhook")
    assert [j.id for j in again] == [j.id for j in jobs]
    with store.session() as session:
        assert session.execute(select(func.count()).select_from(VetRow)).scalar_one() == 2
