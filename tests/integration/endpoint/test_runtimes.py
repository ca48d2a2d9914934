"""Serving runtimes' own ways of pulling, through the Hub endpoint with the unmodified huggingface_hub (2.4):
vLLM lists, picks a weight format and downloads by pattern; diffusers reads model info first; a branch that
moved past its approval is served at the approved commit or refused; an expanded tree pages through `Link`."""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from huggingface_hub import HfApi, HfFileSystem, hf_hub_download, snapshot_download
from huggingface_hub.errors import GatedRepoError

from tests.integration.endpoint.clients import approved, copy_repo, files_under, gate_doc, repo_cache, upstream_bytes
from tests.integration.endpoint.conftest import APPROVED, Endpoint, StartEndpoint, Upstream, vet

VLLM_WEIGHT_PATTERNS = ["*.safetensors", "*.bin", "*.pt"]  # vllm weight_utils: the first format present wins
VLLM_IGNORE = ["original/**/*"]
MOVED = "nvidia/EndpointMoved"
MANY = "nvidia/EndpointManyFiles"
MANY_FILES = 60  # the Hub pages an expanded tree at 50


def vllm_weight_pattern(ep: Endpoint, revision: str | None) -> tuple[str, list[str]]:
    """vLLM's listing (download_weights_from_hf): HfFileSystem.ls, then the first pattern that matches."""
    listing = [str(name) for name in HfFileSystem(endpoint=ep.hub, token=False).ls(APPROVED, detail=False,
                                                                                      revision=revision)]
    for pattern in VLLM_WEIGHT_PATTERNS:
        if fnmatch.filter(listing, pattern):
            return pattern, listing
    raise AssertionError(f"no weight format in {listing}")


@pytest.mark.parametrize("pinned", [False, True])
def test_vllm_lists_then_downloads_only_the_chosen_weights(endpoint: Endpoint, upstream: Upstream, tmp_path: Path,
                                                           pinned: bool) -> None:
    sha, paths = approved(endpoint, APPROVED)
    revision = sha if pinned else None
    pattern, listing = vllm_weight_pattern(endpoint, revision)
    named = f"{APPROVED}@{sha}" if pinned else APPROVED
    assert sorted(listing) == sorted(f"{named}/{p}" for p in paths)  # fs.ls of the root: every file is there
    assert pattern == "*.safetensors"
    safetensors = set(fnmatch.filter(paths, pattern))
    assert len(safetensors) == 3

    hub, cache = endpoint.hub, tmp_path / "weights"
    weights = Path(snapshot_download(APPROVED, allow_patterns=[pattern], ignore_patterns=VLLM_IGNORE, revision=revision,
                                     endpoint=hub, cache_dir=cache, token=False))
    assert weights.name == sha
    assert files_under(weights) == upstream_bytes(upstream, APPROVED, safetensors)
    index = Path(hf_hub_download(APPROVED, "model.safetensors.index.json", revision=revision, endpoint=hub,
                                 cache_dir=cache, token=False))
    assert index.read_bytes() == (upstream.root / APPROVED / "model.safetensors.index.json").read_bytes()

    configs = Path(snapshot_download(APPROVED, allow_patterns="*.json", revision=revision, endpoint=hub,
                                     cache_dir=tmp_path / "quant-config", token=False))  # vLLM's get_quant_config
    jsons = set(fnmatch.filter(paths, "*.json"))
    assert {"config.json", "hf_quant_config.json", "model.safetensors.index.json"} <= jsons
    assert files_under(configs) == upstream_bytes(upstream, APPROVED, jsons)


def test_diffusers_model_info_names_the_approved_commit_and_its_files(endpoint: Endpoint) -> None:
    sha, paths = approved(endpoint, APPROVED)
    info = HfApi(endpoint=endpoint.hub, token=False).model_info(APPROVED, revision=None)
    assert info.sha == sha
    assert sorted(s.rfilename for s in info.siblings or []) == sorted(paths)


@dataclass
class MovedRepo:
    old_sha: str
    paths: set[str]
    refusing: Endpoint  # a server with HFVET_HUB_BRANCH_MOVED=refuse


