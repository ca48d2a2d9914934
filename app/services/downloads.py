"""Verified download: fetch exactly an approved manifest into staging, check every byte, then move it in.

The fetching is handed in (``FetchFn``), so tests can inject a tamperer and the hub client stays in
``app.sources``. Nothing fetched is ever loaded: files are only hashed. Until every file matches
the stored manifest, nothing touches the destination; on any failure the staging folder is removed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from app.core import manifest_json
from app.core.gate import Approved
from app.core.ids import is_commit
from app.core.manifest import ManifestFile
from app.core.manifest_json import ManifestDoc, ManifestFormatError
from app.core.ports import SourceError
from app.errors import HfvetError
from app.services.gating import GateResult

FetchFn = Callable[[str, Path], None]  # (repo path, staging root): write the file at root/path
FileDoneFn = Callable[[str, int], None]  # (repo path, bytes) once a file is fetched and verified

# huggingface_hub keeps its local_dir bookkeeping here: expected in staging, never moved into place.
CLIENT_BOOKKEEPING = PurePosixPath(".cache/huggingface")
_CHUNK = 1 << 20


class DownloadError(HfvetError):
    """The download cannot start or finish (refused by the gate, destination unusable, fetch failed)."""


class VerificationError(DownloadError):
    """A fetched file does not match the approved manifest; nothing was moved into place."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}; nothing was moved into the destination")
        self.path = path


@dataclass(frozen=True)
class Landed:
    repo: str
    sha: str
    local_dir: Path
    files: tuple[str, ...]
    total_bytes: int


def download_approved(
    result: GateResult, local_dir: Path, fetch: FetchFn, *, on_file: FileDoneFn | None = None
) -> Landed:
    """Download what the gate approved; a refused gate fetches nothing."""
    if not isinstance(result.answer, Approved):
        raise DownloadError(f"{result.repo} is not approved; nothing was fetched")
    return download(result.repo, result.answer.outcome.sha, result.files, local_dir, fetch, on_file=on_file)


def download(
    repo: str,
    sha: str,
    manifest: ManifestDoc,
    local_dir: Path,
    fetch: FetchFn,
    *,
    on_file: FileDoneFn | None = None,
) -> Landed:
    """Fetch every manifest file into staging beside ``local_dir``, verify all, then move them in."""
    if not is_commit(sha):
        raise DownloadError(f"{sha[:80]!r} is not a 40-hex commit: only an exact commit is downloaded")
    entries = parse_manifest(manifest)
    local_dir = local_dir.absolute()
    check_destination(local_dir, entries)
    local_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{local_dir.name}.hfvet-staging-", dir=local_dir.parent))
    try:
        fetched = staging / "fetched"
        fetched.mkdir()
        for entry in entries:
            _fetch_one(fetch, entry, fetched)
            verify(fetched, entry)
            if on_file is not None:
                on_file(entry.path, entry.size)
        refuse_extras(fetched, entries)
        install(fetched, staging / "payload", local_dir, entries)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Landed(repo, sha, local_dir, tuple(e.path for e in entries), sum(e.size for e in entries))


def parse_manifest(manifest: ManifestDoc) -> list[ManifestFile]:
    """The stored manifest as files (app.core.manifest_json); anything that cannot be verified or placed
    safely is refused, and so is huggingface_hub's bookkeeping folder."""
    if not manifest:
        raise DownloadError("the approved revision has no stored manifest: vet it again")
    try:
        return list(manifest_json.load(manifest, reserved=CLIENT_BOOKKEEPING))
    except ManifestFormatError as exc:
        raise VerificationError(exc.path, exc.problem) from exc


def check_destination(local_dir: Path, entries: list[ManifestFile]) -> None:
    """Refuse, before any byte is fetched, a destination the files could not be moved into."""
    if local_dir.is_symlink() or (local_dir.exists() and not local_dir.is_dir()):
        raise DownloadError(f"{local_dir} exists and is not a plain directory")
    if not local_dir.exists():
        return
    for entry in entries:
        target = local_dir / entry.path
        for parent in list(target.relative_to(local_dir).parents)[:-1]:  # folders between local_dir and target
            folder = local_dir / parent
            if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
                raise DownloadError(f"{folder} is in the way of {entry.path} (not a plain directory)")
        if target.is_dir() and not target.is_symlink():
            raise DownloadError(f"{target} is a directory in the way of the file {entry.path}")


