"""A live `hfvet serve` holding every kind of secret never shows one: not in an answer, an error or its log."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.integration.api.conftest import Hub, prepare_store
from tests.integration.api.live import LiveServer, server_env

NVIDIA = "nvidia/DeepSeek-V4-Flash-NVFP4"
SECRETS = {"HF_TOKEN": "hf_sEcReT-hub-token", "HFVET_TOKEN": "hfv_sEcReT-api-token",
           "HFVET_WEBHOOK_SECRET": "sEcReT-webhook"}


def test_no_answer_error_or_log_line_shows_a_secret(hub: Hub, tmp_path: Path) -> None:
    store_url = f"sqlite:///{tmp_path / 'store.db'}"
    tokens = prepare_store(store_url)
    server = LiveServer(server_env(hub.url, store_url, tmp_path, **SECRETS), tmp_path / "serve.log")
    url = server.start()
    vetter = {"Authorization": f"Bearer {tokens['vetter']}"}
    try:
        answers = [
            httpx.post(f"{url}/vet", params={"repo": NVIDIA, "wait": 60}, headers=vetter, timeout=90),
            httpx.post(f"{url}/vet", params={"repo": "nobody/nothing"}, headers=vetter),
            httpx.post(f"{url}/vet", params={"repo": "not a repo"}, headers=vetter),
            httpx.post(f"{url}/vet", params={"repo": NVIDIA}),
            httpx.post(f"{url}/webhooks/huggingface", headers={"X-Webhook-Secret": "guess"}, content=b"{}"),
            httpx.post(f"{url}/webhooks/huggingface", content=b"{}"),
            httpx.post(f"{url}/webhooks/huggingface", headers={"X-Webhook-Secret": SECRETS["HFVET_WEBHOOK_SECRET"]},
                       content=b"not json"),
            httpx.get(f"{url}/gate", params={"repo": NVIDIA}),
            httpx.get(f"{url}/policy"), httpx.get(f"{url}/healthz"), httpx.get(f"{url}/metrics"),
            httpx.get(f"{url}/openapi.json"), httpx.get(f"{url}/nowhere"),
        ]
        answers.append(httpx.get(f"{url}/vet/{answers[0].json()['job']['id']}"))
    finally:
        server.stop()
    assert answers[0].status_code == 200, answers[0].text  # a vet through the hub, with HF_TOKEN
    assert [a.status_code for a in answers[4:7]] == [401, 401, 400]
    for answer in answers:
        text = answer.text + str(answer.headers)
        assert not [name for name, secret in SECRETS.items() if secret in text], (answer.request.url, text[:500])
    log = (tmp_path / "serve.log").read_text()
    assert not [name for name, secret in SECRETS.items() if secret in log]
