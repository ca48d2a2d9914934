"""Tar links whose target leaves the archive: what a loader reads after extraction was never vetted.

tarfile resolves a symlink from the link's folder and a hard link from the archive root
(``TarFile._find_link_target``); NeMo extracts a ``.nemo`` and ``torch.load``s its ``model_weights.ckpt``.
"""

from __future__ import annotations

import io
import tarfile

import pytest

from app.core.formats.archive_members import UNSAFE_NAME, Issue
from app.core.formats.blobs import BytesBlob
from app.core.formats.tar_members import BlobCursor, tar_members


def _tar(name: str, target: str, kind: bytes, fmt: int) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=fmt) as archive:
        info = tarfile.TarInfo("model_config.yaml")
        info.size = 5
        archive.addfile(info, io.BytesIO(b"a: 1\n"))
        link = tarfile.TarInfo(name)
        link.type, link.linkname = kind, target
        archive.addfile(link)
    return out.getvalue()


def _link_issues(data: bytes) -> list[Issue]:
    return [e for e in tar_members(BlobCursor(BytesBlob(data)))
            if isinstance(e, Issue) and e.rule == UNSAFE_NAME and "link" in e.message]


@pytest.mark.parametrize("fmt", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
@pytest.mark.parametrize(("name", "target", "kind"), [
    ("model_weights.ckpt", "/root/.cache/other.ckpt", tarfile.SYMTYPE),
    ("a/model_weights.ckpt", "../../" + "x" * 120, tarfile.SYMTYPE),  # a GNU long link / pax linkpath
    ("model_weights.ckpt", "../outside.ckpt", tarfile.LNKTYPE),
])
def test_a_link_out_of_the_archive_is_reported(name: str, target: str, kind: bytes, fmt: int) -> None:
    issues = _link_issues(_tar(name, target, kind, fmt))
    assert len(issues) == 1 and target in issues[0].message


@pytest.mark.parametrize(("name", "target", "kind"), [
    ("a/model_weights.ckpt", "../model_config.yaml", tarfile.SYMTYPE),
    ("model_weights.ckpt", "model_config.yaml", tarfile.LNKTYPE),
])
def test_a_link_inside_the_archive_is_not(name: str, target: str, kind: bytes) -> None:
    assert _link_issues(_tar(name, target, kind, tarfile.PAX_FORMAT)) == []
