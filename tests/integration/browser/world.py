"""The dashboard's live world, shared by the browser tests and scripts/screenshots.py: the fixture hub
over the demo repos plus a third-party mirror with two revisions, a real `hfvet serve` that vetted
them all through POST /vet, tokens made with the CLI, and Debian's Chromium driven by Playwright."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from playwright.sync_api import BrowserContext, sync_playwright

from app.examples import EXAMPLES, build_examples
from app.hubfixture import FixtureHub
from tests.integration.api.live import create_token, server_env
from tests.integration.api.served import live_server

CHROMIUM = Path("/usr/bin/chromium")  # Debian's package; Playwright's own browser download is never used
CHROMIUM_ARGS = (
    "--no-sandbox",  # the suite may run as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    # Without these Chromium phones home (updates, sync, QUIC probes) into a closed network.
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
APPROVED = "nvidia/DeepSeek-V4-Flash-NVFP4"
REJECTED = "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP"
VENDOR_REVIEW = "nvidia/Nemotron-Mini-Custom-Code"
# A clean copy of the vendor repo under a third-party org: the default policy sends it to a human.
MIRROR = "mirrorworks/DeepSeek-V4-Flash-NVFP4"
# On a line of its own, so the diff shows it as one added line rather than a changed one-line template.
TEMPLATE_EDIT = "\n{%- if tools %}{{ '<|tool_prompt|>' + (tools | tojson) }}{%- endif %}"
VET_WAIT = 120.0


@dataclass(frozen=True)
class World:
    url: str  # the live `hfvet serve`
    store_url: str
    tokens: dict[str, str]  # role -> secret
    shas: dict[str, str]  # demo repo id, "mirror-v1", "mirror-v2" -> the vetted commit
    hub_url: str  # the fixture hub the server reads (its HF_ENDPOINT)


def build_hub(root: Path) -> None:
    """The demo repos, and MIRROR at `main` and at branch `v2`, which adds a tools block to the chat template."""
    build_examples(root)
    mirror = root / MIRROR
    shutil.copytree(root / APPROVED, mirror)
    meta_path = mirror / ".hub.json"
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps(meta | {"author": MIRROR.split("/")[0]}, indent=2))
    v2 = mirror / ".revisions" / "v2"
    shutil.copytree(mirror, v2, ignore=shutil.ignore_patterns(".revisions", ".hub.json"))
    config_path = v2 / "tokenizer_config.json"
    config = json.loads(config_path.read_text())
    config["chat_template"] += TEMPLATE_EDIT
    config_path.write_text(json.dumps(config, indent=2))


def vet(client: httpx.Client, token: str, repo: str, revision: str = "main") -> str:
    """POST /vet and wait for the report, as the demo does; returns the vetted commit."""
    answer = client.post(
        "/vet",
        params={"repo": repo, "revision": revision, "wait": VET_WAIT},
        headers={"Authorization": f"Bearer {token}"},
        timeout=VET_WAIT + 30,
    )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["report"]["revision"])


# Every demo repo at main (keyed by repo id), then the mirror's two revisions, v2 last (the newest).
VETS = (
    *((ex.repo_id, ex.repo_id, "main") for ex in EXAMPLES),
    ("mirror-v1", MIRROR, "main"),
    ("mirror-v2", MIRROR, "v2"),
)


@contextmanager
def live_world(workdir: Path) -> Iterator[World]:
    """Hub, store, tokens and a vetted `hfvet serve` under ``workdir``; everything stops when the block ends."""
    root = workdir / "hub"
    build_hub(root)
    store_url = f"sqlite:///{workdir / 'store.db'}"
    tokens = {role: create_token(store_url, role, f"{role}-1") for role in ("reader", "vetter", "reviewer")}
    with FixtureHub(root) as hub, live_server(server_env(hub.url, store_url, workdir), workdir / "serve.log") as url:
        with httpx.Client(base_url=url) as client:
            shas = {key: vet(client, tokens["vetter"], repo, revision) for key, repo, revision in VETS}
        yield World(url, store_url, tokens, shas, hub.url)


@contextmanager
def chromium(profile: Path) -> Iterator[BrowserContext]:
    """Headless Debian Chromium with a fresh profile in ``profile``, through Playwright."""
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=list(CHROMIUM_ARGS),
            viewport={"width": 1280, "height": 800},
        )
        try:
            yield context
        finally:
            context.close()
