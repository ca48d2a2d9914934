"""Verified download without a hub: a fetch function copies from a folder, tamperers change what lands."""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.services.downloads import (
    DownloadError,
    FetchFn,
    VerificationError,
    blob_id_of,
    download,
)
from app.sources.hub_errors import HubUnreachable
from tests.download_support import assert_untouched, destination, tree

SHA = "c" * 40
FILES = {
    "config.json": b'{"model_type": "tiny"}\n',
    "weights/model.safetensors": b"\x08\x00\x00\x00\x00\x00\x00\x00{}      " + b"\x01" * 64,
}
LFS = {"weights/model.safetensors"}


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    root = tmp_path / "origin"
    for path, data in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    return root


def manifest_of(origin: Path) -> list[dict[str, Any]]:
    """What the store records: sha256 for LFS files, the git blob id for the rest."""
    rows = []
    for path in FILES:
        file = origin / path
        sha256 = hashlib.sha256(file.read_bytes()).hexdigest() if path in LFS else None
        blob = "0" * 40 if path in LFS else blob_id_of(file)  # an LFS blob id is the pointer's: never checked
        rows.append({"path": path, "size": file.stat().st_size, "sha256": sha256, "blob_id": blob,
                     "format": "unknown"})
    return rows


def copier(origin: Path, calls: list[str] | None = None) -> FetchFn:
    def fetch(path: str, root: Path) -> None:
        if calls is not None:
            calls.append(path)
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(origin / path, root / path)
        bookkeeping = root / ".cache" / "huggingface" / f"{path}.metadata"  # as huggingface_hub leaves it
        bookkeeping.parent.mkdir(parents=True, exist_ok=True)
        bookkeeping.write_text("etag")

    return fetch


def tampering(fetch: FetchFn, target: str, change: Callable[[Path], None]) -> FetchFn:
    def tampered(path: str, root: Path) -> None:
        fetch(path, root)
        if path == target:
            change(root / path)

    return tampered


def flip_last_byte(file: Path) -> None:
    data = bytearray(file.read_bytes())
    data[-1] ^= 0xFF
    file.write_bytes(bytes(data))


@pytest.fixture
def dest(tmp_path: Path) -> Path:
    return destination(tmp_path)


def test_a_clean_download_lands_exactly_the_manifest(origin: Path, tmp_path: Path) -> None:
    target = tmp_path / "deploy" / "fresh"
    landed = download("org/tiny", SHA, manifest_of(origin), target, copier(origin))
    assert tree(target) == FILES  # no bookkeeping, nothing else
    assert landed.files == tuple(FILES) and landed.total_bytes == sum(len(d) for d in FILES.values())
    assert [p.name for p in target.parent.iterdir()] == ["fresh"]


def test_an_existing_destination_keeps_its_own_files(origin: Path, dest: Path) -> None:
    done: list[tuple[str, int]] = []
    download("org/tiny", SHA, manifest_of(origin), dest, copier(origin), on_file=lambda p, n: done.append((p, n)))
    assert tree(dest) == FILES | {"keep.txt": b"mine\n"}
    assert [p for p, _ in done] == list(FILES)


@pytest.mark.parametrize("target", sorted(FILES))  # one verified by git blob id, one by LFS sha256
def test_a_same_size_tampered_file_is_refused_by_its_hash(origin: Path, dest: Path, target: str) -> None:
    fetch = tampering(copier(origin), target, flip_last_byte)
    kind = "sha256" if target in LFS else "git blob id"
    with pytest.raises(VerificationError, match=f"{kind} .* does not match") as caught:
        download("org/tiny", SHA, manifest_of(origin), dest, fetch)
    assert caught.value.path == target and target in str(caught.value)
    assert_untouched(dest)


def test_a_file_of_another_size_is_refused(origin: Path, dest: Path) -> None:
    fetch = tampering(copier(origin), "config.json", lambda f: f.write_bytes(f.read_bytes() + b" "))
    with pytest.raises(VerificationError, match=r"config.json: .* bytes fetched"):
        download("org/tiny", SHA, manifest_of(origin), dest, fetch)
    assert_untouched(dest)


def test_a_file_outside_the_manifest_is_refused(origin: Path, dest: Path) -> None:
    fetch = tampering(copier(origin), "config.json", lambda f: (f.parent / "evil.py").write_text("import os\n"))
    with pytest.raises(VerificationError, match=r"evil.py: fetched but not in the approved manifest"):
        download("org/tiny", SHA, manifest_of(origin), dest, fetch)
    assert_untouched(dest)


def test_a_linked_folder_outside_the_manifest_is_refused(origin: Path, dest: Path, tmp_path: Path) -> None:
    fetch = tampering(copier(origin), "config.json", lambda f: (f.parent / "extra").symlink_to(tmp_path))
    with pytest.raises(VerificationError, match="extra: fetched a link"):
        download("org/tiny", SHA, manifest_of(origin), dest, fetch)
    assert_untouched(dest)


def test_a_manifest_file_that_never_arrives_is_refused(origin: Path, dest: Path) -> None:
    fetch = tampering(copier(origin), "config.json", lambda f: f.unlink())
    with pytest.raises(VerificationError, match=r"config.json: missing"):
        download("org/tiny", SHA, manifest_of(origin), dest, fetch)
    assert_untouched(dest)


def test_a_link_in_place_of_a_file_is_refused(origin: Path, dest: Path) -> None:
    def relink(file: Path) -> None:
        file.unlink()
        file.symlink_to(origin / "config.json")

    with pytest.raises(VerificationError, match=r"config.json: missing .* not a regular file"):
        download("org/tiny", SHA, manifest_of(origin), dest, tampering(copier(origin), "config.json", relink))
    assert_untouched(dest)


