"""Second-stage format detection that needs more than the head (zip member names)."""

from __future__ import annotations

from app.core.blobs import Blob
from app.core.formats import refine_zip
from app.core.scanners.stream_util import CorruptStream
from app.core.scanners.zip_reader import read_directory


def refine_format(blob: Blob, fmt: str) -> str:
    if fmt != "zip":
        return fmt
    try:
        members = read_directory(blob)
    except CorruptStream:
        return "zip"  # the archive scanner reports what is wrong with it
    return refine_zip([m.name for m in members])
