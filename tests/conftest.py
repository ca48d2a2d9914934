"""Shared test fixtures. Hostile samples are built at test time; nothing is ever loaded."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from app.db.session import Store

# The real Hub is unreachable here: make any accidental hub call fail fast instead of hanging.
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_ENDPOINT", "http://127.0.0.1:9")  # and the socket guard blocks the rest

# Every test process gets its own verdict store: nothing lands in the developer's data folder.
os.environ["HFVET_DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp(prefix='hfvet-test-store-')}/hfvet.db"


def pytest_configure(config: pytest.Config) -> None:
    from tests import outcome_count

    outcome_count.install(config)  # a run that collects a test and reports no outcome for it fails


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A migrated SQLite store of the test's own, opened for it and closed after it. (The store tests in
    tests/integration/db/ replace it with one per backend.)"""
    from app.db.session import Store, upgrade  # here: tests that need no store import no database code

    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    opened = Store(url)
    yield opened
    opened.close()
