"""Security headers on every answer, the gate's fast path included (app.api.routes.gate_fast).

The API serves JSON and the dashboard serves pages whose scripts are static files, so the policy
can forbid inline script outright; frames are denied both ways (old and new browsers).
"""

from __future__ import annotations

from starlette.types import Message, Send

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
# Swagger UI (/docs, /redoc) loads its bundle from a CDN and starts it with an inline script; those
# two pages are documentation, not the service, and get a policy that allows exactly that.
DOCS_PATHS = ("/docs", "/redoc")
DOCS_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
    "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net https://fonts.googleapis.com; "
    "img-src 'self' data: https://fastapi.tiangolo.com; font-src https://fonts.gstatic.com; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
_COMMON = (
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
)
HEADERS = (*_COMMON, (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()))
_DOCS_HEADERS = (*_COMMON, (b"content-security-policy", DOCS_POLICY.encode()))


def with_security_headers(send: Send, path: str) -> Send:
    """``send``, adding the headers to the response start (a route's own value of one is replaced)."""
    extra = _DOCS_HEADERS if path.startswith(DOCS_PATHS) else HEADERS
    names = {name for name, _ in extra}

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
            message = {**message, "headers": [*kept, *extra]}
        await send(message)

    return sending
