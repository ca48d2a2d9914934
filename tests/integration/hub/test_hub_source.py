"""HubSource against the fixture hub, and against a fault-injecting wrapper of it."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from huggingface_hub import HfApi, constants
from huggingface_hub.utils.sha import git_hash

from app.core.ports import SourceError
from app.settings import Settings
from app.sources.hub import (
    HubAccessDenied,
    HubClient,
    HubProtocolError,
    HubRepoNotFound,
    HubRevisionNotFound,
    HubSource,
    HubUnreachable,
    resolve_revision,
)
from tests.integration.hub.faults import REPO, FaultyHub, Sleeps, source
from tests.integration.hub.hubdata import GOOD_TOKEN, SPARSE_SIZE, sha256_of


def test_resolve_revision_names_the_commit_without_listing_files(hub_url: str) -> None:
    hub = HubClient.create(hub_url, False)
    commit = resolve_revision(REPO, "main", hub)
    assert commit == source(hub_url).commit
    assert resolve_revision(REPO, commit, hub) == commit
    with pytest.raises(HubRevisionNotFound):
        resolve_revision(REPO, "no-such-branch", hub)


def test_manifest_pins_the_commit_and_matches_content(hub_url: str, hub_root: Path) -> None:
    src = source(hub_url)
    assert re.fullmatch(r"[0-9a-f]{40}", src.commit)
    assert src.commit == HfApi(endpoint=hub_url).model_info(REPO).sha
    files = {f.path: f for f in src.manifest().files}
    assert set(files) == {
        "config.json",
        "README.md",
        "sub/dir/with space.txt",
        "model.safetensors",
        "huge.safetensors",
    }
    config = (hub_root / REPO / "config.json").read_bytes()
    assert (files["config.json"].size, files["config.json"].blob_id, files["config.json"].sha256) == (
        len(config),
        git_hash(config),
        None,
    )
    assert files["model.safetensors"].sha256 == sha256_of(hub_root / REPO / "model.safetensors")
    assert files["huge.safetensors"].size == SPARSE_SIZE
    identity = src.manifest().identity
    assert (identity.repo_id, identity.revision, identity.org) == (REPO, src.commit, "acme")
    facts = identity.facts
    assert facts["author"] == "acme" and facts["_id"] == "65f0c0ffee0000000000abcd"
    assert facts["cardData"]["base_model"] == "acme/base" and facts["tags"] == [
        "safetensors",
        "text-generation",
    ]
    assert facts["createdAt"] == "2024-05-01T10:00:00Z" and facts["gated"] is False
    assert facts["securityRepoStatus"] == {"scansDone": False, "filesWithIssues": []}
    assert facts["requestedRevision"] == "main" and facts["endpoint"] == hub_url


def test_tag_and_pr_revisions_read_their_own_bytes(hub_url: str) -> None:
    old = source(hub_url, revision="v1.0")
    assert old.commit == source(hub_url, revision="refs/heads/v1").commit != source(hub_url).commit
    assert old.read("config.json", 0, 100) == b'{"model_type": "tiny", "old": true}\n'
    assert old.manifest().identity.facts["cardData"]["base_model"] == "acme/older"
    pr = source(hub_url, revision="refs/pr/1")
    assert pr.read("config.json", 0, 100) == b'{"pr": 1}\n'
    assert source(hub_url, revision=old.commit).commit == old.commit


def test_reads_are_exact_clamped_and_counted(hub_url: str, hub_root: Path) -> None:
    src = source(hub_url)
    data = (hub_root / REPO / "model.safetensors").read_bytes()
    assert src.read("model.safetensors", 100, 50) == data[100:150]
    assert src.read("model.safetensors", len(data) - 5, 100) == data[-5:]  # clamped at EOF
    assert src.read("model.safetensors", len(data), 10) == b""  # nothing asked of the hub
    assert src.read("sub/dir/with space.txt", 0, 6) == b"spaced"
    assert src.read("huge.safetensors", SPARSE_SIZE - 8, 8) == b"\0" * 8
    assert src.bytes_read == 50 + 5 + 6 + 8
    with pytest.raises(SourceError, match="unknown file"):
        src.read("not-in-manifest.bin", 0, 1)
    with pytest.raises(SourceError):
        src.read("config.json", -1, 1)


def test_concurrent_reads_are_thread_safe(hub_url: str, hub_root: Path) -> None:
    src = source(hub_url)
    data = (hub_root / REPO / "model.safetensors").read_bytes()
    ranges = [(i * 97 % 9000, 1 + i % 700) for i in range(48)]
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda r: src.read("model.safetensors", *r), ranges))
    assert got == [data[o : o + n] for o, n in ranges]
    assert src.bytes_read == sum(n for _, n in ranges)


def test_a_moved_branch_never_yields_new_bytes_for_the_old_commit(hub_url: str, hub_root: Path) -> None:
    repo = hub_root / "acme" / "moving"
    repo.mkdir(parents=True)
    (repo / "config.json").write_text('{"v": 1}')
    src = source(hub_url, "acme/moving")
    (repo / "config.json").write_text('{"v": 2}')  # pushed after the vet started
    with pytest.raises(HubRevisionNotFound):
        src.read("config.json", 0, 8)
    assert source(hub_url, "acme/moving").commit != src.commit


def test_distinct_errors(hub_url: str) -> None:
    with pytest.raises(HubRepoNotFound):
        source(hub_url, "acme/absent")
    with pytest.raises(HubRevisionNotFound):
        source(hub_url, revision="no-such-branch")
    with pytest.raises(HubRepoNotFound):
        source(hub_url, "acme/private")
    with pytest.raises(HubAccessDenied, match="disabled"):
        source(hub_url, "acme/disabled")
    gated = source(hub_url, "acme/gated")  # the manifest is public, the bytes are not
    with pytest.raises(HubAccessDenied, match="gated"):
        gated.read("config.json", 0, 2)
    sleeps = Sleeps()
    with pytest.raises(HubUnreachable):
        source("http://127.0.0.1:1", retries=2, backoff=0.25, sleep=sleeps)
    assert sleeps == [0.25, 0.5]


def test_offline_mode_is_unreachable(hub_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(HubUnreachable, match="offline"):
        source(hub_url, retries=0)


def test_hf_endpoint_and_hf_token_env_are_honoured(hub_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", hub_url)
    monkeypatch.setenv("HF_TOKEN", GOOD_TOKEN)
    hub = HubClient.from_settings(Settings())
    private = HubSource.open("acme/private", hub=hub)
    assert hub.endpoint == hub_url and private.read("config.json", 0, 3) == b"{}\n"
    assert HubSource.open("acme/gated", hub=hub).read("config.json", 0, 1) == b"{"


# --- fault injection: the fixture app wrapped so the next matching request misbehaves ----------


def test_a_server_ignoring_range_is_refused_without_reading_the_body(fault: tuple[FaultyHub, str]) -> None:
    app, url = fault
    src = source(url)
    app.faults.append(("/resolve/", "ignore-range"))
    with pytest.raises(HubProtocolError, match="206"):
        src.read("huge.safetensors", SPARSE_SIZE - 100, 10)  # the server starts streaming 3 GB
    assert src.bytes_read < 1 << 20
    assert src.read("huge.safetensors", SPARSE_SIZE - 100, 10) == b"\0" * 10  # next request is fine


@pytest.mark.parametrize(("fault_name", "match"), [
    ("shift-range", "Content-Range"),  # other bytes than asked for
    ("other-commit", "pinned"),  # bytes of another commit
    ("short-body", "expected 4 body bytes, received 2"),  # a 206 that stops halfway
])
def test_a_wrong_ranged_answer_is_refused(fault: tuple[FaultyHub, str], fault_name: str, match: str) -> None:
    app, url = fault
    src = source(url)
    app.faults.append(("/resolve/", fault_name))
    with pytest.raises(HubProtocolError, match=match):
        src.read("config.json", 0, 4)


def test_429_is_retried_after_retry_after(fault: tuple[FaultyHub, str]) -> None:
    app, url = fault
    sleeps = Sleeps()
    app.faults += [
        ("/api/models/", "rate-limited"),
        ("/resolve/", "unavailable"),
        ("/resolve/", "rate-limited"),
    ]
    src = source(url, sleep=sleeps, backoff=0.1, max_wait=5.0)
    assert src.read("config.json", 0, 4) == b'{"mo'
    assert sleeps == [3.0, 0.1, 3.0]  # Retry-After 3 (within max_wait) honoured; 503 gets the backoff
    assert src.bytes_read == 4


def test_persistent_5xx_exhausts_a_bounded_retry_budget(fault: tuple[FaultyHub, str]) -> None:
    app, url = fault
    sleeps = Sleeps()
    src = source(url, sleep=sleeps, retries=3, backoff=0.1)
    app.faults += [("/resolve/", "unavailable")] * 5
    before = app.requests
    with pytest.raises(HubUnreachable, match="4 attempts"):
        src.read("config.json", 0, 4)
    assert app.requests - before == 4 and sleeps == [0.1, 0.2, 0.4]
