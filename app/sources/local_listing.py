"""Listing a local snapshot: every entry, links resolved, nothing outside the snapshot served.

An entry whose bytes will not be served (a FIFO, a device, a dangling or looping link, a link
that leaves the snapshot) is still listed, with the reason it is refused: the source raises
``SourceError`` for it and the pipeline reports a high ``read-error``. Nothing drops out unseen.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from app.core.ports import SourceError

# Git metadata is not repo content; everything else (even hidden files) is vetted.
_IGNORED_DIRS = {".git"}
# huggingface_hub cache: <cache>/models--org--name/snapshots/<sha>/file -> ../../blobs/<hash>
_HF_CACHE_REPO_PREFIXES = ("models--", "datasets--", "spaces--")


@dataclass(frozen=True)
class Entry:
    path: str  # snapshot-relative, forward slashes
    real: Path | None  # the regular file whose bytes are served; None when refused
    size: int
    link: str | None = None  # the symlinks this path goes through: "'a' -> 'b', ..."
    refused: str | None = None  # why the bytes are not served


@dataclass(frozen=True)
class _Dir:
    real: Path
    prefix: str  # snapshot-relative path of the directory, "" or ending in "/"
    link: str | None  # the directory links on the way here
    ancestors: frozenset[Path]  # real directories from the root down to here: a link back is a loop


def list_path(given: Path, max_entries: int) -> list[Entry]:
    """A snapshot directory, or one file, as entries sorted by path."""
    try:
        os.lstat(given)
    except OSError as exc:
        raise SourceError(f"no such file or directory: {given}") from exc
    real = _realpath(given)
    if isinstance(real, str):
        raise SourceError(f"cannot open {given}: {real}")
    if real.is_dir():
        return _Walk(real, max_entries).run()
    return [_single_file(given, real)]


def _single_file(given: Path, real: Path) -> Entry:
    # The user named this file, so a link is followed wherever it goes; it keeps the given name.
    link = f"{given.name!r} -> {os.readlink(given)!r}" if given.is_symlink() else None
    return _regular_or_refused(given.name, real, link)


class _Walk:
    """Depth-first over real directories with an explicit stack, so depth cannot overflow."""

    def __init__(self, root: Path, max_entries: int) -> None:
        self.root = root
        self.bounds = _bounds(root)
        self.max_entries = max_entries
        self.seen = 0  # entries and directories listed: aliases can multiply them
        self.entries: list[Entry] = []

    def run(self) -> list[Entry]:
        stack = [_Dir(self.root, "", None, frozenset({self.root}))]
        while stack:
            stack.extend(reversed(self._list_dir(stack.pop())))
        return sorted(self.entries, key=lambda e: e.path)

    def _list_dir(self, d: _Dir) -> list[_Dir]:
        subdirs = []
        for name in _names(d.real):
            self._count()
            full, rel = d.real / name, d.prefix + name
            if full.is_symlink():
                found = self._follow(d, full, rel)
            elif full.is_dir():
                found = None if name in _IGNORED_DIRS else _Dir(full, rel + "/", d.link, d.ancestors | {full})
            else:
                found = _regular_or_refused(rel, full, d.link)
            if isinstance(found, Entry):
                self.entries.append(found)
            elif found is not None:
                subdirs.append(found)
        return subdirs

    def _follow(self, d: _Dir, full: Path, rel: str) -> Entry | _Dir | None:
        target = os.readlink(full)
        link = _join(d.link, f"{rel!r} -> {target!r}")
        real = _realpath(full)
        if isinstance(real, str):
            return Entry(rel, None, 0, link, f"a {real} ({rel!r} -> {target!r})")
        if full.name in _IGNORED_DIRS and real.is_dir():
            return None
        if not any(real.is_relative_to(b) for b in self.bounds):
            return Entry(rel, None, 0, link, f"a symlink to {target!r}, which resolves outside the snapshot")
        if not real.is_dir():
            return _regular_or_refused(rel, real, link, f"a symlink to {target!r}, which is ")
        if real in d.ancestors:
            return Entry(rel, None, 0, link, f"a directory symlink loop: {target!r} contains the link")
        return _Dir(real, rel + "/", link, d.ancestors | {real})

    def _count(self) -> None:
        self.seen += 1
        if self.seen > self.max_entries:
            raise SourceError(f"the snapshot lists more than {self.max_entries} entries (links can multiply them)")


def _regular_or_refused(rel: str, real: Path, link: str | None, lead: str = "") -> Entry:
    size = _regular_size(real)
    if isinstance(size, str):
        return Entry(rel, None, 0, link, f"{lead}not a regular file ({size})")
    return Entry(rel, real, size, link)


def _bounds(root: Path) -> tuple[Path, ...]:
    """Where links may lead: the snapshot, and its cache repo's blobs/ if it is an HF cache snapshot."""
    snapshots, repo = root.parent, root.parent.parent
    if snapshots.name == "snapshots" and repo.name.startswith(_HF_CACHE_REPO_PREFIXES):
        return (root, Path(os.path.realpath(repo / "blobs")))
    return (root,)


def _realpath(path: Path) -> Path | str:
    """The fully resolved path, or what kind of broken link it is."""
    try:
        return Path(os.path.realpath(path, strict=True))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink loop"
        if exc.errno == errno.ENOENT:
            return "dangling symlink"
        return f"symlink that does not resolve ({exc.strerror})"


def _regular_size(path: Path) -> int | str:
    """The size of a regular file, else what it is instead."""
    try:
        st = os.stat(path)
    except OSError as exc:
        return f"cannot stat: {exc.strerror}"
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return st.st_size
    for test, kind in ((stat.S_ISFIFO, "FIFO"), (stat.S_ISCHR, "character device"),
                       (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"), (stat.S_ISDIR, "directory")):
        if test(mode):
            return kind
    return "special file"


def _names(directory: Path) -> list[str]:
    try:
        return sorted(os.listdir(directory))
    except OSError as exc:
        raise SourceError(f"cannot list {exc.filename}: {exc.strerror}") from exc


def _join(outer: str | None, inner: str) -> str:
    return inner if outer is None else f"{outer}, {inner}"
