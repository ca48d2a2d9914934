"""The stored manifest codec: one commit's files as the store keeps them and the gate hands them out.

``dump`` writes the list the store keeps per revision (``RevisionRow.manifest``) and an approving
gate answer carries as ``files``: one ``{"path", "size", "sha256", "blob_id", "format"}`` object per
file. ``load`` reads such a list back (from the store, or from a server's answer) as ManifestFiles,
refusing every entry that could not be verified or placed safely: ``hfvet download`` checks each
fetched byte against what it returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any, Protocol

from app.core.manifest import ManifestFile

ManifestDoc = list[dict[str, Any]]  # the stored form, as dump writes it (JSON: plain dicts and scalars)


class ManifestFormatError(ValueError):
    """An entry of a stored manifest that cannot be verified or placed safely."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


class StoredFile(Protocol):
    """What the store keeps of a file: a ManifestFile, or a report's FileReport."""

    @property
    def path(self) -> str: ...
    @property
    def size(self) -> int: ...
    @property
    def sha256(self) -> str | None: ...
    @property
    def blob_id(self) -> str | None: ...
    @property
    def format(self) -> str: ...


def dump(files: Iterable[StoredFile]) -> ManifestDoc:
    """The stored form of ``files`` (a report's files, or a manifest's)."""
    return [{"path": f.path, "size": f.size, "sha256": f.sha256, "blob_id": f.blob_id, "format": f.format}
            for f in files]


def load(doc: Sequence[object], *, reserved: PurePosixPath | None = None) -> tuple[ManifestFile, ...]:
    """The files of a stored manifest, in order; ``ManifestFormatError`` names the first entry refused.

    Each needs a safe relative path (listed once, not under ``reserved``), a byte count, and a
    well-formed sha256 or git blob id (at least one: otherwise its bytes cannot be checked).
    """
    files: list[ManifestFile] = []
    seen: set[str] = set()
    for raw in doc:
        entry: dict[str, Any] = raw if isinstance(raw, dict) else {}  # not an object: no path, refused
        path = entry.get("path")
        path = path if isinstance(path, str) else ""
        _check_path(path, reserved)
        if path in seen:
            raise ManifestFormatError(path, "listed twice in the manifest")
        seen.add(path)
        fmt = entry.get("format")
        files.append(ManifestFile(path, _size(path, entry.get("size")), *_hashes(path, entry),
                                  format=fmt if isinstance(fmt, str) else "unknown"))
    return tuple(files)


def declared_bytes(doc: ManifestDoc) -> int:
    """The sizes a stored manifest declares, summed as given (before ``load`` checks them)."""
    return sum(int(f.get("size") or 0) for f in doc)


def recorded_hashes(entry: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(sha256, git blob id) as a stored entry records them (a manifest's, or a report's files[]), unchecked."""
    sha256, blob_id = entry.get("sha256"), entry.get("blob_id")
    return (str(sha256) if sha256 else None), (str(blob_id) if blob_id else None)


def _size(path: str, size: object) -> int:
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ManifestFormatError(path, f"the manifest's size {str(size)[:40]!r} is not a byte count")
    return size


def _hashes(path: str, raw: dict[str, Any]) -> tuple[str | None, str | None]:
    """(sha256, blob id), each well-formed hex or None; at least one, or the file cannot be verified."""
    sha256, blob_id = raw.get("sha256") or None, raw.get("blob_id") or None
    if sha256 is None and blob_id is None:
        raise ManifestFormatError(path, "the manifest records no hash for it, so it cannot be verified")
    for kind, value, length in (("sha256", sha256, 64), ("git blob id", blob_id, 40)):
        if value is not None and not (isinstance(value, str) and _is_hex(value, length)):
            raise ManifestFormatError(path, f"the manifest's {kind} {str(value)[:80]!r} is not {length} hex digits")
    return sha256, blob_id


def _is_hex(value: str, length: int) -> bool:
    return len(value) == length and all(c in "0123456789abcdef" for c in value.lower())


def _check_path(path: str, reserved: PurePosixPath | None) -> None:
    unsafe = (not path or "\\" in path or path.startswith("/") or any(p in ("", ".", "..") for p in path.split("/"))
              or (reserved is not None and PurePosixPath(path).is_relative_to(reserved)))
    if unsafe:
        raise ManifestFormatError(path or "(empty path)", "not a safe relative path")
