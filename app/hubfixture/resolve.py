"""``HEAD``/``GET /{org}/{name}/resolve/{rev}/{path}``: file metadata headers and exact byte ranges.

LFS files are served directly with ``200``/``206`` plus the ``X-Linked-*`` headers (no redirect:
a same-origin redirect would make the client lose ``X-Repo-Commit``), and never with xet headers.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from starlette.responses import Response, StreamingResponse

from app.core.byte_ranges import RangeNotSatisfiable, parse_range
from app.hubfixture import errors
from app.hubfixture.context import Call, Level, open_repo, resolve
from app.hubfixture.snapshot import FileEntry


def resolve_file(call: Call) -> Response:
    seg = call.segments
    if len(seg) < 5:
        raise errors.not_found()
    if call.method not in ("GET", "HEAD"):
        return Response(status_code=405, headers={"Allow": "GET, HEAD"})
    repo = open_repo(call, seg[0], seg[1], Level.CONTENT)
    snap = resolve(repo, seg[3])
    path = "/".join(seg[4:])
    entry = snap.by_path.get(path)
    if entry is None:
        raise errors.entry_not_found(path, snap.commit)
    headers = _file_headers(entry, snap.commit)
    try:
        wanted = parse_range(call.headers.get("range"), entry.size)
    except RangeNotSatisfiable:
        headers["Content-Range"] = f"bytes */{entry.size}"
        return Response(status_code=416, headers=headers)
    status, start, length = 200, 0, entry.size
    if wanted is not None:
        status, start, length = 206, wanted.start, wanted.length
        headers["Content-Range"] = wanted.content_range(entry.size)
    headers["Content-Length"] = str(length)
    if call.method == "HEAD":
        return Response(status_code=status, headers=headers)
    return StreamingResponse(file_chunks(entry.disk, start, length), status_code=status, headers=headers)


def _file_headers(entry: FileEntry, commit: str) -> dict[str, str]:
    headers = {
        "X-Repo-Commit": commit,
        "Accept-Ranges": "bytes",
        "Content-Type": "application/octet-stream",
        "ETag": f'"{entry.sha256 or entry.blob_id}"',
    }
    if entry.sha256:
        headers["X-Linked-Etag"] = f'"{entry.sha256}"'
        headers["X-Linked-Size"] = str(entry.size)
    return headers


_CHUNK = 1 << 20


def file_chunks(path: Path, start: int, length: int) -> Iterator[bytes]:
    """Stream ``length`` bytes from ``start`` without loading the file."""
    with path.open("rb") as fh:
        fh.seek(start)
        remaining = length
        while remaining > 0:
            chunk = fh.read(min(_CHUNK, remaining))
            if not chunk:
                return
            remaining -= len(chunk)
            yield chunk
