"""Text members a runtime extracts from a plain tar (a `.nemo`): read by name, bounded, never a crash."""

from __future__ import annotations

import gzip
import io
import random
import tarfile

import pytest

from app.core.findings import Severity
from app.core.formats.blobs import BytesBlob
from app.core.formats.detect import Format
from app.core.limits import Limits
from app.core.loaders.archive import UnreadArchive, compressed_member_texts, member_texts
from app.core.scanners.load_closure_scanner import LoadClosureScanner
from tests.fuzz.harness import scan_direct

NOISE = random.Random(0).randbytes(8192)  # incompressible: a cut stream ends inside the weights


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


def test_a_truncated_plain_archive_yields_what_it_can_and_no_error() -> None:
    data = tar({"model_config.yaml": b"a: 1\n", "big.bin": bytes(4096)})
    assert [n for n, _ in member_texts(BytesBlob(data[:1500]), ("model_config.yaml",), 1 << 20)] == [
        "model_config.yaml"]


def test_a_compressed_archive_is_read_as_far_as_its_configs_and_no_further() -> None:
    data = tar({"./model_config.yaml": b"a: 1\n", "weights.bin": bytes(1 << 16)})
    found = list(compressed_member_texts(BytesBlob(gzip.compress(data, mtime=0)), Format.GZIP,
                                         ("model_config.yaml",), Limits()))
    assert found == [("./model_config.yaml", "a: 1\n")]


def test_a_broken_compressed_archive_is_unread_not_empty() -> None:
    broken = gzip.compress(tar({"weights.bin": NOISE, "model_config.yaml": b"a: 1\n"}), mtime=0)[:2000]
    with pytest.raises(UnreadArchive):
        list(compressed_member_texts(BytesBlob(broken), Format.GZIP, ("model_config.yaml",), Limits()))


def test_the_closure_scanner_never_passes_a_config_it_did_not_read() -> None:
    big = tar({"model_config.yaml": b"_target_: os.system\n" + b"#" * 4000})
    broken = gzip.compress(tar({"weights.bin": NOISE, "model_config.yaml": b"_target_: os.system\n"}),
                           mtime=0)[:2000]
    outcome = scan_direct(LoadClosureScanner(), "model.nemo", big, Limits(max_text_bytes=1000))
    assert outcome is not None and [(f.rule, f.severity) for f in outcome.findings] == [
        ("limit-exceeded", Severity.HIGH)]
    outcome = scan_direct(LoadClosureScanner(), "model.nemo", broken)
    assert outcome is not None and [(f.rule, f.severity) for f in outcome.findings] == [
        ("archive-config-unread", Severity.MEDIUM)]


def test_a_config_in_a_gzip_nemo_is_judged_like_one_in_a_plain_tar() -> None:
    data = gzip.compress(tar({"./model_config.yaml": b"pre:\n  _target_: os.system\n"}), mtime=0)
    outcome = scan_direct(LoadClosureScanner(), "model.nemo", data)
    assert outcome is not None and "import-target-dangerous" in {f.rule for f in outcome.findings}
