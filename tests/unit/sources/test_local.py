import json
import os
import re
import stat
from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.limits import Limits
from app.core.pipeline import VetOptions, vet
from app.core.ports import SourceError
from app.core.report import Report
from app.core.verdict import Verdict
from app.sources.local import LocalSource
from tests.fakes import TextScanner


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
    (tmp_path / "dangling").symlink_to(tmp_path / "missing-blob")
    os.mkfifo(tmp_path / "pipe")
    src = LocalSource(tmp_path)
    assert [f.path for f in src.manifest().files] == ["dangling", "pipe"]
    for path in ("dangling", "pipe"):
        with pytest.raises(SourceError, match=f"cannot read {path}"):
            src.read(path, 0, 10)
        with pytest.raises(SourceError, match=f"cannot read {path}"):
            src.size(path)


def test_an_unlistable_directory_is_an_error_not_a_gap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    real_listdir = os.listdir

    def failing_listdir(path: str | os.PathLike[str]) -> list[str]:
        if Path(path) == locked:  # as root, chmod 000 would not stop the listing
            raise PermissionError(13, "Permission denied", str(path))
        return real_listdir(path)

    monkeypatch.setattr(os, "listdir", failing_listdir)
    with pytest.raises(SourceError, match=r"cannot list .*locked"):
        LocalSource(tmp_path)


# --- Entries that are not regular files: unscanned with a high finding, never "empty" ---------


def _vet(root: Path) -> Report:
    return vet(LocalSource(root), [TextScanner()], options=VetOptions(workers=1))


def _read_errors(report: Report) -> dict[str, str]:
    return {f.path: f.message for f in report.findings if f.rule == "read-error" and f.severity is Severity.HIGH}


def _assert_refused(report: Report, expected: dict[str, str]) -> None:
    """Each path is listed, not scanned, with a high read-error whose message matches."""
    errors = _read_errors(report)
    files = {f.path: f for f in report.files}
    for path, pattern in expected.items():
        assert not files[path].scanned and files[path].format == "unreadable", path
        assert re.search(pattern, errors[path]), (path, errors[path])
    assert report.verdict is Verdict.REJECT


def test_non_regular_entries_are_unscanned_with_a_high_finding(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "dangling").symlink_to("missing-blob")
    (tmp_path / "loop-a").symlink_to("loop-b")
    (tmp_path / "loop-b").symlink_to("loop-a")
    (tmp_path / "self").symlink_to("self")
    (tmp_path / "to-pipe").symlink_to("pipe")
    _assert_refused(_vet(tmp_path), {
        "pipe": "not a regular file.*FIFO",
        "dangling": "dangling symlink.*'missing-blob'",
        "loop-a": "symlink loop",
        "loop-b": "symlink loop",
        "self": "symlink loop",
        "to-pipe": "'pipe'.*not a regular file.*FIFO",
    })


