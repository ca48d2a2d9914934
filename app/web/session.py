"""The dashboard's session: a signed cookie holding a CSRF token, the login's session id and a flash.

Signed with itsdangerous (HMAC, timestamped), not encrypted: the session id alone logs no one in.
It names a row of the store (app.db.web_sessions) that logout and token revocation delete; every
request re-checks that the session and its token are live (app.services.tokens.holder).
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field

from itsdangerous import BadSignature, URLSafeTimedSerializer
from starlette.requests import Request
from starlette.responses import Response

from app.services.tokens import SESSION_MAX_AGE

COOKIE = "hfvet_session"
MAX_AGE = SESSION_MAX_AGE
PATH = "/ui"


@dataclass
class WebSession:
    csrf: str
    session_id: str | None = None  # a login's, in the store
    flash: str | None = None
    changed: bool = field(default=False, compare=False)  # to be sent back to the browser

    def csrf_ok(self, sent: str) -> bool:
        return bool(sent) and hmac.compare_digest(sent.encode(), self.csrf.encode())

    def log_in(self, session_id: str) -> None:
        """A new CSRF token with the new identity: a token planted before login is worthless after it."""
        self.session_id, self.csrf, self.changed = session_id, _new_csrf(), True

    def log_out(self) -> None:
        self.session_id, self.csrf, self.changed = None, _new_csrf(), True

    def say(self, message: str) -> None:
        self.flash, self.changed = message, True

    def take_flash(self) -> str | None:
        message, self.flash = self.flash, None
        if message is not None:
            self.changed = True
        return message


class Sessions:
    """Reads and writes WebSession cookies signed with one key."""

    def __init__(self, key: str) -> None:
        self._signer = URLSafeTimedSerializer(key, salt="hfvet-dashboard-session")

    def load(self, request: Request) -> WebSession:
        """The request's session; a new one (to be set) when it has none, or a forged or expired one."""
        raw = request.cookies.get(COOKIE)
        if raw:
            try:
                data = self._signer.loads(raw, max_age=MAX_AGE)
            except BadSignature:  # also SignatureExpired
                data = None
            if isinstance(data, dict) and isinstance(data.get("csrf"), str):
                # A cookie from before server-side sessions holds "token", not "sid": no login.
                session_id, flash = data.get("sid"), data.get("flash")
                return WebSession(data["csrf"], session_id if isinstance(session_id, str) else None,
                                  flash if isinstance(flash, str) else None)
        return WebSession(_new_csrf(), changed=True)

    def save(self, request: Request, response: Response, session: WebSession) -> None:
        if not session.changed:
            return
        value = self._signer.dumps({"csrf": session.csrf, "sid": session.session_id, "flash": session.flash})
        response.set_cookie(COOKIE, value, max_age=MAX_AGE, path=PATH, httponly=True, samesite="lax",
                            secure=request.url.scheme == "https")


def _new_csrf() -> str:
    return secrets.token_urlsafe(32)
