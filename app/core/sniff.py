"""Second-stage format detection that needs more than the head (zip member names)."""

from __future__ import annotations

import zipfile

from app.core.blobs import Blob, open_blob
from app.core.formats import refine_zip


def refine_format(blob: Blob, fmt: str) -> str:
    if fmt != "zip":
        return fmt
    try:
        with zipfile.ZipFile(open_blob(blob)) as zf:
            return refine_zip(zf.namelist())
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return "zip"  # the archive scanner reports what is wrong with it
