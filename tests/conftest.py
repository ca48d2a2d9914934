"""Shared test fixtures. Hostile samples are built at test time; nothing is ever loaded."""

from __future__ import annotations

import os
import tempfile

# The real Hub is unreachable here: make any accidental hub call fail fast instead of hanging.
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_ENDPOINT", "http://127.0.0.1:9")  # and the socket guard blocks the rest

# Every test process gets its own verdict store: nothing lands in the developer's data folder.
os.environ["HFVET_DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp(prefix='hfvet-test-store-')}/hfvet.db"