def push(folder: Path, name: str, text: str) -> None:
    """A commit on main that adds ``name``; the old commit stays reachable by its sha, as on the Hub (the
    fixture hub knows a commit only while some revision's tree has it: `.revisions/` keeps the old one)."""
    shutil.copytree(folder, folder / ".revisions" / "before-push", ignore=shutil.ignore_patterns(".revisions"))
    (folder / name).write_text(text)


@pytest.fixture(scope="module")
def moved(endpoint: Endpoint, start_endpoint: StartEndpoint, upstream: Upstream) -> MovedRepo:
    """MOVED: a copy of the approved repo, vetted and approved on both servers, then pushed to (a new file on
    main) so that main's head is a commit neither server vetted."""
    folder = copy_repo(upstream, APPROVED, MOVED)
    refusing = start_endpoint(hub_branch_moved="refuse")
    old_sha = HfApi(endpoint=upstream.url, token=False).model_info(MOVED).sha or ""
    for ep in (endpoint, refusing):
        vet(upstream, ep.store_url, MOVED)
        assert gate_doc(ep, MOVED, old_sha)["status"] == "approved"
    paths = {f["path"] for f in gate_doc(endpoint, MOVED, old_sha)["files"]}
    push(folder, "NOTES.md", "pushed after the vet\n")
    assert gate_doc(endpoint, MOVED, "main")["status"] == "moved"
    return MovedRepo(old_sha, paths, refusing)


def test_a_moved_branch_is_served_at_the_newest_approved_commit(endpoint: Endpoint, upstream: Upstream,
                                                                moved: MovedRepo, hf_cache: Path) -> None:
    snapshot = Path(snapshot_download(MOVED, endpoint=endpoint.hub, cache_dir=hf_cache, token=False))
    assert snapshot.name == moved.old_sha
    assert "NOTES.md" not in files_under(snapshot)
    assert files_under(snapshot) == upstream_bytes(upstream, MOVED, moved.paths)
    assert (repo_cache(hf_cache, MOVED) / "refs" / "main").read_text() == moved.old_sha
    info = HfApi(endpoint=endpoint.hub, token=False).model_info(MOVED)
    assert info.sha == moved.old_sha


def test_a_moved_branch_is_refused_when_the_setting_says_so(moved: MovedRepo, hf_cache: Path) -> None:
    with pytest.raises(GatedRepoError) as raised:
        snapshot_download(MOVED, endpoint=moved.refusing.hub, cache_dir=hf_cache, token=False)
    assert f"hfvet vet {MOVED}" in str(raised.value)
    assert moved.old_sha in str(raised.value)
    pinned = Path(snapshot_download(MOVED, revision=moved.old_sha, endpoint=moved.refusing.hub, cache_dir=hf_cache,
                                    token=False))
    assert pinned.name == moved.old_sha  # the pin the refusal names is served


@pytest.fixture(scope="module")
def many_files(endpoint: Endpoint, upstream: Upstream) -> str:
    folder = upstream.root / MANY
    folder.mkdir(parents=True)
    for i in range(MANY_FILES):
        (folder / f"part-{i:02d}.json").write_text(json.dumps({"part": i}))
    vet(upstream, endpoint.store_url, MANY)
    return approved(endpoint, MANY)[0]


def test_an_expanded_tree_pages_through_an_absolute_link(endpoint: Endpoint, many_files: str) -> None:
    entries = list(HfApi(endpoint=endpoint.hub, token=False).list_repo_tree(MANY, expand=True))
    assert sorted(e.path for e in entries) == [f"part-{i:02d}.json" for i in range(MANY_FILES)]
    first = httpx.get(f"{endpoint.hub}/api/models/{MANY}/tree/main", params={"expand": "true"}, timeout=30)
    assert len(first.json()) == 50
    link = re.fullmatch(r'<([^>]+)>; rel="next"', first.headers["link"])
    assert link is not None, first.headers["link"]
    assert link.group(1).startswith(f"{endpoint.hub}/api/models/{MANY}/tree/main?")
    assert "cursor=50" in link.group(1) and "expand=true" in link.group(1)
    assert len(httpx.get(link.group(1), timeout=30).json()) == MANY_FILES - 50
