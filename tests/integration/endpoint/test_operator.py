"""What an operator meets: a client pointed at the API root is told where the endpoint is, the endpoint's own
port answers a health probe, and the refusal metric counts refusals, not the client's telemetry."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from huggingface_hub import hf_hub_download, snapshot_download
from huggingface_hub.errors import LocalEntryNotFoundError

from tests.integration.endpoint.bytes_probes import metric
from tests.integration.endpoint.conftest import APPROVED, Endpoint, StartEndpoint


def test_an_endpoint_without_its_hub_path_is_told_the_right_one(endpoint: Endpoint, hf_cache: Path) -> None:
    with pytest.raises(LocalEntryNotFoundError, match=rf"set HF_ENDPOINT={endpoint.url}/hub"):
        snapshot_download(APPROVED, endpoint=endpoint.url, token=False, cache_dir=hf_cache)


def test_the_endpoints_own_port_answers_a_health_probe(start_endpoint: StartEndpoint) -> None:
    ep = start_endpoint(hub_port=True)
    assert httpx.get(f"{ep.hub}/healthz", timeout=30).json() == {"status": "ok"}
    assert httpx.get(f"{ep.hub}/gate", params={"repo": APPROVED}, timeout=30).status_code == 404  # only the hub


def test_unserved_paths_are_not_refusals_and_misses_need_a_cache(endpoint: Endpoint, hf_cache: Path) -> None:
    refusals, misses = metric(endpoint, "hfvet_hub_refusals_total", reason="not-found"), \
        metric(endpoint, "hfvet_hub_cache_misses_total")
    assert httpx.get(f"{endpoint.hub}/api/agent-harnesses", timeout=30).status_code == 404
    hf_hub_download(APPROVED, "config.json", endpoint=endpoint.hub, token=False, cache_dir=hf_cache)
    assert metric(endpoint, "hfvet_hub_refusals_total", reason="not-found") == refusals == 0
    assert metric(endpoint, "hfvet_hub_cache_misses_total") == misses == 0


@pytest.mark.parametrize(("path", "code"), [
    ("api/models/-bad/name", "RepoNotFound"),
    ("api/models/org/na..me/revision/main", "RepoNotFound"),
    (f"api/models/{APPROVED}/revision/%C3%BC..x", "RevisionNotFound"),
    (f"{APPROVED}/resolve/a%2F%2Fb/config.json", "RevisionNotFound"),
])
def test_ids_the_hub_refuses_are_refused_before_any_lookup(endpoint: Endpoint, path: str, code: str) -> None:
    answer = httpx.get(f"{endpoint.hub}/{path}", timeout=30)
    assert answer.status_code == 404 and answer.headers["x-error-code"] == code, answer.text
    assert answer.headers["x-error-message"].isascii()
