"""A hub that accepts requests and never answers them is found out fast: each call waits for it
twice at most, the vet's other calls not at all, and `hfvet vet` without `--timeout` ends well
within a minute (issue 25, item 6), failing closed with the stall and the hub named."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.hubfixture import AppServer, create_app
from app.sources.hub import HubLimits, HubStalled
from app.sources.hub_http import RetryPolicy
from tests.integration.hub.faults import REPO, SilentHub, source

ROOT = Path(__file__).resolve().parents[3]
CONTRACT_SECONDS = 60  # issue 25: a silent hub ends a vet without --timeout within a minute


@pytest.fixture
def silent_range_reads(hub_root: Path) -> Iterator[tuple[SilentHub, str]]:
    hub = SilentHub(create_app(hub_root), "/resolve/")
    with AppServer(hub) as server:
        yield hub, server.url


def test_once_a_read_gave_up_on_a_silent_hub_the_next_read_is_not_sent(
    silent_range_reads: tuple[SilentHub, str],
) -> None:
    hub, url = silent_range_reads
    src = source(url, limits=HubLimits(read_seconds=0.3))
    with pytest.raises(HubStalled, match=rf"giving up after 2 attempts \(ReadTimeout: the hub at {url} sent nothing"):
        src.read("config.json", 0, 10)
    assert hub.stalled == 2  # one retry after the first silence, not four
    with pytest.raises(HubStalled, match=r"README\.md bytes 0-9: not sent, the hub stalled earlier in this vet"):
        src.read("README.md", 0, 10)
    assert hub.stalled == 2


@pytest.mark.parametrize(("fragment", "stall"), [("/tree/", "file tree of acme/tiny@"), ("/resolve/", "bytes 0-")])
def test_vet_without_timeout_ends_within_a_minute_on_a_silent_hub(
    hub_root: Path, tmp_path: Path, fragment: str, stall: str,
) -> None:
    hub = SilentHub(create_app(hub_root), fragment)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HFVET_", "HUGGING"))}
    env |= {"PYTHONPATH": str(ROOT), "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_DISABLE_XET": "1"}
    with AppServer(hub) as server:
        done = subprocess.run([sys.executable, "-m", "app", "vet", REPO, "--endpoint", server.url, "--no-store"],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=3 * CONTRACT_SECONDS)
    said = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 2, said  # an operational error: no verdict, nothing a gate could read as one
    assert stall in said and "the hub stalled" in said and f"the hub at {server.url} sent nothing" in said
    # The vet's waiting, counted rather than timed: the requests the hub left unanswered (the vet's other
    # calls not sent), each waited for as long as the vet says, with one backoff between the two attempts.
    waited = re.search(rf"the hub at {re.escape(server.url)} sent nothing for ([\d.]+)s", said)
    assert waited and hub.stalled == 2, said
    assert hub.stalled * float(waited.group(1)) + RetryPolicy().backoff < CONTRACT_SECONDS
