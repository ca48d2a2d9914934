"""The unmodified huggingface_hub client (2.4) against the Hub endpoint: approved bytes land byte-identical
under the approved commit; refusals raise the client's own exceptions with hfvet's reasons and leave nothing
in its cache; the endpoint's path prefix survives HF_ENDPOINT; Xet is never offered."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
import pytest
from huggingface_hub import hf_hub_download, snapshot_download
from huggingface_hub.errors import (
    GatedRepoError,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from tests.integration.endpoint.clients import (
    approved,
    client_env,
    files_under,
    hf_cli,
    repo_cache,
    run_python,
    snapshot_files,
    upstream_bytes,
)
from tests.integration.endpoint.conftest import (
    APPROVED,
    REJECTED,
    REVIEW,
    UNVETTED,
    Endpoint,
    StartEndpoint,
    Upstream,
)


def assert_approved_snapshot(ep: Endpoint, upstream: Upstream, snapshot: Path) -> None:
    """``snapshot`` is the approved commit's folder, holding exactly its manifest's files, upstream's bytes."""
    sha, paths = approved(ep, APPROVED)
    assert snapshot.name == sha
    assert files_under(snapshot) == upstream_bytes(upstream, APPROVED, paths)


def test_snapshot_download_gets_the_approved_commit_byte_identical(endpoint: Endpoint, upstream: Upstream,
                                                                   hf_cache: Path) -> None:
    sha, _ = approved(endpoint, APPROVED)
    snapshot = Path(snapshot_download(APPROVED, endpoint=endpoint.hub, cache_dir=hf_cache, token=False))
    assert_approved_snapshot(endpoint, upstream, snapshot)
    assert (repo_cache(hf_cache, APPROVED) / "refs" / "main").read_text() == sha


def test_hf_hub_download_gets_one_file_at_the_approved_commit(endpoint: Endpoint, upstream: Upstream,
                                                              hf_cache: Path) -> None:
    sha, _ = approved(endpoint, APPROVED)
    for name in ("config.json", "model-00002-of-00003.safetensors"):  # a git blob and an LFS file
        got = Path(hf_hub_download(APPROVED, name, endpoint=endpoint.hub, cache_dir=hf_cache, token=False))
        assert got.parent.name == sha
        assert got.read_bytes() == (upstream.root / APPROVED / name).read_bytes()
    assert (repo_cache(hf_cache, APPROVED) / "refs" / "main").read_text() == sha


def test_the_hub_port_serves_at_its_root(start_endpoint: StartEndpoint, upstream: Upstream, hf_cache: Path) -> None:
    ep = start_endpoint(hub_port=True)
    assert not ep.hub.rstrip("/").endswith("/hub")
    snapshot = Path(snapshot_download(APPROVED, endpoint=ep.hub, cache_dir=hf_cache, token=False))
    assert_approved_snapshot(ep, upstream, snapshot)


def test_hf_endpoint_variable_keeps_the_hub_prefix(endpoint: Endpoint, upstream: Upstream, tmp_path: Path) -> None:
    """huggingface_hub#2806: a path in HF_ENDPOINT was once dropped. Set as the variable, no `endpoint=`;
    HF_HUB_DISABLE_XET is not set and hf_xet is installed: Xet is not used because it is never offered."""
    assert endpoint.hub.endswith("/hub")
    code = ("import hf_xet\nfrom huggingface_hub import snapshot_download\n"
            f"print(snapshot_download({APPROVED!r}))")
    done = run_python(code, client_env(endpoint.hub, tmp_path / "hf-home"))
    assert done.returncode == 0, done.stderr[-3000:]
    snapshot = Path(done.stdout.strip().splitlines()[-1])
    assert snapshot.is_relative_to(tmp_path / "hf-home")
    assert_approved_snapshot(endpoint, upstream, snapshot)


