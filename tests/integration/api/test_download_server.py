"""`hfvet download --server URL`: the gate's answer and manifest come from a live `hfvet serve`, the
bytes from the hub at that answer's commit, each checked against that answer's hashes before moving in.

The client side has a store of its own that must stay unused: the server is the only authority."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from app.cli.main import app
from app.examples import build_examples
from app.hubfixture import AppServer, create_app
from tests.download_support import assert_untouched as shared_untouched
from tests.download_support import destination, tree
from tests.integration.api.live import SlowHub
from tests.integration.api.served import hfvet, live_server
from tests.integration.api.test_gate_client import CannedServer

NVIDIA = "nvidia/DeepSeek-V4-Flash-NVFP4"
CANADA = "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP"
LFS_FILE = "model-00003-of-00003.safetensors"
runner = CliRunner()


@dataclass
class Served:
    url: str
    hub: SlowHub  # counts the files fetched from the hub
    hub_url: str
    hub_root: Path
    token: str
    client_store: Path  # the downloading machine's own store: never created
    fetched: int = 0  # hub file requests of the last download

    def client_env(self, **extra: str) -> dict[str, str]:
        return {"HF_ENDPOINT": self.hub_url, "HFVET_DATABASE_URL": f"sqlite:///{self.client_store}",
                "HFVET_TOKEN": self.token, "HFVET_SERVER": "", "HF_HUB_DISABLE_XET": "1"} | extra

    def answer(self, repo: str = NVIDIA) -> dict[str, Any]:
        reply = httpx.get(f"{self.url}/gate", params={"repo": repo},
                          headers={"Authorization": f"Bearer {self.token}"}, timeout=30)
        assert reply.status_code == 200, reply.text
        return reply.json()  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """nvidia approved, canada-quant rejected, in the store of a server that wants reader tokens."""
    tmp = tmp_path_factory.mktemp("download-server")
    build_examples(tmp / "hub")
    hub = SlowHub(create_app(tmp / "hub"))
    with AppServer(hub) as hub_server:
        env = {"HF_ENDPOINT": hub_server.url, "HFVET_DATABASE_URL": f"sqlite:///{tmp / 'server.db'}",
               "HFVET_READ_AUTH": "1", "HF_HOME": str(tmp / "server-hf-home")}
        for repo in (NVIDIA, CANADA):
            vetted = runner.invoke(app, ["vet", repo, "--format", "json"], env=env)
            assert vetted.exit_code in (0, 1), vetted.output
        created = runner.invoke(app, ["token", "create", "--role", "reader", "--name", "deploy"], env=env)
        assert created.exit_code == 0, created.output
        with live_server(env, tmp / "serve.log") as url:
            yield Served(url, hub, hub_server.url, tmp / "hub", created.stdout.strip().splitlines()[-1],
                         tmp / "client" / "store.db")


@pytest.fixture
def dest(tmp_path: Path) -> Path:
    return destination(tmp_path)


def download(served: Served, repo: str, local_dir: Path, *args: str, server: str | None = None,
             **env: str) -> tuple[int, str, str]:
    reads = served.hub.file_reads
    result = runner.invoke(app, ["download", repo, "--local-dir", str(local_dir), "--server", server or served.url,
                                 *args], env=served.client_env(HF_HOME=str(local_dir.parent / "hf-home"), **env))
    served.fetched = served.hub.file_reads - reads
    assert not served.client_store.exists()  # the server decided; the local store was never opened
    return result.exit_code, result.stdout, result.stderr


def repo_files(root: Path) -> dict[str, bytes]:
    return {k: v for k, v in tree(root).items() if k != ".hub.json"}


def assert_untouched(dest: Path) -> None:
    shared_untouched(dest, beside=frozenset({"hf-home"}))


def test_the_servers_approval_is_downloaded_and_verified(served: Served, tmp_path: Path) -> None:
    sha = served.answer()["revision"]
    target = tmp_path / "deploy" / "nvidia"
    code, out, err = download(served, NVIDIA, target)
    assert code == 0, err
    assert out.strip() == sha and "verified 11 files" in err
    assert tree(target) == repo_files(served.hub_root / NVIDIA)


def test_the_server_comes_from_hfvet_server_in_a_fresh_process(served: Served, tmp_path: Path) -> None:
    target = tmp_path / "deploy" / "nvidia"
    env = served.client_env(HFVET_SERVER=served.url, HF_HOME=str(tmp_path / "hf-home"))
    result = hfvet("download", NVIDIA, "--local-dir", str(target), env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == served.answer()["revision"]
    assert tree(target) == repo_files(served.hub_root / NVIDIA)
    assert not served.client_store.exists()


def test_a_repo_the_server_rejects_fetches_nothing(served: Served, dest: Path) -> None:
    code, out, err = download(served, CANADA, dest)
    assert (code, out) == (1, "") and "(reject)" in err
    assert served.fetched == 0
    assert_untouched(dest)


def test_a_commit_the_server_never_vetted_fetches_nothing(served: Served, dest: Path) -> None:
    code, _, err = download(served, NVIDIA, dest, "--revision", "a" * 40)
    assert code == 4 and "hfvet vet" in err
    assert served.fetched == 0
    assert_untouched(dest)


def test_without_a_token_the_server_refuses_and_nothing_is_fetched(served: Served, dest: Path) -> None:
    code, out, err = download(served, NVIDIA, dest, HFVET_TOKEN="")
    assert (code, out) == (2, "") and "token-required" in " ".join(err.split())
    assert served.fetched == 0
    assert_untouched(dest)


def test_bytes_that_do_not_match_the_servers_hashes_are_refused(served: Served, dest: Path) -> None:
    """The server's manifest is what is checked: a hash it states that the hub's bytes do not have."""
    answer = served.answer()
    entry = next(f for f in answer["files"] if f["path"] == LFS_FILE)
    entry["sha256"] = "0" * 64
    with CannedServer(200, json.dumps(answer).encode()) as url:
        code, out, err = download(served, NVIDIA, dest, server=url)
    assert (code, out) == (6, "")
    assert f"{LFS_FILE}: sha256" in err and "0" * 64 in err
    assert_untouched(dest)


def _broken(change: str) -> Any:
    def apply(answer: dict[str, Any]) -> dict[str, Any]:
        broken = copy.deepcopy(answer)
        files = broken["files"]
        if change == "files-missing":
            del broken["files"]
        elif change == "files-empty":
            broken["files"] = []
        elif change == "files-not-a-list":
            broken["files"] = {"config.json": files[0]}
        elif change == "no-hashes":
            files[0] |= {"sha256": None, "blob_id": None}
        elif change == "sha256-not-hex":
            next(f for f in files if f["sha256"])["sha256"] = "not-a-sha256"
        elif change == "blob-id-short":
            next(f for f in files if not f["sha256"])["blob_id"] = "abc"
        elif change == "size-not-a-number":
            files[0]["size"] = "many"
        elif change == "path-escapes":
            files[0]["path"] = "../outside.json"
        elif change == "listed-twice":
            files.append(dict(files[0]))
        elif change == "revision-not-a-commit":
            broken["revision"] = "main"
        elif change == "revision-upper-case":
            broken["revision"] = broken["revision"].upper()
        elif change == "approved-false":
            broken["approved"] = False
        return broken

    return apply


@pytest.mark.parametrize("change", ["files-missing", "files-empty", "files-not-a-list", "no-hashes",
                                    "sha256-not-hex", "blob-id-short", "size-not-a-number", "path-escapes",
                                    "listed-twice", "revision-not-a-commit", "revision-upper-case",
                                    "approved-false"])
def test_an_inconsistent_server_answer_fails_closed_before_any_fetch(served: Served, dest: Path,
                                                                       change: str) -> None:
    broken = _broken(change)(served.answer())
    with CannedServer(200, json.dumps(broken).encode()) as url:
        code, out, err = download(served, NVIDIA, dest, server=url)
    assert (code, out) == (2, ""), err
    says = "not well-formed" if change.startswith(("revision", "approved")) else "cannot be verified"
    assert says in " ".join(err.split()) and "so nothing was fetched" in " ".join(err.split())
    assert served.fetched == 0
    assert_untouched(dest)