def test_a_device_is_unscanned_with_a_high_finding(tmp_path: Path) -> None:
    os.mknod(tmp_path / "null", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    _assert_refused(_vet(tmp_path), {"null": "not a regular file.*character device"})


def test_an_empty_regular_file_is_still_empty_and_clean(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_bytes(b"")
    report = _vet(tmp_path)
    assert [(f.path, f.format, f.scanned) for f in report.files] == [("empty.txt", "empty", True)]
    assert report.findings == () and report.verdict is Verdict.APPROVE


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_single_non_regular_file_given_as_root_is_refused(tmp_path: Path, kind: str) -> None:
    root = tmp_path / kind
    if kind == "fifo":
        os.mkfifo(root)
    else:
        os.mknod(root, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    report = _vet(root)
    assert [f.path for f in report.files] == [kind]
    _assert_refused(report, {kind: "not a regular file"})


def test_a_file_swapped_for_a_fifo_or_outbound_link_after_listing_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "outside").write_text("secret")
    snap = tmp_path / "snap"
    snap.mkdir()
    for name in ("a", "b"):
        (snap / name).write_text("hello")
    src = LocalSource(snap)
    (snap / "a").unlink()
    os.mkfifo(snap / "a")  # opening it for reading must not block
    (snap / "b").unlink()
    (snap / "b").symlink_to(tmp_path / "outside")
    for name in ("a", "b"):
        with pytest.raises(SourceError, match=f"cannot read {name}"):
            src.read(name, 0, 10)
    assert src.bytes_read == 0


# --- Links: followed inside the snapshot, refused (high) when they leave it or loop ------------


def _links(report: Report) -> dict[str, str]:
    return {f.path: f.message for f in report.findings if f.rule == "symlink" and f.severity is Severity.INFO}


def test_file_and_directory_links_inside_the_snapshot_are_followed_and_listed(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "w.txt").write_text("EVIL")
    (tmp_path / "alias").symlink_to("sub")
    (tmp_path / "w-link.txt").symlink_to("sub/w.txt")
    report = _vet(tmp_path)
    assert sorted(f.path for f in report.files) == ["alias/w.txt", "sub/w.txt", "w-link.txt"]
    assert all(f.scanned for f in report.files)
    evil = sorted(f.path for f in report.findings if f.rule == "evil")
    assert evil == ["alias/w.txt", "sub/w.txt", "w-link.txt"]  # the subtree behind the link was vetted
    links = _links(report)
    assert set(links) == {"alias/w.txt", "w-link.txt"}
    assert "'alias' -> 'sub'" in links["alias/w.txt"] and "'sub/w.txt'" in links["w-link.txt"]


def test_links_that_leave_the_snapshot_are_refused_unread(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("EVIL")
    snap = tmp_path / "snap"
    snap.mkdir()
    (snap / "abs-link").symlink_to(outside / "secret.txt")
    (snap / "rel-link").symlink_to("../outside/secret.txt")
    (snap / "out-dir").symlink_to("../outside")
    src = LocalSource(snap)
    report = vet(src, [TextScanner()], options=VetOptions(workers=1))
    _assert_refused(report, {
        "abs-link": f"'{outside / 'secret.txt'}'.*outside the snapshot",
        "rel-link": "'../outside/secret.txt'.*outside the snapshot",
        "out-dir": "'../outside'.*outside the snapshot",
    })
    assert src.bytes_read == 0 and not any(f.rule == "evil" for f in report.findings)


def test_directory_link_loops_are_refused_and_the_listing_ends(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.txt").write_text("ok")
    (tmp_path / "a" / "up").symlink_to("..")
    (tmp_path / "here").symlink_to(".")
    report = _vet(tmp_path)
    _assert_refused(report, {"a/up": "directory symlink loop", "here": "directory symlink loop"})
    assert sorted(f.path for f in report.files) == ["a/up", "a/x.txt", "here"]


def test_a_link_bomb_stops_at_the_listing_limit(tmp_path: Path) -> None:
    # d0/{l1,l2} -> d1, d1/{l1,l2} -> d2 ...: the aliases double at each level.
    for level in range(12):
        (tmp_path / f"d{level}").mkdir()
        (tmp_path / f"d{level}" / "f.txt").write_text("x")
        if level:
            for link in ("l1", "l2"):
                (tmp_path / f"d{level - 1}" / link).symlink_to(f"../d{level}")
    with pytest.raises(SourceError, match="more than 1000 entries"):
        LocalSource(tmp_path, limits=Limits(max_listed_entries=1000))


def _hf_cache_repo(tmp_path: Path) -> Path:
    """models--org--name/{blobs/, refs/main, snapshots/<sha>/...} as huggingface_hub lays it out."""
    repo = tmp_path / "hub" / "models--org--name"
    (repo / "blobs").mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40)
    (repo / "blobs" / "1111").write_text('{"model_type": "x"}')
    (repo / "blobs" / "2222").write_text("weights")
    snap = repo / "snapshots" / ("a" * 40)
    (snap / "sub").mkdir(parents=True)
    (snap / "config.json").symlink_to("../../blobs/1111")
    (snap / "sub" / "w.txt").symlink_to("../../../blobs/2222")
    return snap


def test_hf_cache_snapshot_links_into_blobs_are_vetted(tmp_path: Path) -> None:
    snap = _hf_cache_repo(tmp_path)
    report = _vet(snap)
    assert sorted(f.path for f in report.files) == ["config.json", "sub/w.txt"]
    assert all(f.scanned for f in report.files) and report.verdict is Verdict.APPROVE
    assert report.stats.bytes_read == len('{"model_type": "x"}') + len("weights")
    assert "'../../blobs/1111'" in _links(report)["config.json"]


def test_hf_cache_links_outside_blobs_are_refused(tmp_path: Path) -> None:
    snap = _hf_cache_repo(tmp_path)
    (snap / "ref").symlink_to("../../refs/main")
    (snap / "other-snapshot").symlink_to("../" + "b" * 40)
    (snap.parent / ("b" * 40)).mkdir()
    _assert_refused(_vet(snap), {"ref": "outside the snapshot", "other-snapshot": "outside the snapshot"})


def test_blobs_are_in_bounds_only_for_a_cache_snapshot(tmp_path: Path) -> None:
    (tmp_path / "blobs").mkdir()
    (tmp_path / "blobs" / "1111").write_text("x")
    snap = tmp_path / "snapshots" / "copy"  # no models--org--name above it
    snap.mkdir(parents=True)
    (snap / "f").symlink_to("../../blobs/1111")
    _assert_refused(_vet(snap), {"f": "outside the snapshot"})


def test_a_single_file_link_is_vetted_under_its_own_name(tmp_path: Path) -> None:
    snap = _hf_cache_repo(tmp_path)
    src = LocalSource(snap / "config.json")
    assert [f.path for f in src.manifest().files] == ["config.json"]
    assert src.read("config.json", 0, 3) == b'{"m'
    assert "'../../blobs/1111'" in _links(vet(src, [TextScanner()], options=VetOptions(workers=1)))["config.json"]


def test_a_dangling_or_looping_root_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "dangling").symlink_to("missing")
    (tmp_path / "self").symlink_to("self")
    with pytest.raises(SourceError, match="dangling symlink"):
        LocalSource(tmp_path / "dangling")
    with pytest.raises(SourceError, match="symlink loop"):
        LocalSource(tmp_path / "self")


def test_hfvet_scan_of_a_single_fifo_or_file_link(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from app.cli.main import app

    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "real.txt").write_text("hello")
    (tmp_path / "link.txt").symlink_to("real.txt")
    fifo = CliRunner().invoke(app, ["scan", str(tmp_path / "pipe"), "--format", "json", "--policy", "interim"])
    assert fifo.exit_code == 1  # reject: a high read-error, not an empty file and not a crash
    assert [(f["path"], f["rule"]) for f in json.loads(fifo.stdout)["findings"]] == [("pipe", "read-error")]
    link = CliRunner().invoke(app, ["scan", str(tmp_path / "link.txt"), "--format", "json", "--policy", "interim"])
    doc = json.loads(link.stdout)
    assert link.exit_code == 0 and [f["path"] for f in doc["files"]] == ["link.txt"]
    assert [f["rule"] for f in doc["findings"]] == ["symlink"]
