"""``HEAD``/``GET /{org}/{name}/resolve/{rev}/{path}``: an approved file's headers from the manifest, and its
bytes from the blob cache or the upstream hub, verified in flight (app.services.verified_stream).

HEAD never reaches the upstream. A branch's HEAD is redirected (same origin, so the client follows it) to
the commit it is served at, so the GET that follows is pinned. GET bodies carry no Content-Length: a body cut
short by a failed verification then ends cleanly, and huggingface_hub raises instead of resuming onto it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from functools import partial
from typing import BinaryIO
from urllib.parse import quote

from anyio import to_thread
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response, StreamingResponse

from app.core.byte_ranges import ByteRange, RangeNotSatisfiable, parse_range
from app.core.manifest import ManifestFile
from app.endpoint import metrics, payloads
from app.endpoint.call import Call, entry_not_found, header_text, not_found
from app.endpoint.listing import served
from app.services.blob_cache import BlobKey
from app.services.fanout import Flight, follow
from app.services.hub_endpoint import RETRY_AFTER, Refusal, Served
from app.services.pulls import record_pull
from app.services.verified_stream import Checked, verifiable, verified
from app.sources.hub_errors import HubError, HubUnreachable
from app.sources.upstream import Upstream

log = logging.getLogger("hfvet.endpoint")
CHUNK = 1 << 20


async def resolve_file(call: Call) -> Response:
    seg = call.segments
    if len(seg) < 5 or not seg[0] or not seg[1]:
        raise not_found()
    if call.method not in ("GET", "HEAD"):
        return Response(status_code=405, headers={"Allow": "GET, HEAD"})
    repo, revision, path = f"{seg[0]}/{seg[1]}", seg[3], "/".join(seg[4:])
    at = await served(call, repo, revision)
    entry = at.files.get(path)
    if entry is None:
        raise entry_not_found(repo, at.commit, path)
    if not verifiable(entry):
        raise Refusal(403, "GatedRepo", "unverifiable", f"hfvet: the approved manifest of {repo}@{at.commit} "
                      f"names no hash for {path}, so its bytes cannot be checked: vet it again")
    headers = file_headers(entry, at)
    if call.method == "HEAD" and revision != at.commit:
        location = call.url_of(f"{quote(seg[0])}/{quote(seg[1])}/resolve/{at.commit}/{quote(path)}")
        return Response(status_code=307, headers={**headers, "Location": location})
    try:
        wanted = parse_range(call.headers.get("range"), entry.size)
    except RangeNotSatisfiable:
        return Response(status_code=416, headers={**headers, "Content-Range": f"bytes */{entry.size}"})
    status = 200 if wanted is None else 206
    if wanted is not None:
        headers["Content-Range"] = wanted.content_range(entry.size)
    if call.method == "HEAD":
        await upstream_serves(call, at, entry)
        length = entry.size if wanted is None else wanted.length
        return Response(status_code=status, headers={**headers, "Content-Length": str(length)})
    return StreamingResponse(body(call, at, entry, wanted), status_code=status, headers=headers)


async def upstream_serves(call: Call, at: Served, entry: ManifestFile) -> None:
    """Before a client is told a file exists, the upstream is asked whether it still serves it (unless the
    cache holds it): an approved commit gone upstream (a squashed history, a deleted repo) is then a refusal
    naming the cause, not a download that ends at 0 bytes. huggingface_hub sends this HEAD before each GET."""
    cache = call.state.blob_cache
    if cache is not None and blob_key(entry) in cache:
        return
    try:
        await _upstream(call).check(at.repo, at.commit, entry.path)
    except HubUnreachable as exc:
        raise Refusal(503, None, "hub-unavailable", f"hfvet cannot reach its upstream hub for {entry.path} of "
                      f"{at.repo}@{at.commit}; retry later", retry_after=RETRY_AFTER, detail=str(exc)) from exc
    except HubError as exc:
        raise Refusal(403, "GatedRepo", "upstream-missing", f"hfvet approved {at.repo}@{at.commit}, but its "
                      f"upstream hub does not serve {entry.path} at that commit now (a history rewritten, or the "
                      f"repo gone): vet its current head, `hfvet vet {at.repo}`, or pull another approved "
                      f"commit", detail=str(exc)) from exc


def file_headers(entry: ManifestFile, at: Served) -> dict[str, str]:
    headers = {"X-Repo-Commit": at.commit, "ETag": f'"{payloads.etag(entry)}"', "Accept-Ranges": "bytes",
               "Content-Type": "application/octet-stream"}
    if entry.sha256:
        headers |= {"X-Linked-Etag": f'"{entry.sha256}"', "X-Linked-Size": str(entry.size)}
    if at.note:
        headers["X-Hfvet-Note"] = header_text(at.note)
    return headers


def blob_key(entry: ManifestFile) -> BlobKey:
    return ("sha256", entry.sha256) if entry.sha256 else ("git-sha1", entry.blob_id or "")


async def body(call: Call, at: Served, entry: ManifestFile, wanted: ByteRange | None) -> AsyncIterator[bytes]:
    """The bytes of ``wanted``: from the cache when it holds the blob, else from the upstream, verified
    (with the cache on, through the blob's one flight: app.services.fanout)."""
    cache, key = call.state.blob_cache, blob_key(entry)
    handle = None if cache is None else cache.open(key)
    source = "upstream" if handle is None else "cache"
    if cache is not None:
        (metrics.CACHE_MISSES if handle is None else metrics.CACHE_HITS).inc()
    counted, checked = metrics.BYTES_SERVED.labels(source=source), Checked()
    async with aclosing(_pieces(call, at, entry, wanted, checked, handle)) as pieces:  # a client that leaves
        async for piece in pieces:  # closes them now: the blob's handle, the flight's descriptor, the upstream
            counted.inc(len(piece))
            yield piece
    if checked.ok and (wanted is None or wanted.end == entry.size - 1):  # the file's last byte went out
        await _record(call, at, entry, source)


def _pieces(call: Call, at: Served, entry: ManifestFile, wanted: ByteRange | None, checked: Checked,
            handle: BinaryIO | None) -> AsyncGenerator[bytes, None]:
    if handle is not None:
        return from_cache(handle, entry, wanted, checked)
    cache, upstream = call.state.blob_cache, _upstream(call)
    joined = None if cache is None else call.state.flights.join(
        blob_key(entry), entry, lambda: cache.writer(blob_key(entry), entry.size),
        lambda: upstream.open(at.repo, at.commit, entry.path), partial(_landed, at))
    if joined is None:  # no cache, or a blob too big to keep: a stream of this request's own
        return from_upstream(upstream, at, entry, wanted, checked)
    return follow(*joined, wanted, checked)


def _upstream(call: Call) -> Upstream:
    if call.state.upstream is None:
        raise RuntimeError("the Hub endpoint has no upstream")  # app.server always builds one
    return call.state.upstream


def _landed(at: Served, flight: Flight) -> None:
    """A flight ended: its failure counted and logged once, however many clients followed it."""
    if not flight.ok:
        _failed(at, flight.entry.path, flight.problem, upstream=flight.failed_upstream)


def _failed(at: Served, path: str, problem: str, *, upstream: bool) -> None:
    if upstream:
        metrics.UPSTREAM_FAILURES.inc()
        log.warning("hub endpoint: %s@%s %s: the upstream failed: %s", at.repo, at.commit, path, problem)
        return
    metrics.VERIFICATION_FAILURES.inc()
    log.error("hub endpoint: %s@%s %s: NOT SERVED, the upstream's bytes do not match the approved manifest: %s",
              at.repo, at.commit, path, problem)


async def from_upstream(upstream: Upstream, at: Served, entry: ManifestFile, wanted: ByteRange | None,
                        checked: Checked) -> AsyncGenerator[bytes, None]:
    """The upstream's bytes, verified; any failure ends the body short and cleanly (never an exception that
    cuts the connection: the client would resume, splicing later bytes onto unverified ones)."""
    try:
        async with upstream.open(at.repo, at.commit, entry.path) as chunks:
            async for piece in verified(chunks, entry, wanted, checked):
                yield piece
    except HubError as exc:
        checked.problem = str(exc)
        _failed(at, entry.path, checked.problem, upstream=True)
        return
    if checked.ok is False:
        _failed(at, entry.path, checked.problem, upstream=False)


async def from_cache(handle: BinaryIO, entry: ManifestFile, wanted: ByteRange | None,
                     checked: Checked) -> AsyncGenerator[bytes, None]:
    """A verified blob's bytes (they were checked before the cache kept them; its name is their hash)."""
    start, left = (0, entry.size) if wanted is None else (wanted.start, wanted.length)
    try:
        await to_thread.run_sync(handle.seek, start)
        while left > 0:
            chunk = await to_thread.run_sync(handle.read, min(CHUNK, left))
            if not chunk:
                log.error("hub endpoint: a cached blob ended %d bytes early", left)
                return
            left -= len(chunk)
            yield chunk
        checked.ok = True
    except OSError as exc:  # a shared volume's blob evicted by another node mid-read: end short, cleanly
        log.warning("hub endpoint: reading a cached blob failed: %s", exc)
    finally:
        handle.close()


async def _record(call: Call, at: Served, entry: ManifestFile, source: str) -> None:
    """The pull, in the audit log; the bytes are out already, so a store failure is logged, not raised."""
    try:
        await run_in_threadpool(record_pull, call.state.store, call.actor, at.repo, at.commit, entry.path,
                                entry.size, source)
    except Exception:
        log.exception("hub endpoint: recording the pull of %s@%s %s failed", at.repo, at.commit, entry.path)