def test_a_failing_fetch_names_the_file_and_leaves_nothing(origin: Path, dest: Path) -> None:
    def unreachable(path: str, root: Path) -> None:
        if path == "weights/model.safetensors":
            raise HubUnreachable("cannot reach the hub")
        copier(origin)(path, root)

    with pytest.raises(DownloadError, match=r"weights/model.safetensors: cannot fetch it: cannot reach the hub"):
        download("org/tiny", SHA, manifest_of(origin), dest, unreachable)
    assert_untouched(dest)


@pytest.mark.parametrize(
    ("path", "problem"),
    [("../escape.txt", "not a safe relative path"), ("/etc/passwd", "not a safe relative path"),
     ("a//b", "not a safe relative path"), (".cache/huggingface/x", "not a safe relative path")],
)
def test_an_unsafe_manifest_path_is_refused_before_any_fetch(
    origin: Path, dest: Path, path: str, problem: str
) -> None:
    calls: list[str] = []
    manifest = [*manifest_of(origin), {"path": path, "size": 1, "sha256": None, "blob_id": "0" * 40}]
    with pytest.raises(VerificationError, match=problem):
        download("org/tiny", SHA, manifest, dest, copier(origin, calls))
    assert calls == []
    assert_untouched(dest)


def test_a_manifest_without_hashes_or_files_cannot_be_verified(origin: Path, dest: Path) -> None:
    calls: list[str] = []
    unhashed = [{**row, "sha256": None, "blob_id": None} for row in manifest_of(origin)]
    with pytest.raises(VerificationError, match="records no hash"):
        download("org/tiny", SHA, unhashed, dest, copier(origin, calls))
    with pytest.raises(DownloadError, match="no stored manifest"):
        download("org/tiny", SHA, [], dest, copier(origin, calls))
    assert calls == []
    assert_untouched(dest)


def test_a_destination_in_the_way_is_refused_before_any_fetch(origin: Path, dest: Path, tmp_path: Path) -> None:
    calls: list[str] = []
    (dest / "config.json").mkdir()
    with pytest.raises(DownloadError, match="is a directory in the way"):
        download("org/tiny", SHA, manifest_of(origin), dest, copier(origin, calls))
    (dest / "config.json").rmdir()
    (dest / "weights").symlink_to(tmp_path)  # files would land outside the destination
    with pytest.raises(DownloadError, match="weights is in the way"):
        download("org/tiny", SHA, manifest_of(origin), dest, copier(origin, calls))
    (dest / "weights").unlink()
    not_a_folder = tmp_path / "deploy" / "file"
    not_a_folder.write_text("x")
    with pytest.raises(DownloadError, match="not a plain directory"):
        download("org/tiny", SHA, manifest_of(origin), not_a_folder, copier(origin, calls))
    assert calls == []
    assert not_a_folder.read_text() == "x"



def test_an_os_error_while_moving_in_is_a_clear_error_naming_what_moved(
    origin: Path, dest: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_replace = os.replace
    calls: list[str] = []

    def failing_second(src: Any, dst: Any) -> None:
        calls.append(str(dst))
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_second)
    with pytest.raises(DownloadError, match=r"No space left on device; already moved there \(1\)"):
        download("org/tiny", SHA, manifest_of(origin), dest, copier(origin))


def test_an_os_error_into_a_fresh_folder_leaves_no_folder(
    origin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "deploy" / "fresh"

    def no_rename(src: Any, dst: Any) -> None:
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(os, "rename", no_rename)
    with pytest.raises(DownloadError, match="Permission denied"):
        download("org/tiny", SHA, manifest_of(origin), target, copier(origin))
    assert not target.exists()


@pytest.mark.parametrize(
    ("change", "says"),
    [({"sha256": "z" * 64}, "sha256 'zzz"), ({"sha256": "a" * 63}, "not 64 hex digits"),
     ({"sha256": 7}, "sha256 '7'"), ({"blob_id": "a" * 41}, "not 40 hex digits"),
     ({"blob_id": ["a" * 40]}, "git blob id"), ({"size": -1}, "not a byte count"), ({"size": "12"}, "byte count"),
     ({"size": 1.5}, "byte count"), ({"size": True}, "byte count"), ({"size": None}, "byte count"),
     ({"path": 7}, "not a safe relative path")],
)
def test_a_malformed_manifest_entry_is_refused_before_any_fetch(
    origin: Path, dest: Path, change: dict[str, Any], says: str
) -> None:
    """A manifest from a server is not trusted to be well-formed: what cannot be checked exactly is refused."""
    manifest = manifest_of(origin)
    manifest[1] = manifest[1] | change  # the LFS file: its sha256 decides
    calls: list[str] = []
    with pytest.raises(VerificationError, match=says):
        download("acme/tiny", SHA, manifest, dest, copier(origin, calls))
    assert calls == [] and sorted(os.listdir(dest)) == ["keep.txt"]


@pytest.mark.parametrize("sha", ["main", "c" * 39, "C" * 40 + "0", "g" * 40, ""])
def test_only_an_exact_commit_is_downloaded(origin: Path, dest: Path, sha: str) -> None:
    calls: list[str] = []
    with pytest.raises(DownloadError, match="40-hex commit"):
        download("acme/tiny", sha, manifest_of(origin), dest, copier(origin, calls))
    assert calls == []
