"""The embedded job runner when storing a finished vet fails: the job fails visibly, it never hangs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError

from app.db.session import Store, upgrade
from app.jobs import inprocess
from app.jobs.inprocess import InProcessQueue

SHA = "a" * 40


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    upgrade(store_url)
    opened = Store(store_url)
    yield opened
    opened.close()


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

