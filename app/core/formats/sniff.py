"""Second-stage format detection that needs more than the head (zip member names)."""

from __future__ import annotations

from app.core.formats.detect import Format, refine_zip
from app.core.formats.streams import CorruptStream
from app.core.formats.zip_reader import read_directory
from app.core.ports import Blob


def refine_format(blob: Blob, fmt: str) -> str:
    if fmt != Format.ZIP:
        return fmt
    try:
        members = read_directory(blob)
    except CorruptStream:
        return Format.ZIP  # the archive scanner reports what is wrong with it
    return refine_zip([m.name for m in members])
