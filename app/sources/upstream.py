"""The Hub endpoint's upstream: one file of a repo at a pinned commit, streamed from the server's own hub.

Async (httpx2, huggingface_hub's HTTP client): a stream costs no thread while it waits on the network.
The server's ``HF_TOKEN`` goes to the hub's own origin only; a redirect elsewhere (the Hub's CDN) is
followed by hand without it, as app.sources.hub_wire does for every other hub call. Identity encoding
is asked for, so the bytes hashed are the file's bytes.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from urllib.parse import quote

import httpcore2
import httpx2
from huggingface_hub.utils import build_hf_headers  # type: ignore[attr-defined]

from app.sources.hub_errors import HubError, HubProtocolError, HubUnreachable

CHUNK = 1 << 20
MAX_REDIRECTS = 5
CONFIRMED = 65_536  # file URLs remembered as served (each ~200 bytes)
# httpcore2 asks the socket for at most 64 KiB per read (a class attribute, no option for it): each read is a
# round of h11 parsing and anyio bookkeeping, and anyio splits every larger buffered read with a copy. Reading
# up to CHUNK cuts the server's CPU per streamed GB by about 30% (docs/benchmarks.md §30). Only this module
# streams with httpx2's async client, so nothing else in the server is affected.
httpcore2.AsyncHTTP11Connection.READ_NUM_BYTES = CHUNK


class UpstreamError(HubError):
    """The upstream hub did not send the file (an error status, a refused redirect, a dead connection)."""


@dataclass(frozen=True)
class UpstreamLimits:
    connect_seconds: float = 10.0
    read_seconds: float = 60.0  # one socket read; a CDN may think a while before a large file's first byte
    connections: int = 64  # streams open at once to the upstream, all clients together


class Upstream:
    """Streams files from ``endpoint`` (the server's HF_ENDPOINT, or the Hub) with ``token``."""

    def __init__(self, endpoint: str, token: str | None, limits: UpstreamLimits = UpstreamLimits()) -> None:
        self.endpoint = endpoint.rstrip("/")
        self._origin = httpx2.URL(self.endpoint).origin
        self._headers = {**build_hf_headers(token=token or False), "Accept-Encoding": "identity"}
        timeout = httpx2.Timeout(limits.read_seconds, connect=limits.connect_seconds)
        pool = httpx2.Limits(max_connections=limits.connections, max_keepalive_connections=limits.connections)
        self._client = httpx2.AsyncClient(timeout=timeout, limits=pool, follow_redirects=False, trust_env=False)
        self._confirmed: OrderedDict[str, None] = OrderedDict()  # file URLs the upstream said it serves

    def url(self, repo: str, commit: str, path: str) -> str:
        return f"{self.endpoint}/{repo}/resolve/{commit}/{quote(path)}"

    @asynccontextmanager
    async def open(self, repo: str, commit: str, path: str) -> AsyncIterator[AsyncIterator[bytes]]:
        """The file's bytes as they arrive, in chunks of about 1 MiB; ``UpstreamError`` if it is not sent."""
        url = self.url(repo, commit, path)
        try:
            response = await self._final(url)
            try:
                yield _chunks(response, url)
            finally:
                await response.aclose()
        except httpx2.HTTPError as exc:
            raise UpstreamError(f"{url}: {type(exc).__name__}: {exc}") from exc

    async def check(self, repo: str, commit: str, path: str) -> None:
        """``UpstreamError`` unless the upstream serves the file (a HEAD: its status only; a redirect to a CDN
        is the Hub's way of saying yes). A commit's file does not change: a yes is remembered."""
        url = self.url(repo, commit, path)
        if url in self._confirmed:
            self._confirmed.move_to_end(url)
            return
        try:
            response = await self._client.head(url, headers=self._headers)
        except httpx2.HTTPError as exc:
            raise HubUnreachable(f"{url}: {type(exc).__name__}: {exc}") from exc
        if response.status_code >= 400:
            await _checked(response, url)
        self._confirmed[url] = None
        while len(self._confirmed) > CONFIRMED:
            self._confirmed.popitem(last=False)

    async def _final(self, url: str) -> httpx2.Response:
        for _ in range(MAX_REDIRECTS + 1):
            headers = self._headers if httpx2.URL(url).origin == self._origin else _without_token(self._headers)
            request = self._client.build_request("GET", url, headers=headers)
            response = await self._client.send(request, stream=True)
            if not response.has_redirect_location:
                return await _checked(response, url)
            target = response.url.join(response.headers["location"])
            await response.aclose()
            if target.scheme not in ("http", "https"):
                raise UpstreamError(f"{url}: redirected to a non-HTTP location")
            url = str(target)
        raise UpstreamError(f"{url}: more than {MAX_REDIRECTS} redirects")

    async def aclose(self) -> None:
        await self._client.aclose()


async def _checked(response: httpx2.Response, url: str) -> httpx2.Response:
    if response.status_code == 200:
        encoding = response.headers.get("content-encoding", "identity").lower()
        if encoding == "identity":
            return response
        await response.aclose()
        raise HubProtocolError(f"{url}: a {encoding}-encoded body although identity was asked for")
    await response.aclose()
    message = response.headers.get("x-error-message", "")
    error = HubUnreachable if response.status_code >= 500 else UpstreamError
    raise error(f"{url}: HTTP {response.status_code} from the upstream hub{f' ({message})' if message else ''}")


async def _chunks(response: httpx2.Response, url: str) -> AsyncIterator[bytes]:
    """Chunks of at least CHUNK bytes (the last may be shorter): the socket's reads joined, one copy of each
    byte (``aiter_raw(CHUNK)`` re-slices through a BytesIO: three)."""
    pieces: list[bytes] = []
    size = 0
    try:
        async for piece in response.aiter_raw():
            pieces.append(piece)
            size += len(piece)
            if size >= CHUNK:
                yield b"".join(pieces)
                pieces, size = [], 0
        if pieces:
            yield b"".join(pieces)
    except httpx2.HTTPError as exc:
        raise UpstreamError(f"{url}: {type(exc).__name__} while streaming: {exc}") from exc


def _without_token(headers: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() != "authorization"}
