"""Text members a runtime extracts from a plain tar (a `.nemo`): read by name, bounded, never a crash."""

from __future__ import annotations

import gzip
import io
import tarfile

from app.core.formats.blobs import BytesBlob
from app.core.loaders.archive import member_texts


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


def test_members_over_the_text_limit_are_skipped() -> None:
    data = tar({"model_config.yaml": b"x" * 2000})
    assert list(member_texts(BytesBlob(data), ("model_config.yaml",), 1000)) == []


def test_a_truncated_or_compressed_archive_yields_what_it_can_and_no_error() -> None:
    data = tar({"model_config.yaml": b"a: 1\n", "big.bin": bytes(4096)})
    assert [n for n, _ in member_texts(BytesBlob(data[:1500]), ("model_config.yaml",), 1 << 20)] == [
        "model_config.yaml"]
    assert list(member_texts(BytesBlob(gzip.compress(data, mtime=0)), ("model_config.yaml",), 1 << 20)) == []
