"""One revision of a fixture repo: its files with git/LFS ids, and the commit sha of the tree."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from app.hubfixture.hashing import HashCache, git_blob_id, lfs_pointer
from app.hubfixture.meta import META_FILE, SnapshotMeta

LFS_MIN_SIZE = 10 << 20
# Weight and archive formats the Hub's default .gitattributes sends to LFS whatever their size.
LFS_EXTENSIONS = frozenset(
    {
        ".7z",
        ".arrow",
        ".bin",
        ".bz2",
        ".ckpt",
        ".ftz",
        ".gguf",
        ".gz",
        ".h5",
        ".joblib",
        ".mlmodel",
        ".model",
        ".msgpack",
        ".npy",
        ".npz",
        ".onnx",
        ".ot",
        ".parquet",
        ".pb",
        ".pickle",
        ".pkl",
        ".pt",
        ".pth",
        ".rar",
        ".safetensors",
        ".tar",
        ".tflite",
        ".tgz",
        ".wasm",
        ".xz",
        ".zip",
        ".zst",
    }
)
# Fixture bookkeeping and VCS folders that are never repo content.
HIDDEN = frozenset({META_FILE, ".revisions", ".git"})


@dataclass(frozen=True)
class FileEntry:
    path: str  # repo-relative, forward slashes
    disk: Path
    size: int
    blob_id: str  # git sha1 of the content, or of the LFS pointer for LFS files
    sha256: str | None  # set iff the file is LFS

    @property
    def pointer_size(self) -> int:
        return len(lfs_pointer(self.sha256 or "", self.size))


@dataclass(frozen=True)
class Snapshot:
    name: str  # "main" or a directory name under .revisions
    meta: SnapshotMeta
    files: tuple[FileEntry, ...]  # sorted by path

    @cached_property
    def by_path(self) -> dict[str, FileEntry]:
        return {f.path: f for f in self.files}

    @cached_property
    def directories(self) -> tuple[str, ...]:
        dirs = {"/".join(f.path.split("/")[:i]) for f in self.files for i in range(1, f.path.count("/") + 1)}
        return tuple(sorted(dirs))

    @cached_property
    def commit(self) -> str:
        """A stable digest of the tree: same files, same sha; any change, a new sha."""
        return _tree_digest(self.files, "")

    def tree_id(self, directory: str) -> str:
        return _tree_digest(self.files, directory + "/")

    def children(self, directory: str, recursive: bool) -> list[str]:
        """Paths (dirs first, then files) inside ``directory`` ("" = root)."""
        prefix = directory + "/" if directory else ""

        def inside(path: str) -> bool:
            rest = path[len(prefix) :]
            return path.startswith(prefix) and bool(rest) and (recursive or "/" not in rest)

        return [d for d in self.directories if inside(d)] + [f.path for f in self.files if inside(f.path)]


def build_snapshot(name: str, folder: Path, meta: SnapshotMeta, hashes: HashCache) -> Snapshot:
    entries = [_entry(rel, full, meta, hashes) for rel, full in _walk(folder)]
    return Snapshot(name, meta, tuple(entries))


def _entry(rel: str, full: Path, meta: SnapshotMeta, hashes: HashCache) -> FileEntry:
    size = full.stat().st_size
    declared = meta.sha256.get(rel)
    is_lfs = declared is not None or size >= LFS_MIN_SIZE or Path(rel).suffix.lower() in LFS_EXTENSIONS
    if not is_lfs:
        return FileEntry(rel, full, size, hashes.git_blob_id(full), None)
    # A declared hash is trusted so multi-GB sparse files are never read for metadata.
    sha256 = declared or hashes.sha256(full)
    return FileEntry(rel, full, size, git_blob_id(lfs_pointer(sha256, size)), sha256)


def _walk(folder: Path) -> list[tuple[str, Path]]:
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        at_root = Path(dirpath) == folder
        dirnames[:] = sorted(d for d in dirnames if not (at_root and d in HIDDEN) and d != ".git")
        for name in sorted(filenames):
            full = Path(dirpath) / name
            if (at_root and name in HIDDEN) or not full.is_file():
                continue
            found.append((full.relative_to(folder).as_posix(), full))
    return sorted(found)


def _tree_digest(files: tuple[FileEntry, ...], prefix: str) -> str:
    digest = hashlib.sha1(b"hfvet-fixture-tree\n", usedforsecurity=False)
    for f in files:
        if f.path.startswith(prefix):
            digest.update(f"{f.path}\0{f.blob_id}\n".encode())
    return digest.hexdigest()
