"""The demo's service flow: `hfvet serve` against the fixture hub, `POST /vet` for every example, then
`GET /gate` for a vendor and a third-party repo, shown as a deploy script sees it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from rich.console import Console
from rich.text import Text

from app.cli.child_server import ServerStartError, child_server
from app.core import report_json
from app.core.report import Report
from app.errors import HfvetError
from app.services import tokens
from app.services.store import open_store
from app.settings import Settings, child_environment

PROJECT = Path(__file__).resolve().parents[2]  # the child runs this very code, installed or not
START_TIMEOUT = 60.0
VET_WAIT = 120.0
TOKEN_LIFETIME = timedelta(hours=1)  # outlives any demo run
GATED = {"nvidia/DeepSeek-V4-Flash-NVFP4": 200, "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP": 403}


class DemoServiceError(HfvetError):
    """The demo's server did not start or answered something unexpected."""


@dataclass(frozen=True)
class GateView:
    repo: str
    status: int  # the HTTP status a deploy script gets from GET /gate
    doc: dict[str, Any]

    @property
    def as_expected(self) -> bool:
        return GATED.get(self.repo) == self.status


def vetter_token(store_url: str) -> str:
    """A vetter token in the demo's own store (what `hfvet token create --role vetter` does).

    Named by the time and short-lived: a store kept with --keep may be reused by the next demo, and
    must not hold a live token nobody asked for."""
    store = open_store(Settings().model_copy(update={"database_url": SecretStr(store_url)}))
    now = datetime.now(UTC)
    try:
        return tokens.create(store, f"demo-{now:%Y%m%dT%H%M%S.%f}", "vetter", actor="demo",
                             expires_at=now + TOKEN_LIFETIME)
    finally:
        store.close()


@contextmanager
def served_api(hub_url: str, store_url: str, policy: Path, log: Path) -> Iterator[str]:
    """`hfvet serve` as a child process on a free loopback port; yields its URL once /healthz answers."""
    env = child_environment(drop=("HF_TOKEN",), HF_ENDPOINT=hub_url, HFVET_DATABASE_URL=store_url,
                            HFVET_POLICY=str(policy), HF_HUB_DISABLE_TELEMETRY="1",
                            PYTHONPATH=str(PROJECT) + _sep(child_environment().get("PYTHONPATH")))
    try:
        with child_server(env, log, start_timeout=START_TIMEOUT) as url:
            yield url
    except ServerStartError as exc:
        raise DemoServiceError(str(exc)) from exc


def vet_through_api(url: str, token: str, repo: str) -> Report:
    status, doc = call("POST", f"{url}/vet?repo={repo}&wait={VET_WAIT:g}", token)
    if status != 200 or doc.get("report") is None:
        raise DemoServiceError(f"POST /vet {repo} answered {status}: {json.dumps(doc)[:500]}")
    return report_json.load(doc["report"], f"POST /vet {repo}")


def gate_through_api(url: str, repo: str) -> GateView:
    status, doc = call("GET", f"{url}/gate?repo={repo}")
    return GateView(repo, status, doc)


def print_gates(console: Console, url: str, gates: list[GateView]) -> None:
    console.print(Text("\nThe deploy gate, as a deploy script sees it:", style="bold"))
    for view in gates:
        console.print(Text(f"$ curl -s -o answer.json -w '%{{http_code}}' '{url}/gate?repo={view.repo}'",
                           style="dim"), soft_wrap=True)
        if view.status == 200:
            console.print(Text.assemble(("200 approved", "bold green"), f"  pull exactly {view.doc['revision']}"))
            console.print(Text(f"  {view.doc['pins']['vllm']}"), soft_wrap=True)
        else:
            verdict = f" ({view.doc['verdict']})" if "verdict" in view.doc else ""
            console.print(Text.assemble((f"{view.status} {view.doc.get('status', 'refused')}{verdict}", "bold red"),
                                        "  the deploy stops here:"))
            for reason in view.doc.get("reasons") or [view.doc.get("error", {}).get("message", "?")]:
                console.print(Text(f"  - {reason}"))


def call(method: str, url: str, token: str | None = None) -> tuple[int, dict[str, Any]]:
    """One loopback request; a 4xx answer is an answer here, not an exception."""
    request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)  # noqa: S310
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=VET_WAIT + 30) as answer:  # noqa: S310 - our own loopback URL
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def _sep(existing: str | None) -> str:
    return f":{existing}" if existing else ""
