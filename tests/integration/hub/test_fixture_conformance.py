"""The unmodified huggingface_hub client against the fixture hub: it must not tell the difference."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import httpx
import pytest
from huggingface_hub import HfApi, HfFileSystem, hf_hub_download, snapshot_download
from huggingface_hub.errors import (
    DisabledRepoError,
    GatedRepoError,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.hf_api import RepoFile, RepoFolder
from huggingface_hub.utils.sha import git_hash

from tests.integration.hub.hubdata import GOOD_TOKEN, SPARSE_SHA, SPARSE_SIZE, sha256_of

HEX40 = re.compile(r"[0-9a-f]{40}")
REPO = "acme/tiny"


@pytest.fixture
def api(hub_url: str) -> HfApi:
    return HfApi(endpoint=hub_url, token=False)


def test_model_info_files_metadata_matches_content(api: HfApi, hub_root: Path) -> None:
    info = api.model_info(REPO, files_metadata=True, securityStatus=True)
    assert info.sha is not None and HEX40.fullmatch(info.sha)
    assert info.id == REPO and info.author == "acme" and info._id == "65f0c0ffee0000000000abcd"
    assert info.card_data is not None and info.card_data.to_dict()["base_model"] == "acme/base"
    assert info.downloads == 42 and info.gated is False and info.private is False
    assert info.security_repo_status == {"scansDone": False, "filesWithIssues": []}
    siblings = {s.rfilename: s for s in info.siblings or []}
    assert set(siblings) == {
        "config.json",
        "README.md",
        "sub/dir/with space.txt",
        "model.safetensors",
        "huge.safetensors",
    }  # .hub.json and .revisions never leak
    config = hub_root / REPO / "config.json"
    assert siblings["config.json"].blob_id == git_hash(config.read_bytes())
    assert siblings["config.json"].lfs is None
    weights = hub_root / REPO / "model.safetensors"
    lfs = siblings["model.safetensors"].lfs
    assert lfs is not None and lfs.sha256 == sha256_of(weights) and lfs.size == weights.stat().st_size
    spec = "version https://git-lfs.github.com/spec/v1"
    pointer = f"{spec}\noid sha256:{lfs.sha256}\nsize {lfs.size}\n".encode()
    assert lfs.pointer_size == len(pointer)
    assert siblings["model.safetensors"].blob_id == git_hash(pointer)


class _CountedFile:
    """A file opened by the fixture hub, counting the bytes read from it."""

    def __init__(self, inner: IO[bytes], counts: list[int]) -> None:
        self._inner, self._counts = inner, counts

    def read(self, size: int = -1) -> bytes:
        data = self._inner.read(size)
        self._counts.append(len(data))
        return data

    def __enter__(self) -> _CountedFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_sparse_3gb_file_is_served_instantly(api: HfApi, hub_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[int] = []  # bytes the hub (a thread of this process) reads from the 3 GB file
    open_path = Path.open

    def counted(path: Path, *args: Any, **kwargs: Any) -> Any:
        opened = open_path(path, *args, **kwargs)
        return _CountedFile(opened, read) if path.name == "huge.safetensors" else opened

    monkeypatch.setattr(Path, "open", counted)
    info = api.model_info(REPO, files_metadata=True)
    huge = next(s for s in info.siblings or [] if s.rfilename == "huge.safetensors")
    # The declared (fake) digest comes back: the 3 GB were never read to answer.
    assert huge.lfs is not None and huge.lfs.sha256 == SPARSE_SHA and huge.size == SPARSE_SIZE
    tail = httpx.get(
        f"{hub_url}/{REPO}/resolve/main/huge.safetensors", headers={"Range": f"bytes={SPARSE_SIZE - 4}-"}
    )
    assert tail.status_code == 206 and tail.content == b"\0" * 4
    assert tail.headers["content-range"] == f"bytes {SPARSE_SIZE - 4}-{SPARSE_SIZE - 1}/{SPARSE_SIZE}"
    assert sum(read) == 4  # never hashed; the range is sought, not read up to


def test_revisions_by_branch_tag_pr_and_sha(api: HfApi) -> None:
    main = api.model_info(REPO).sha
    refs = api.list_repo_refs(REPO, include_pull_requests=True)
    branches = {b.name: b.target_commit for b in refs.branches}
    assert branches["main"] == main and branches["dev"] == branches["v1"] != main
    assert {t.name: t.target_commit for t in refs.tags} == {"v1.0": branches["v1"]}
    assert [(p.ref, p.target_commit) for p in refs.pull_requests or []] == [
        ("refs/pr/1", api.model_info(REPO, revision="refs/pr/1").sha)
    ]
    old = api.model_info(REPO, revision="v1.0")
    assert old.sha == branches["v1"]
    assert old.card_data is not None and old.card_data.to_dict()["base_model"] == "acme/older"
    assert api.model_info(REPO, revision=branches["v1"]).sha == branches["v1"]
    assert api.model_info(REPO, revision="refs/heads/dev").sha == branches["v1"]
    with pytest.raises(RevisionNotFoundError):
        api.model_info(REPO, revision="no-such-branch")
    with pytest.raises(RevisionNotFoundError):
        api.model_info(REPO, revision="f" * 40)


def test_commit_sha_is_a_stable_digest_of_the_tree(hub_root: Path, api: HfApi) -> None:
    repo = hub_root / "acme" / "drift"
    repo.mkdir(parents=True)
    (repo / "config.json").write_text("{}")
    first = api.model_info("acme/drift").sha
    assert api.model_info("acme/drift").sha == first
    (repo / "config.json").write_text('{"changed": 1}')  # a push
    assert api.model_info("acme/drift").sha not in (None, first)


def test_list_repo_tree_paginates_and_expands(api: HfApi, hub_url: str) -> None:
    entries = list(api.list_repo_tree(REPO, recursive=True))  # page size 2: several Link hops
    files = {e.path for e in entries if isinstance(e, RepoFile)}
    assert files == {s.rfilename for s in api.model_info(REPO).siblings or []}
    assert {e.path for e in entries if isinstance(e, RepoFolder)} == {"sub", "sub/dir"}
    top = [e.path for e in api.list_repo_tree(REPO, path_in_repo="sub/dir", expand=True)]
    assert top == ["sub/dir/with space.txt"]
    expanded = next(iter(api.list_repo_tree(REPO, path_in_repo="sub/dir", expand=True)))
    assert isinstance(expanded, RepoFile) and expanded.last_commit is not None
    assert expanded.last_commit.title == "Second upload"
    link = httpx.get(f"{hub_url}/api/models/{REPO}/tree/main", params={"recursive": "true"}).headers["link"]
    assert link.startswith(f"<{hub_url}/api/models/{REPO}/tree/main?") and 'rel="next"' in link
    with pytest.raises(RemoteEntryNotFoundError):
        list(api.list_repo_tree(REPO, path_in_repo="nope"))


def test_paths_info_form_and_json_bodies(api: HfApi, hub_url: str, hub_root: Path) -> None:
    found = api.get_paths_info(REPO, ["config.json", "sub", "missing.txt"])
    assert [(type(e).__name__, e.path) for e in found] == [("RepoFile", "config.json"), ("RepoFolder", "sub")]
    raw = httpx.post(
        f"{hub_url}/api/models/{REPO}/paths-info/main", json={"paths": ["model.safetensors"], "expand": True}
    )
    [entry] = raw.json()
    assert entry["lfs"] == {
        "oid": sha256_of(hub_root / REPO / "model.safetensors"),
        "size": 10240,
        "pointerSize": 130,
    }
    assert entry["lastCommit"]["title"] == "Second upload" and "xetHash" not in entry


def test_commits_follow_parents(api: HfApi) -> None:
    commits = api.list_repo_commits(REPO, formatted=True)
    assert [c.title for c in commits] == ["Second upload", "First upload"]
    assert commits[0].commit_id == api.model_info(REPO).sha
    assert commits[0].formatted_title == "Second upload"


def test_hf_hub_download_regular_lfs_and_quoted_path(hub_url: str, hub_root: Path, cache_dir: str) -> None:
    opts = {"endpoint": hub_url, "cache_dir": cache_dir, "token": False}
    weights = hf_hub_download(REPO, "model.safetensors", **opts)
    source = hub_root / REPO / "model.safetensors"
    assert Path(weights).read_bytes() == source.read_bytes()
    assert Path(weights).resolve().name == sha256_of(source)  # cache blob named by the LFS etag
    spaced = hf_hub_download(REPO, "sub/dir/with space.txt", **opts)
    assert Path(spaced).read_bytes() == b"spaced out\n"
    old = hf_hub_download(REPO, "config.json", revision="refs/pr/1", **opts)
    assert Path(old).read_bytes() == b'{"pr": 1}\n'


def test_snapshot_download_at_sha_verifies(api: HfApi, hub_url: str, tmp_path: Path) -> None:
    sha = api.model_info(REPO, revision="v1").sha
    assert sha is not None
    local = snapshot_download(REPO, revision=sha, endpoint=hub_url, local_dir=tmp_path / "snap", token=False)
    assert (Path(local) / "config.json").read_bytes() == b'{"model_type": "tiny", "old": true}\n'
    check = api.verify_repo_checksums(REPO, revision=sha, local_dir=local)
    assert check.mismatches == [] and check.missing_paths == [] and check.checked_count == 1


def test_hffilesystem_ranged_reads_at_sha(api: HfApi, hub_url: str, hub_root: Path) -> None:
    sha = api.model_info(REPO).sha
    fs = HfFileSystem(endpoint=hub_url, token=False, skip_instance_cache=True)
    with fs.open(f"{REPO}@{sha}/model.safetensors", "rb", block_size=64) as fh:
        fh.seek(1000)
        assert fh.read(16) == (hub_root / REPO / "model.safetensors").read_bytes()[1000:1016]
    with fs.open(f"{REPO}@{sha}/huge.safetensors", "rb", block_size=1024) as fh:
        fh.seek(SPARSE_SIZE - 10)
        assert fh.read(100) == b"\0" * 10


@pytest.mark.parametrize(
    ("header", "status", "content_range", "body"),
    [
        ("bytes=0-3", 206, "bytes 0-3/23", b'{"mo'),
        ("bytes=20-", 206, "bytes 20-22/23", b'"}\n'),
        ("bytes=-2", 206, "bytes 21-22/23", b"}\n"),
        ("bytes=10-100000", 206, "bytes 10-22/23", b'pe": "tiny"}\n'),
        ("bytes=23-", 416, "bytes */23", b""),
        ("bytes=0-1,4-5", 416, "bytes */23", b""),
        ("items=0-1", 200, None, b'{"model_type": "tiny"}\n'),
    ],
)
def test_resolve_range_semantics(
    hub_url: str, header: str, status: int, content_range: str | None, body: bytes
) -> None:
    r = httpx.get(f"{hub_url}/{REPO}/resolve/main/config.json", headers={"Range": header})
    assert r.status_code == status
    assert r.headers.get("content-range") == content_range
    assert r.content == body


def test_resolve_head_headers(api: HfApi, hub_url: str) -> None:
    sha = api.model_info(REPO).sha
    regular = httpx.head(f"{hub_url}/{REPO}/resolve/main/config.json")
    assert regular.headers["x-repo-commit"] == sha and regular.headers["accept-ranges"] == "bytes"
    assert regular.headers["etag"].strip('"') == git_hash(b'{"model_type": "tiny"}\n')
    assert regular.headers["content-length"] == "23"
    lfs = httpx.head(f"{hub_url}/{REPO}/resolve/main/huge.safetensors")
    assert lfs.headers["x-linked-etag"] == f'"{SPARSE_SHA}"'
    assert lfs.headers["x-linked-size"] == str(SPARSE_SIZE)
    assert not any(h.lower().startswith("x-xet") for h in lfs.headers)
    missing = httpx.head(f"{hub_url}/{REPO}/resolve/main/nope.bin")
    assert missing.status_code == 404 and missing.headers["x-error-code"] == "EntryNotFound"
    assert missing.headers["x-repo-commit"] == sha


def test_error_classes(api: HfApi, hub_url: str, cache_dir: str) -> None:
    with pytest.raises(RepositoryNotFoundError) as missing:
        api.model_info("acme/absent")
    assert not isinstance(missing.value, GatedRepoError)
    with pytest.raises(RemoteEntryNotFoundError):
        hf_hub_download(REPO, "nope.bin", endpoint=hub_url, cache_dir=cache_dir, token=False)
    assert api.file_exists(REPO, "nope.bin") is False and api.file_exists(REPO, "config.json") is True
    assert api.model_info("acme/disabled").disabled is True
    with pytest.raises(DisabledRepoError):
        list(api.list_repo_tree("acme/disabled"))
    with pytest.raises(DisabledRepoError):
        api.file_exists("acme/disabled", "config.json")


def test_gated_and_private_need_an_accepted_token(api: HfApi, hub_url: str, cache_dir: str) -> None:
    assert api.model_info("acme/gated").gated == "manual"  # info stays public, content does not
    for token in (False, "hf_wrong"):
        with pytest.raises(GatedRepoError):
            hf_hub_download("acme/gated", "config.json", endpoint=hub_url, cache_dir=cache_dir, token=token)
    ok = hf_hub_download("acme/gated", "config.json", endpoint=hub_url, cache_dir=cache_dir, token=GOOD_TOKEN)
    assert Path(ok).read_bytes() == b"{}\n"
    with pytest.raises(RepositoryNotFoundError):
        api.model_info("acme/private")
    with pytest.raises(RepositoryNotFoundError):
        api.model_info("acme/private", token="hf_wrong")
    assert HfApi(endpoint=hub_url, token=GOOD_TOKEN).model_info("acme/private").private is True


def test_big_non_weight_files_are_lfs_and_bad_metadata_fails_loudly(hub_root: Path, api: HfApi) -> None:
    repo = hub_root / "acme" / "layout"
    repo.mkdir(parents=True)
    with (repo / "notes.txt").open("wb") as fh:
        fh.truncate(10 << 20)  # 10 MiB of zeros: LFS by size alone
    (repo / "small.txt").write_bytes(b"x")
    info = api.model_info("acme/layout", files_metadata=True)
    by_name = {s.rfilename: s for s in info.siblings or []}
    assert by_name["notes.txt"].lfs is not None and by_name["small.txt"].lfs is None
    assert by_name["notes.txt"].lfs.sha256 == sha256_of(repo / "notes.txt")
    (repo / ".hub.json").write_text('{"sha256": {"notes.txt": "not-hex"}}')
    response = httpx.get(f"{api.endpoint}/api/models/acme/layout")
    assert response.status_code == 500 and "sha256" in response.json()["error"]


def test_serve_blocks_and_reports_its_url(hub_root: Path) -> None:
    script = (
        "import sys; from pathlib import Path; from app.hubfixture import serve; "
        "serve(Path(sys.argv[1]), on_ready=lambda url: print(url, flush=True), log_level='warning')"
    )
    with subprocess.Popen([sys.executable, "-c", script, str(hub_root)], stdout=subprocess.PIPE, text=True) as proc:
        _check_served(proc)


def _check_served(proc: subprocess.Popen[str]) -> None:
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url)
        for _ in range(100):  # bound before uvicorn accepts: retry briefly
            try:
                info = httpx.get(f"{url}/api/models/{REPO}").json()
                break
            except httpx.ConnectError:
                time.sleep(0.05)
        assert info["id"] == REPO
    finally:
        proc.terminate()
        proc.wait(10)
