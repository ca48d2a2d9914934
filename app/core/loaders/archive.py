"""Text members of a plain tar that a runtime extracts and reads (NeMo's ``model_config.yaml`` in a ``.nemo``).

NeMo's ``SaveRestoreConnector`` untars the file and instantiates the config it finds. hfvet walks the
tar headers with its own bounded walker (seeking past member data) and reads only members whose
names match and whose size is within the text limit. Compressed tars are walked by the archive
scanners; reading configs out of them is not done here (a stream cannot seek back to a member).
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterator

from app.core.formats.archive_members import ArchiveError, Member
from app.core.formats.tar_members import BlobCursor, tar_members
from app.core.ports import Blob


def member_texts(blob: Blob, patterns: tuple[str, ...], max_bytes: int) -> Iterator[tuple[str, str | None]]:
    """(member name, text) of each regular member whose name (or base name) matches ``patterns``; the text
    is None for a member over ``max_bytes``, so the caller can say it was not read."""
    cursor = BlobCursor(blob)
    try:
        for event in tar_members(cursor):
            if not isinstance(event, Member) or not _wanted(event.name, patterns):
                continue
            if event.size > max_bytes:
                yield event.name, None
                continue
            start = cursor.pos - (-event.size % 512) - event.size  # the walk has skipped past its data
            yield event.name, blob.read(start, event.size).decode("utf-8", errors="replace")
    except ArchiveError:
        return  # the archive scanners report a malformed tar


def _wanted(name: str, patterns: tuple[str, ...]) -> bool:
    clean = name.removeprefix("./")
    return any(fnmatch.fnmatchcase(clean, p) or fnmatch.fnmatchcase(posixpath.basename(clean), p)
               for p in patterns)
