"""Text members a runtime extracts from a plain tar (a `.nemo`): read by name, bounded, never a crash."""

from __future__ import annotations

import gzip
import io
import tarfile

from app.core.findings import Severity
from app.core.formats.blobs import BytesBlob
from app.core.limits import Limits
from app.core.loaders.archive import member_texts
from app.core.scanners.load_closure_scanner import LoadClosureScanner
from tests.fuzz.harness import scan_direct


def tar(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return out.getvalue()


def test_matching_members_are_read_whole_by_name_or_base_name() -> None:
    data = tar({"./model_config.yaml": b"a: 1\n" * 300, "sub/model_config.yaml": b"b: 2\n",
                "model_weights.ckpt": b"\x80\x02" + bytes(5000), "other.yaml": b"c: 3\n"})
    found = dict(member_texts(BytesBlob(data), ("model_config.yaml",), 1 << 20))
    assert found == {"./model_config.yaml": "a: 1\n" * 300, "sub/model_config.yaml": "b: 2\n"}


def test_members_over_the_text_limit_are_named_unread() -> None:
    data = tar({"model_config.yaml": b"x" * 2000})
    assert list(member_texts(BytesBlob(data), ("model_config.yaml",), 1000)) == [("model_config.yaml", None)]


def test_a_truncated_or_compressed_archive_yields_what_it_can_and_no_error() -> None:
    data = tar({"model_config.yaml": b"a: 1\n", "big.bin": bytes(4096)})
    assert [n for n, _ in member_texts(BytesBlob(data[:1500]), ("model_config.yaml",), 1 << 20)] == [
        "model_config.yaml"]
    assert list(member_texts(BytesBlob(gzip.compress(data, mtime=0)), ("model_config.yaml",), 1 << 20)) == []


def test_the_closure_scanner_never_passes_a_config_it_did_not_read() -> None:
    big = tar({"model_config.yaml": b"_target_: os.system\n" + b"#" * 4000})
    compressed = gzip.compress(tar({"model_config.yaml": b"_target_: os.system\n"}), mtime=0)
    small = Limits(max_text_bytes=1000)
    outcome = scan_direct(LoadClosureScanner(), "model.nemo", big, small)
    assert outcome is not None and [(f.rule, f.severity) for f in outcome.findings] == [
        ("limit-exceeded", Severity.HIGH)]
    outcome = scan_direct(LoadClosureScanner(), "model.nemo", compressed)
    assert outcome is not None and [(f.rule, f.severity) for f in outcome.findings] == [
        ("archive-config-unread", Severity.MEDIUM)]