def test_hf_download_cli_lands_the_approved_files(endpoint: Endpoint, upstream: Upstream, tmp_path: Path) -> None:
    target = tmp_path / "model"
    done = subprocess.run([hf_cli(), "download", APPROVED, "--local-dir", str(target)],
                          env=client_env(endpoint.hub, tmp_path / "hf-home"), capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    _, paths = approved(endpoint, APPROVED)
    assert files_under(target) == upstream_bytes(upstream, APPROVED, paths)


@pytest.mark.parametrize(("repo", "words"), [
    (REJECTED, ["hfvet refused", "third-party", "critical-finding"]),
    (REVIEW, ["hfvet refused", "a reviewer may approve it", "hfvet review", "remote-code-auto-map"]),
    (UNVETTED, [f"hfvet vet {UNVETTED}"]),
])
def test_refusals_raise_gated_repo_error_with_hfvets_reasons(endpoint: Endpoint, hf_cache: Path, repo: str,
                                                             words: list[str]) -> None:
    with pytest.raises(GatedRepoError) as snap:
        snapshot_download(repo, endpoint=endpoint.hub, cache_dir=hf_cache, token=False)
    with pytest.raises(GatedRepoError) as one:
        hf_hub_download(repo, "config.json", endpoint=endpoint.hub, cache_dir=hf_cache, token=False)
    for raised in (snap, one):
        for word in words:
            assert word in str(raised.value)
    assert snapshot_files(hf_cache, repo) == []


def test_a_repo_the_upstream_does_not_have_is_not_found(endpoint: Endpoint, hf_cache: Path) -> None:
    with pytest.raises(RepositoryNotFoundError) as raised:
        snapshot_download("nvidia/No-Such-Model", endpoint=endpoint.hub, cache_dir=hf_cache, token=False)
    assert not isinstance(raised.value, GatedRepoError)
    assert snapshot_files(hf_cache, "nvidia/No-Such-Model") == []


def test_an_unknown_branch_is_revision_not_found(endpoint: Endpoint, hf_cache: Path) -> None:
    with pytest.raises(RevisionNotFoundError):
        snapshot_download(APPROVED, revision="no-such-branch", endpoint=endpoint.hub, cache_dir=hf_cache,
                          token=False)
    with pytest.raises(RevisionNotFoundError):
        hf_hub_download(APPROVED, "config.json", revision="no-such-branch", endpoint=endpoint.hub,
                        cache_dir=hf_cache, token=False)
    assert snapshot_files(hf_cache, APPROVED) == []


def test_a_file_outside_the_approved_manifest_is_entry_not_found(endpoint: Endpoint, hf_cache: Path) -> None:
    with pytest.raises(RemoteEntryNotFoundError) as raised:
        hf_hub_download(APPROVED, "nope.bin", endpoint=endpoint.hub, cache_dir=hf_cache, token=False)
    assert "not in the approved manifest" in str(raised.value)
    assert snapshot_files(hf_cache, APPROVED) == []


def test_no_answer_offers_xet(endpoint: Endpoint) -> None:
    sha, _ = approved(endpoint, APPROVED)
    hub = endpoint.hub
    with httpx.Client(timeout=30) as client:
        answers = [
            client.get(f"{hub}/api/models/{APPROVED}"),
            client.get(f"{hub}/api/models/{APPROVED}/revision/main", params={"expand[]": "xetEnabled"}),
            client.get(f"{hub}/api/models/{APPROVED}/tree/main", params={"expand": "true", "recursive": "true"}),
            client.head(f"{hub}/{APPROVED}/resolve/main/model-00001-of-00003.safetensors"),
            client.head(f"{hub}/{APPROVED}/resolve/{sha}/model-00001-of-00003.safetensors"),
            client.get(f"{hub}/{APPROVED}/resolve/{sha}/model-00001-of-00003.safetensors"),
            client.get(f"{hub}/api/models/{APPROVED}/xet-read-token/{sha}"),
        ]
    assert [a.status_code for a in answers] == [200, 200, 200, 307, 200, 200, 404]
    for answer in answers:
        assert not [h for h in answer.headers if h.lower().startswith("x-xet")], answer.headers
    tree = answers[2].json()
    assert tree and "xetHash" not in json.dumps(tree)
    assert not answers[1].json().get("xetEnabled")
