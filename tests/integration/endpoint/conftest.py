"""The Hub endpoint under test: a live `hfvet serve` (a subprocess) whose upstream is the fixture hub over the
example repos, behind a wrapper that counts file reads and can tamper with bytes or cut a body short; the
real huggingface_hub client pulls through it (in process, with its own cache folder per test).

Verdicts of the example repos at their main commits (vetted before the server starts):
nvidia/DeepSeek-V4-Flash-NVFP4 approve; nvidia/Nemotron-Mini-Custom-Code review (remote code);
quantfarm/Llama-3.1-8B-Instruct-pt reject; nvldia/DeepSeek-V4-Flash-NVFP4 reject (look-alike org);
canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP is left unvetted.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from typer.testing import CliRunner

from app.cli.main import app as cli
from app.examples import build_examples
from app.hubfixture import AppServer, create_app
from tests.integration.api.conftest import prepare_store
from tests.integration.api.live import LiveServer, server_env

APPROVED = "nvidia/DeepSeek-V4-Flash-NVFP4"
REVIEW = "nvidia/Nemotron-Mini-Custom-Code"
REJECTED = "quantfarm/Llama-3.1-8B-Instruct-pt"
LOOKALIKE = "nvldia/DeepSeek-V4-Flash-NVFP4"
UNVETTED = "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP"
VETTED = (APPROVED, REVIEW, REJECTED, LOOKALIKE)


class UpstreamHub:
    """The fixture hub app; file GETs counted by path (``reads``); a path in ``tamper`` gets its last byte
    flipped (same length: only the hash can tell), one in ``cut`` ends half-way (a dead upstream), one in
    ``gone`` is 404 EntryNotFound (a commit squashed away upstream); ``seen_auth`` is the Authorization
    header of every request (None: none sent)."""

    def __init__(self, inner: ASGIApp) -> None:
        self.inner = inner
        self.reads: Counter[str] = Counter()
        self.tamper: set[str] = set()
        self.cut: set[str] = set()
        self.gone: set[str] = set()
        self.delay = 0.0  # seconds each file GET is held back: clients started together then overlap
        self.seen_auth: list[str | None] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http":
            self.seen_auth.append(Headers(scope=scope).get("authorization"))
        if scope["type"] == "http" and "/resolve/" in path and _name(path) in self.gone:
            await JSONResponse({"error": "gone"}, 404, {"X-Error-Code": "EntryNotFound"})(scope, receive, send)
            return
        if scope["type"] != "http" or "/resolve/" not in path or scope["method"] != "GET":
            await self.inner(scope, receive, send)
            return
        name = _name(path)
        self.reads[name] += 1
        if self.delay:
            await asyncio.sleep(self.delay)
        if name in self.tamper or name in self.cut:
            await self.inner(scope, receive, self._altered(send, cut=name in self.cut))
            return
        await self.inner(scope, receive, send)

    def _altered(self, send: Send, *, cut: bool) -> Send:
        body = bytearray()

        async def sending(message: Message) -> None:
            if message["type"] != "http.response.body":
                await send(message)
                return
            body.extend(message.get("body", b""))
            if message.get("more_body", False):
                return
            if cut:
                await send({"type": "http.response.body", "body": bytes(body[: len(body) // 2]), "more_body": True})
                raise ConnectionResetError("the upstream hub went away")  # uvicorn closes the connection
            body[-1] ^= 0xFF
            await send({"type": "http.response.body", "body": bytes(body), "more_body": False})

        return sending

    def reset(self) -> None:
        self.reads.clear()
        self.tamper.clear()
        self.cut.clear()
        self.gone.clear()
        self.delay = 0.0
        self.seen_auth.clear()


def _name(path: str) -> str:
    """The file of a /{org}/{name}/resolve/{rev}/{file} path."""
    return path.split("/resolve/", 1)[1].split("/", 1)[1]


@dataclass
class Upstream:
    app: UpstreamHub
    url: str
    root: Path


@dataclass
class Endpoint:
    """A live server: ``hub`` is the Hub endpoint's URL (HF_ENDPOINT for clients), ``tokens`` one per role."""

    url: str
    hub: str
    store_url: str
    upstream: Upstream
    server: LiveServer
    tokens: dict[str, str] = field(default_factory=dict)


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upstream]:
    """A fixture hub of this module's own: tests may tamper with its answers (reset after each test)."""
    root = tmp_path_factory.mktemp("endpoint-hub")
    build_examples(root)
    app = UpstreamHub(create_app(root))
    with AppServer(app) as server:
        yield Upstream(app, server.url, root)


@pytest.fixture(autouse=True)
def _clean_upstream(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "upstream" in request.fixturenames:
        request.getfixturevalue("upstream").app.reset()


def vet(upstream: Upstream, store_url: str, repo: str, *args: str) -> None:
    result = CliRunner().invoke(cli, ["vet", repo, *args],
                                env={"HF_ENDPOINT": upstream.url, "HFVET_DATABASE_URL": store_url})
    assert result.exit_code in (0, 1, 3), result.output  # vetted: approve 0, reject 1, review 3


StartEndpoint = Callable[..., Endpoint]


@pytest.fixture(scope="module")
def start_endpoint(upstream: Upstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StartEndpoint]:
    """Start a server over a fresh SQLite store with VETTED vetted; ``hub_port=True`` adds `--hub-port`;
    keyword settings become HFVET_* variables (``hub_cache_dir="..."``). Every server started is stopped."""
    started: list[LiveServer] = []

    def start(*, hub_port: bool = False, **settings: str) -> Endpoint:
        home = tmp_path_factory.mktemp("endpoint")
        store_url = f"sqlite:///{home / 'store.db'}"
        tokens = prepare_store(store_url)
        for repo in VETTED:
            vet(upstream, store_url, repo)
        extra = {f"HFVET_{name.upper()}": value for name, value in settings.items()}
        server = LiveServer(server_env(upstream.url, store_url, home, **extra), home / "serve.log", hub_port=hub_port)
        started.append(server)
        server.start()
        upstream.app.reset()  # the vets' reads are not the endpoint's
        return Endpoint(server.url, server.hub_url, store_url, upstream, server, tokens)

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def endpoint(start_endpoint: StartEndpoint) -> Endpoint:
    """The default server of a module: mounted at /hub, no cache, reads open."""
    return start_endpoint()


@pytest.fixture
def hf_cache(tmp_path: Path) -> Path:
    """huggingface_hub's cache for one test (pass as ``cache_dir=``)."""
    return tmp_path / "hf-cache"


def cache_files(cache: Path) -> list[str]:
    """Every file and link in a huggingface_hub cache folder, relative (blobs, snapshots, .incomplete)."""
    return sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file() or p.is_symlink())
