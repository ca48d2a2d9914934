"""bench/oms_check.py's pieces: the built repo verifies with model_signing's own call and is published with its
real sha256 declared, the round order rotates so every path leads once, and the hub counts bytes per file."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

import oms_check  # bench/ is a script folder, put on the path above
from counting_hub import counting_hub

MIB = 1 << 20


def test_the_built_repo_verifies_as_model_signing_verifies_and_declares_its_real_sha256(tmp_path: Path) -> None:
    import model_signing

    built = oms_check.build(tmp_path, shards=2, shard_bytes=MIB)
    (model_signing.verifying.Config().use_elliptic_key_verifier(public_key=built.public_key)
     .verify(built.model_dir, built.model_dir / oms_check.SIGNATURE))
    published = built.hub_root / oms_check.REPO
    declared = json.loads((published / ".hub.json").read_text())["sha256"]
    assert set(declared) == set(built.shards) and len(built.shards) == 2
    for name, digest in declared.items():
        assert hashlib.sha256((published / name).read_bytes()).hexdigest() == digest
    index = json.loads((built.model_dir / "model.safetensors.index.json").read_text())
    assert set(index["weight_map"].values()) == set(built.shards)
    assert sum(built.sizes.values()) > 2 * MIB


def test_every_path_leads_one_round_in_turn() -> None:
    paths = ("a", "b", "c")
    assert [oms_check.rotated(paths, i)[0] for i in range(3)] == ["a", "b", "c"]
    assert sorted(oms_check.rotated(paths, 4)) == list(paths)


def test_the_hub_counts_file_bytes_per_path(tmp_path: Path) -> None:
    built = oms_check.build(tmp_path, shards=1, shard_bytes=MIB)
    with counting_hub(built.hub_root) as (url, counter):
        for name in ("config.json", "README.md"):
            httpx.get(f"{url}/{oms_check.REPO}/resolve/main/{name}").raise_for_status()
        counts = counter.take()
    assert dict(counts.per_file) == {"config.json": built.sizes["config.json"], "README.md": built.sizes["README.md"]}
    assert counts.file_bytes == sum(counts.per_file.values())
