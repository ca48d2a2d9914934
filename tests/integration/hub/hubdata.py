"""The fixture-hub root the hub tests share, built at test time (no binaries committed)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

GOOD_TOKEN = "hf_fixture_accepted"
SPARSE_SIZE = 3 * 1024**3
# Deliberately not the real digest of 3 GB of zeros: seeing it served proves the file was not hashed.
SPARSE_SHA = "ab" * 32
PAGE_SIZE = 2  # tiny, so every listing exercises Link pagination


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _meta(repo: Path, meta: dict[str, object]) -> None:
    (repo / ".hub.json").write_text(json.dumps(meta))


def build_root(root: Path) -> None:
    tiny = root / "acme" / "tiny"
    _write(tiny / "config.json", b'{"model_type": "tiny"}\n')
    _write(tiny / "README.md", b"---\nbase_model: acme/base\n---\n# tiny\n")
    _write(tiny / "sub" / "dir" / "with space.txt", b"spaced out\n")
    _write(tiny / "model.safetensors", bytes(range(256)) * 40)
    with (tiny / "huge.safetensors").open("wb") as fh:
        fh.truncate(SPARSE_SIZE)  # sparse: no blocks allocated
    _meta(
        tiny,
        {
            "author": "acme",
            "_id": "65f0c0ffee0000000000abcd",
            "createdAt": "2024-05-01T10:00:00.000Z",
            "downloads": 42,
            "tags": ["safetensors", "text-generation"],
            "cardData": {"base_model": "acme/base", "license": "apache-2.0"},
            "sha256": {"huge.safetensors": SPARSE_SHA},
            "commit": {"title": "Second upload", "parent": "v1", "date": "2024-06-01T00:00:00.000Z"},
            "refs": {"branches": {"dev": "v1"}, "tags": {"v1.0": "v1"}, "pullRequests": {"1": "pr1"}},
        },
    )
    v1 = tiny / ".revisions" / "v1"
    _write(v1 / "config.json", b'{"model_type": "tiny", "old": true}\n')
    _meta(v1, {"commit": {"title": "First upload"}, "cardData": {"base_model": "acme/older"}})
    _write(tiny / ".revisions" / "pr1" / "config.json", b'{"pr": 1}\n')

    gated = root / "acme" / "gated"
    _write(gated / "config.json", b"{}\n")
    _meta(gated, {"gated": "manual", "tokens": [GOOD_TOKEN]})
    private = root / "acme" / "private"
    _write(private / "config.json", b"{}\n")
    _meta(private, {"private": True, "tokens": [GOOD_TOKEN]})
    disabled = root / "acme" / "disabled"
    _write(disabled / "config.json", b"{}\n")
    _meta(disabled, {"disabled": True})


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