def _fetch_one(fetch: FetchFn, entry: ManifestFile, fetched: Path) -> None:
    try:
        fetch(entry.path, fetched)
    except (HfvetError, SourceError, OSError) as exc:
        raise DownloadError(f"{entry.path}: cannot fetch it: {exc}; nothing was moved into the destination") from exc


def verify(fetched: Path, entry: ManifestFile) -> None:
    """The fetched file is a regular file of the manifest's size and hash (LFS sha256, else git blob id)."""
    file = fetched / entry.path
    if file.is_symlink() or not file.is_file():
        raise VerificationError(entry.path, "missing from what was fetched (or not a regular file)")
    size = file.stat().st_size
    if size != entry.size:
        raise VerificationError(entry.path, f"{size} bytes fetched, the approved manifest says {entry.size}")
    if entry.sha256:
        _expect(entry.path, "sha256", entry.sha256, sha256_of(file))
    else:
        _expect(entry.path, "git blob id", entry.blob_id or "", blob_id_of(file))


def _expect(path: str, kind: str, expected: str, actual: str) -> None:
    if actual != expected.lower():
        raise VerificationError(path, f"{kind} {actual} does not match the approved {expected}")


def sha256_of(file: Path) -> str:
    digest = hashlib.sha256()
    for chunk in _chunks(file):
        digest.update(chunk)
    return digest.hexdigest()


def blob_id_of(file: Path) -> str:
    """Git's blob id: sha1 over ``blob <size>\\0`` and the content."""
    digest = hashlib.sha1(f"blob {file.stat().st_size}\0".encode(), usedforsecurity=False)
    for chunk in _chunks(file):
        digest.update(chunk)
    return digest.hexdigest()


def _chunks(file: Path) -> Iterator[bytes]:
    with file.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            yield chunk


def refuse_extras(fetched: Path, entries: list[ManifestFile]) -> None:
    """Anything fetched that the manifest does not list (the client's bookkeeping aside) is refused."""
    expected = {e.path for e in entries}
    for root, dirs, files in os.walk(fetched):
        rel_root = PurePosixPath(Path(root).relative_to(fetched).as_posix())
        dirs[:] = [d for d in dirs if rel_root / d != CLIENT_BOOKKEEPING]
        for name in dirs:
            if (Path(root) / name).is_symlink():  # os.walk lists a folder link but never enters it
                raise VerificationError((rel_root / name).as_posix(), "fetched a link, not in the approved manifest")
        for name in files:
            rel = (rel_root / name).as_posix()
            if rel not in expected:
                raise VerificationError(rel, "fetched but not in the approved manifest")


def install(fetched: Path, payload: Path, local_dir: Path, entries: list[ManifestFile]) -> None:
    """Move the verified files in: one rename of a fresh folder, else file by file into the existing one."""
    if not local_dir.exists():
        try:
            for entry in entries:
                _move(fetched / entry.path, payload / entry.path)
            os.rename(payload, local_dir)
        except OSError as exc:  # staging is removed by the caller; DIR was never created
            raise DownloadError(f"could not move the verified files into {local_dir}: {exc}") from exc
        return
    moved: list[str] = []
    for entry in entries:
        try:
            _move(fetched / entry.path, local_dir / entry.path)
        except OSError as exc:  # an OS error half-way: say exactly which files are already in DIR
            raise DownloadError(f"could not move {entry.path} into {local_dir}: {exc}; already moved there "
                                f"({len(moved)}): {', '.join(moved) or 'none'} — do not use {local_dir}") from exc
        moved.append(entry.path)


def _move(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(source, target)  # same filesystem: a rename, never a copy
