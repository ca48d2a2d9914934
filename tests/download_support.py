"""What the download tests share: a destination with a file of its own, and the checks on it."""

from __future__ import annotations

from pathlib import Path

KEPT = {"keep.txt": b"mine\n"}


def destination(tmp_path: Path) -> Path:
    """A destination with a file of its own, which a refused download must leave as it was."""
    folder = tmp_path / "deploy" / "model"
    folder.mkdir(parents=True)
    for name, data in KEPT.items():
        (folder / name).write_bytes(data)
    return folder


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_untouched(dest: Path, beside: frozenset[str] = frozenset()) -> None:
    """DIR as it was, and no staging folder left beside it (``beside``: other folders the test made there)."""
    assert tree(dest) == KEPT
    assert sorted(p.name for p in dest.parent.iterdir() if p.name not in beside) == [dest.name]
