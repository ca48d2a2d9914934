"""Credentials out of URLs before they are printed: a database URL or a server URL in a message.

Stdlib only: the fast `hfvet gate --server` path uses it too.
"""

from __future__ import annotations

import re
import urllib.parse

MASK = "***"
# Query parameters that carry credentials: libpq's password/sslpassword, tokens, keys, secrets.
_SECRET_PARAM = re.compile(r"pass|pwd|secret|token|auth|key|credential", re.IGNORECASE)


def mask_url(url: str) -> str:
    """``url`` with its credentials masked: ``user:***@host``, ``***@host`` (a bare userinfo may be
    a token), and ``?password=***`` (any query parameter named like a credential)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    head, qmark, query = rest.partition("?")
    userinfo, at, host = head.rpartition("@")  # the last @: a password may hold an unescaped one
    if at:
        user, colon, _ = userinfo.partition(":")
        head = f"{user}:{MASK}@{host}" if colon else f"{MASK}@{host}"
    if qmark:
        query = _mask_query(query)
    return f"{scheme}{sep}{head}{qmark}{query}"


def scrub(text: str, url: str) -> str:
    """``text`` (say, a driver's error) with ``url`` and every credential in it masked."""
    text = text.replace(url, mask_url(url))
    for secret in sorted(_credentials(url), key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def _mask_query(query: str) -> str:
    fragment = ""
    if "#" in query:
        query, _, fragment = query.partition("#")
        fragment = "#" + fragment
    pairs = [p.partition("=") for p in query.split("&")]
    return "&".join(f"{k}{eq}{MASK if eq and _SECRET_PARAM.search(k) else v}" for k, eq, v in pairs) + fragment


def _credentials(url: str) -> set[str]:
    """The raw and decoded credential values in ``url`` (empty ones aside)."""
    _, sep, rest = url.partition("://")
    if not sep:
        return set()
    head, _, query = rest.partition("?")
    found: set[str] = set()
    userinfo, at, _ = head.rpartition("@")
    if at:
        user, colon, password = userinfo.partition(":")
        found |= {password} if colon else {user}
    for key, eq, value in (p.partition("=") for p in query.partition("#")[0].split("&")):
        if eq and _SECRET_PARAM.search(key):
            found.add(value)
    # Values under 3 characters are left: replacing them everywhere would garble the message.
    return {v for raw in found for v in (raw, urllib.parse.unquote(raw)) if len(v) >= 3}
