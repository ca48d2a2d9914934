"""uvicorn's httptools protocol with bounds on a request's headers, enforced while they arrive.

httptools has no header limit of its own and uvicorn offers one only for h11
(`h11_max_incomplete_event_size`): a client could stream one endless header value and the parser
would buffer all of it, with no credentials. Here the bytes of a request's head are counted as they
come in, and its headers as the parser completes them; past either limit the client gets 431 and the
connection is closed, before the app is called.
"""

from __future__ import annotations

import logging
from typing import Any

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

log = logging.getLogger(__name__)
LINGER_SECONDS = 2.0


class HeadersTooLarge(Exception):
    """Raised inside a parser callback: httptools stops parsing and uvicorn answers the error."""


class HeaderLimitedProtocol(HttpToolsProtocol):
    max_header_bytes = 64 * 1024
    max_headers = 100

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._reading_head = True  # until this request's headers are complete
        self._head_bytes = 0
        self._header_count = 0
        self._refusal = ""

    def data_received(self, data: bytes) -> None:
        if self._refusal:
            return  # the rest of a refused head is read and dropped until the connection closes
        if self._reading_head:
            self._head_bytes += len(data)
        super().data_received(data)
        # Checked after parsing: one read may hold a whole small request and its body.
        if self._reading_head and self._head_bytes > self.max_header_bytes and not self._refusal:
            self._refuse(f"request headers over {self.max_header_bytes} bytes")

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        if self._header_count > self.max_headers:
            self._refusal = f"more than {self.max_headers} request headers"
            raise HeadersTooLarge(self._refusal)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._reading_head = False
        # A head that arrived in one read was never counted on its own: measure what was parsed.
        size = len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)
        if size > self.max_header_bytes:
            self._refusal = f"request headers over {self.max_header_bytes} bytes"
            raise HeadersTooLarge(self._refusal)
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._reading_head, self._head_bytes, self._header_count = True, 0, 0

    def send_400_response(self, msg: str) -> None:
        # uvicorn answers any parser error with 400; a refusal raised above is the client's headers.
        if self._refusal:
            self._refuse(self._refusal)
        else:
            super().send_400_response(msg)

    def _refuse(self, reason: str) -> None:
        self._refusal = reason
        log.warning("%s from %s: refused with 431", reason, self.client)
        body = f'{{"error": {{"code": "headers-too-large", "message": "{reason}"}}}}'.encode()
        self.transport.write(b"".join([
            STATUS_LINE[431], b"content-type: application/json\r\n",
            b"content-length: %d\r\n" % len(body), b"connection: close\r\n\r\n", body,
        ]))
        # A close with the client's bytes unread resets the connection, and a reset loses the answer:
        # end our side, drop what still comes for a moment (as nginx's lingering close does), then close.
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_SECONDS, self.transport.close)


def header_limited(max_header_bytes: int, max_headers: int) -> type[HeaderLimitedProtocol]:
    """The protocol class for `uvicorn.run(http=...)`, with these limits."""
    return type("HeaderLimitedProtocol", (HeaderLimitedProtocol,),
                {"max_header_bytes": max_header_bytes, "max_headers": max_headers})
