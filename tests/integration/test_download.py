"""`hfvet download` end to end: vet through the fixture hub, then fetch with huggingface_hub and verify."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.types import ASGIApp, Receive, Scope, Send
from typer.testing import CliRunner

from app.cli.main import app
from app.examples import build_examples
from app.hubfixture import AppServer
from app.hubfixture.app import create_app
from app.services.downloads import VerificationError, download_approved
from app.services.gating import gate
from app.services.policies import active_policy
from app.services.store import open_store
from app.settings import Settings
from app.sources.hub import HubClient
from app.sources.hub_download import hub_fetcher
from tests.download_support import assert_untouched, destination, tree

NVIDIA = "nvidia/DeepSeek-V4-Flash-NVFP4"
CANADA = "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP"
MISDECLARED = "nvidia/DeepSeek-V4-Flash-NVFP4-misdeclared"  # .hub.json declares a wrong sha256
WRONG_SHA256 = "0" * 64
LFS_FILE = "model-00003-of-00003.safetensors"
runner = CliRunner()


class CountingHub:
    """The fixture hub's app, recording every request path (to prove what was, or was not, fetched)."""

    def __init__(self, inner: ASGIApp) -> None:
        self.inner = inner
        self.paths: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.paths.append(scope["path"])
        await self.inner(scope, receive, send)

    def file_requests(self) -> list[str]:
        return [p for p in self.paths if "/resolve/" in p]


@pytest.fixture
def hub_root(tmp_path: Path) -> Path:
    root = tmp_path / "hub"
    build_examples(root)
    misdeclared = root / MISDECLARED
    shutil.copytree(root / NVIDIA, misdeclared)
    meta = json.loads((misdeclared / ".hub.json").read_text())
    (misdeclared / ".hub.json").write_text(json.dumps(meta | {"sha256": {LFS_FILE: WRONG_SHA256}}))
    return root


@pytest.fixture
def hub(hub_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[CountingHub]:
    monkeypatch.setenv("HFVET_DATABASE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    counting = CountingHub(create_app(hub_root))
    with AppServer(counting) as served:
        monkeypatch.setenv("HF_ENDPOINT", served.url)
        yield counting


@pytest.fixture
def dest(tmp_path: Path) -> Path:
    return destination(tmp_path)


def vet(repo: str) -> None:
    result = runner.invoke(app, ["vet", repo, "--format", "json"])  # under the active policy, `default`
    assert result.exit_code in (0, 1, 3), result.output


def download(repo: str, local_dir: Path, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["download", repo, "--local-dir", str(local_dir), *args])
    return result.exit_code, result.stdout, result.stderr


def repo_files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != ".hub.json"}


def test_the_approved_vendor_repo_downloads_verified(hub: CountingHub, hub_root: Path, tmp_path: Path) -> None:
    vet(NVIDIA)
    sha = runner.invoke(app, ["gate", NVIDIA]).stdout.strip()
    target = tmp_path / "deploy" / "nvidia"
    code, out, err = download(NVIDIA, target)
    assert code == 0, err
    assert out.strip() == sha and "verified 11 files" in err
    assert tree(target) == repo_files(hub_root / NVIDIA)  # exactly the manifest: no .cache, no extras
    assert [p.name for p in target.parent.iterdir()] == ["nvidia"]
    assert all(f"/resolve/{sha}/" in p for p in hub.file_requests())  # the approved commit, never a branch


def test_an_existing_destination_gets_the_files_and_keeps_its_own(
    hub: CountingHub, hub_root: Path, dest: Path
) -> None:
    vet(NVIDIA)
    sha = runner.invoke(app, ["gate", NVIDIA]).stdout.strip()
    code, _, err = download(NVIDIA, dest, "--revision", sha)
    assert code == 0, err
    assert tree(dest) == repo_files(hub_root / NVIDIA) | {"keep.txt": b"mine\n"}


def test_content_that_does_not_match_the_declared_sha256_is_refused(hub: CountingHub, dest: Path) -> None:
    vet(MISDECLARED)  # the hub declares a wrong LFS sha256; the vet reads ranges and records it
    assert runner.invoke(app, ["gate", MISDECLARED]).exit_code == 0
    code, out, err = download(MISDECLARED, dest)
    assert code == 6 and out == ""
    assert f"refused: {LFS_FILE}: sha256" in err and WRONG_SHA256 in err
    assert hub.file_requests()  # it was fetched, verified, and thrown away
    assert_untouched(dest)


def test_a_file_tampered_with_in_transit_is_refused(hub: CountingHub, dest: Path) -> None:
    vet(NVIDIA)
    settings = Settings()
    store = open_store(settings)
    try:
        result = gate(NVIDIA, None, store=store, policy=active_policy(settings), resolve=lambda r, v: v)
    finally:
        store.close()
    sha = result.to_dict()["revision"]
    fetch = hub_fetcher(HubClient.from_settings(settings), NVIDIA, sha)

    def man_in_the_middle(path: str, root: Path) -> None:
        fetch(path, root)  # the real bytes from the hub, then one byte changed
        if path == "config.json":
            data = bytearray((root / path).read_bytes())
            data[0] ^= 0x01
            (root / path).write_bytes(bytes(data))

    with pytest.raises(VerificationError, match=r"config.json: git blob id") as caught:
        download_approved(result, dest, man_in_the_middle)
    assert caught.value.path == "config.json"
    assert_untouched(dest)


def test_a_rejected_repo_is_refused_before_any_byte_is_fetched(hub: CountingHub, dest: Path) -> None:
    vet(CANADA)
    hub.paths.clear()
    code, out, err = download(CANADA, dest)
    assert code == 1 and out == ""
    assert "refused" in err and "(reject)" in err
    assert hub.paths == []  # not a file, not even the model info
    assert_untouched(dest)


def test_a_repo_never_vetted_fetches_nothing(hub: CountingHub, tmp_path: Path) -> None:
    target = tmp_path / "deploy" / "never"
    code, _, err = download(NVIDIA, target, "--revision", "a" * 40)
    assert code == 4 and "hfvet vet" in err
    assert hub.file_requests() == [] and not target.exists()



def test_a_repo_gone_from_the_hub_fails_closed(hub: CountingHub, hub_root: Path, dest: Path) -> None:
    vet(NVIDIA)
    sha = runner.invoke(app, ["gate", NVIDIA]).stdout.strip()
    shutil.rmtree(hub_root / NVIDIA)  # an exact commit gates from the store; the fetch then finds nothing
    code, out, err = download(NVIDIA, dest, "--revision", sha)
    assert code == 2 and out == ""
    assert "cannot fetch it" in err and "not found" in err and "nothing was moved" in err
    assert_untouched(dest)
