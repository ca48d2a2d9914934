"""Hub stalls: every hub call ends within its bounds (timeouts, deadlines, a floor rate, the
Retry-After cap, the vet's --timeout) with a clear error, and the token never leaves the hub."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from app.cli.main import app as cli
from app.core.limits import Limits
from app.core.verdict import Verdict
from app.services.vetting import vet_remote
from app.settings import Settings
from app.sources.hub import HubClient, HubLimits, HubSource, HubTimeout, HubUnreachable
from tests.integration.hub.faults import REPO, FaultyHub, Sleeps, source
from tests.integration.hub.hubdata import GOOD_TOKEN

INFO, TREE = "/api/models/acme/tiny/revision/main", "/api/models/acme/tiny/tree/"


def tree_listings(app: FaultyHub) -> int:
    return sum(1 for path in app.paths if path.startswith(TREE))


def test_a_stalled_model_info_call_ends_at_the_call_deadline(fault: tuple[FaultyHub, str]) -> None:
    app, url = fault
    app.faults.append(("/revision/", "stall"))
    with pytest.raises(HubTimeout, match=re.escape("0.5s budget of one hub call")):
        source(url, limits=HubLimits(read_seconds=30, call_seconds=0.5))  # no single read may outlast it
    assert app.paths == [INFO]  # one call, ended by its budget: not retried


def test_a_stalled_tree_listing_times_out(fault: tuple[FaultyHub, str]) -> None:
    app, url = fault
    app.faults += [("/tree/", "stall")] * 2
    sleeps = Sleeps()
    with pytest.raises(HubUnreachable, match=re.escape("giving up after 2 attempts (ReadTimeout")):
        source(url, limits=HubLimits(read_seconds=0.3), retries=1, sleep=sleeps)
    assert sleeps == [0.5] and app.paths[0] == INFO and tree_listings(app) == 2


@pytest.mark.parametrize("where", ["/resolve/", "/revision/"])  # a Range body, the model info body
def test_a_body_dripping_below_the_floor_rate_is_cut_off(fault: tuple[FaultyHub, str], where: str) -> None:
    app, url = fault
    limits = HubLimits(min_bytes_per_second=100, rate_grace_seconds=0.3)
    src = source(url, limits=limits, retries=0)
    app.faults.append((where, "drip"))  # 10 bytes a second
    before = len(app.paths)
    with pytest.raises(HubUnreachable, match="below the 100 B/s floor"):  # cut mid-body: the drip would end
        if where == "/resolve/":
            src.read("config.json", 0, 20)
        else:
            source(url, limits=limits, retries=0)
    assert sum(where in path for path in app.paths[before:]) == 1  # one dripped request, not retried


@pytest.mark.parametrize("where", ["/resolve/", "/tree/", "/revision/"])
def test_a_retry_after_beyond_the_cap_fails_at_once(fault: tuple[FaultyHub, str], where: str) -> None:
    app, url = fault
    sleeps = Sleeps()
    src = source(url, sleep=sleeps)
    app.faults.append((where, "rate-limited-long"))  # Retry-After: 3600
    before = app.requests
    refusal = re.escape("retry after 3600s (HTTP 429), longer than the 30s hfvet waits")
    with pytest.raises(HubUnreachable, match=refusal):
        if where == "/resolve/":
            src.read("config.json", 0, 4)
        else:
            source(url, sleep=sleeps)
    assert sleeps == []
    assert app.requests - before == (1 if where != "/tree/" else 2)  # the tree comes after model info


def test_a_redirect_off_the_hub_gets_no_token_and_is_recorded(fault: tuple[FaultyHub, str]) -> None:
    app, url = fault
    src = HubSource.open(REPO, hub=HubClient.create(url, GOOD_TOKEN))
    app.seen.clear()
    app.faults.append(("/resolve/", "redirect-elsewhere"))
    assert src.read("config.json", 0, 4) == b'{"mo'
    port = url.rsplit(":", 1)[1]
    assert app.seen == [(f"127.0.0.1:{port}", True), (f"localhost:{port}", False)]
    assert src.served_by == [url, f"http://localhost:{port}"]


def test_the_vet_budget_covers_a_slow_manifest(fault: tuple[FaultyHub, str]) -> None:
    app, url = fault
    app.faults += [("/revision/", "delay"), ("/tree/", "delay")]  # 1.2s of listing for a 1s budget
    result = CliRunner().invoke(cli, ["vet", REPO, "--endpoint", url, "--timeout", "1"])
    assert result.exit_code == 2, result.output
    assert "the vet's 1s budget (--timeout, HFVET_VET_DEADLINE)" in " ".join(result.output.split())
    assert not [path for path in app.paths if "/resolve/" in path]  # the budget ended it before any file read


def test_the_vet_budget_cuts_a_stalled_range_read(fault: tuple[FaultyHub, str]) -> None:
    app, url = fault
    app.faults.append(("/config.json", "stall"))
    settings = Settings(HF_ENDPOINT=url)
    report = vet_remote(REPO, settings=settings, limits=Limits(max_vet_seconds=1))
    assert sum(path.endswith("/config.json") for path in app.paths) <= 1  # never retried past the budget
    cut = "budget (--timeout, HFVET_VET_DEADLINE)"  # the vet's budget ended the read, not the read timeout
    stuck = [f for f in report.findings if f.path == "config.json" and cut in f.message]
    assert stuck and stuck[0].severity.value == "high" and report.verdict is not Verdict.APPROVE
    assert report.identity["servedBy"] == [url]
