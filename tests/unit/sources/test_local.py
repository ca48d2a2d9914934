from pathlib import Path

import pytest

from app.core.ports import SourceError
from app.sources.local import LocalSource


def test_directory_manifest_and_ranged_reads(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.bin").write_bytes(b"0123456789")
    (tmp_path / "a.txt").write_text("abc")
    src = LocalSource(tmp_path)
    assert [f.path for f in src.manifest().files] == ["a.txt", "sub/b.bin"]
    assert src.read("sub/b.bin", 2, 3) == b"234"
    assert src.read("sub/b.bin", 8, 100) == b"89"
    assert src.bytes_read == 5


def test_single_file(tmp_path: Path) -> None:
    f = tmp_path / "model.pt"
    f.write_bytes(b"xyz")
    src = LocalSource(f)
    assert [m.path for m in src.manifest().files] == ["model.pt"]
    assert src.read("model.pt", 1, 1) == b"y"


def test_only_manifest_paths_are_readable(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("abc")
    src = LocalSource(tmp_path)
    with pytest.raises(SourceError, match="unknown file"):
        src.read("../etc/passwd", 0, 10)


def test_missing_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such file"):
        LocalSource(tmp_path / "nope")


def test_git_metadata_is_not_repo_content(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref")
    (tmp_path / "a.txt").write_text("abc")
    assert [f.path for f in LocalSource(tmp_path).manifest().files] == ["a.txt"]


def test_broken_links_and_fifos_are_listed_and_fail_to_read(tmp_path: Path) -> None:
    import os

    (tmp_path / "dangling").symlink_to(tmp_path / "missing-blob")
    os.mkfifo(tmp_path / "pipe")
    src = LocalSource(tmp_path)
    assert [f.path for f in src.manifest().files] == ["dangling", "pipe"]
    for path in ("dangling", "pipe"):
        with pytest.raises(SourceError, match="not a regular file"):
            src.read(path, 0, 10)


def test_an_unlistable_directory_is_an_error_not_a_gap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    def failing_walk(top: object, onerror: object = None, **_: object) -> object:
        assert callable(onerror)
        onerror(PermissionError(13, "Permission denied", str(tmp_path / "locked")))
        return iter(())

    monkeypatch.setattr(os, "walk", failing_walk)
    with pytest.raises(SourceError, match=r"cannot list .*locked"):
        LocalSource(tmp_path)
