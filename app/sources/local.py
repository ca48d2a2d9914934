"""LocalSource: a downloaded snapshot directory, or one file, as a byte-range Source."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from app.core.manifest import Manifest, ManifestFile, RepoIdentity
from app.core.ports import SourceError

# Git metadata is not repo content; everything else (even hidden files) is vetted.
_IGNORED_DIRS = {".git"}


class LocalSource:
    def __init__(self, root: Path, repo_id: str | None = None, revision: str | None = None) -> None:
        self._root = root.resolve()
        if not self._root.exists():
            raise SourceError(f"no such file or directory: {root}")
        self._identity = RepoIdentity(repo_id, revision)
        self._bytes_read = 0
        self._lock = threading.Lock()
        self._paths: dict[str, Path] = {}
        self._files = self._list()

    @property
    def bytes_read(self) -> int:
        return self._bytes_read

    def manifest(self) -> Manifest:
        return Manifest(self._identity, self._files)

    def size(self, path: str) -> int:
        return _size(self._resolve(path))

    def read(self, path: str, offset: int, length: int) -> bytes:
        full = self._resolve(path)
        if not full.is_file():  # never open a FIFO or device: it could block forever
            raise SourceError(f"cannot read {path}: not a regular file")
        try:
            with full.open("rb") as fh:
                fh.seek(offset)
                data = fh.read(length)
        except OSError as exc:
            raise SourceError(f"cannot read {path}: {exc}") from exc
        with self._lock:
            self._bytes_read += len(data)
        return data

    def _resolve(self, path: str) -> Path:
        # Only paths in the manifest are readable: nothing outside the snapshot leaks in.
        try:
            return self._paths[path]
        except KeyError:
            raise SourceError(f"unknown file {path!r}") from None

    def _list(self) -> tuple[ManifestFile, ...]:
        if self._root.is_file():
            self._paths = {self._root.name: self._root}
        else:
            self._paths = dict(self._walk())
        return tuple(ManifestFile(rel, _size(full)) for rel, full in self._paths.items())

    def _walk(self) -> list[tuple[str, Path]]:
        """Every non-directory entry, so nothing drops out of the manifest unseen.

        Symlinks are followed (huggingface_hub snapshots link into blobs/); a broken link, a
        FIFO or a device is listed and then fails to read, which is a finding, not a skip.
        """

        def unreadable_dir(exc: OSError) -> None:
            raise SourceError(f"cannot list {exc.filename}: {exc.strerror}")

        found = []
        for dirpath, dirnames, filenames in os.walk(self._root, onerror=unreadable_dir):
            dirnames[:] = sorted(d for d in dirnames if d not in _IGNORED_DIRS)
            for name in sorted(filenames):
                full = Path(dirpath) / name
                found.append((full.relative_to(self._root).as_posix(), full))
        return found


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # a broken link: reading it fails and is reported
