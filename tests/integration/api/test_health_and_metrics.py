"""/metrics is Prometheus text whose vet and gate series move; the server refuses a public address
while no token exists."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from app.db import tokens
from app.db.session import Store, upgrade
from tests.integration.api.conftest import Hub, Live
from tests.integration.api.live import ROOT, free_port, server_env

NVIDIA = "nvidia/DeepSeek-V4-Flash-NVFP4"
CANADA = "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP"


def samples(live: Live) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    answer = httpx.get(f"{live.url}/metrics")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(answer.text) for s in family.samples}


def test_metrics_count_vets_by_outcome_their_duration_and_gate_answers(sqlite_live: Live) -> None:
    before = samples(sqlite_live)
    for repo in (NVIDIA, CANADA):
        answer = httpx.post(f"{sqlite_live.url}/vet", params={"repo": repo, "wait": 60},
                            headers=sqlite_live.auth("vetter"), timeout=90)
        assert answer.status_code == 200, answer.text
    for repo in (NVIDIA, CANADA, CANADA):
        httpx.get(f"{sqlite_live.url}/gate", params={"repo": repo})
    after = samples(sqlite_live)

    def moved(name: str, **labels: str) -> float:
        key = (name, tuple(sorted(labels.items())))
        return after[key] - before.get(key, 0.0)

    assert moved("hfvet_vets_total", status="done", verdict="approve") == 1
    assert moved("hfvet_vets_total", status="done", verdict="reject") == 1
    assert moved("hfvet_vet_duration_seconds_count") == 2
    assert moved("hfvet_vet_duration_seconds_sum") > 0
    assert moved("hfvet_gate_answers_total", status="approved") == 1
    assert moved("hfvet_gate_answers_total", status="denied") == 2


def test_serve_refuses_a_public_address_while_no_token_exists(hub: Hub, tmp_path: Path) -> None:
    assert_refuses_public(server_env(hub.url, f"sqlite:///{tmp_path / 'store.db'}", tmp_path))


def test_serve_refuses_a_public_address_while_only_expired_or_revoked_tokens_exist(hub: Hub, tmp_path: Path) -> None:
    store_url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(store_url)
    store = Store(store_url)
    with store.session() as session:
        tokens.create(session, "lapsed", "admin", actor="test", expires_at=datetime.now(UTC) - timedelta(minutes=1))
        tokens.create(session, "gone", "admin", actor="test")
        tokens.revoke(session, "gone", actor="test")
    store.close()
    assert_refuses_public(server_env(hub.url, store_url, tmp_path))


def assert_refuses_public(env: dict[str, str]) -> None:
    port = free_port()
    try:
        done = subprocess.run([sys.executable, "-m", "app", "serve", "--host", "0.0.0.0", "--port", str(port)],  # noqa: S104
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired as exc:  # it listened: the refusal is missing (run() killed it)
        raise AssertionError("hfvet serve --host 0.0.0.0 started without any token") from exc
    assert done.returncode == 2, done.stderr
    assert "refusing to listen on 0.0.0.0" in done.stderr and "hfvet token create" in done.stderr
