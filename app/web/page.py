"""What every page handler gets: the server's state, the session, the visitor, and how to answer.

Handlers raise PageError for anything a visitor should read as a page (404, 403, a refused form);
PageRoute turns it, and any other failure, into the error page, never a stack trace.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import HTMLResponse, RedirectResponse, Response

from app.core.ports import SourceError
from app.core.principals import ROLES, Principal
from app.errors import HfvetError
from app.services.tokens import holder
from app.sources.hub_errors import HubAccessDenied, HubRepoNotFound, HubRevisionNotFound
from app.web import formatting
from app.web.session import Sessions, WebSession

if TYPE_CHECKING:  # the state app.server builds; only its type is needed here
    from app.state import AppState

log = logging.getLogger("hfvet.web")
TEMPLATES = Environment(loader=FileSystemLoader(Path(__file__).parent / "templates"),
                        autoescape=select_autoescape(default=True, default_for_string=True),
                        trim_blocks=True, lstrip_blocks=True)
TEMPLATES.filters.update(formatting.FILTERS)


# Only this server's own files: no inline script, no framing, forms post back here only.
CSP = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'"


class PageError(Exception):
    """An answer shown as the error page: ``status``, a title and what to do about it."""

    def __init__(self, status: int, title: str, message: str, *, login: bool = False) -> None:
        super().__init__(message)
        self.status, self.title, self.message, self.login = status, title, message, login


class LoginNeeded(Exception):
    """A read page under HFVET_READ_AUTH, visited without a session: off to the login form."""


@dataclass
class Page:
    request: Request
    app: AppState
    session: WebSession
    who: Principal | None

    def may(self, role: str) -> bool:
        return self.who is not None and self.who.may(role)

    def require(self, role: str) -> Principal:
        if self.who is None:
            raise PageError(401, "Log in first", f"This needs an API token with the {role} role (or higher).",
                            login=True)
        if not self.who.may(role):
            raise PageError(403, "Not allowed", f"You are logged in as {self.who.name} ({self.who.role}); "
                                                f"this needs the {role} role or higher.")
        return self.who

    def check_csrf(self, sent: str) -> None:
        """Refuse a form that does not carry this session's CSRF token, before it changes anything."""
        if not self.session.csrf_ok(sent):
            raise PageError(403, "Form refused", "The form did not carry this session's CSRF token (it was "
                                                 "forged, or the session expired). Reload the page and try again.")

    def render(self, template: str, status: int = 200, **context: Any) -> Response:
        html = TEMPLATES.get_template(template).render(page=self, flash=self.session.take_flash(),
                                                       roles=ROLES, **context)
        return self.finish(HTMLResponse(html, status_code=status))

    def redirect(self, url: str, flash: str | None = None) -> Response:
        if flash:
            self.session.say(flash)
        return self.finish(RedirectResponse(url, status_code=303))

    def finish(self, response: Response) -> Response:
        sessions(self.request).save(self.request, response, self.session)
        response.headers.setdefault("Cache-Control", "no-store")  # pages show who is logged in
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Content-Security-Policy", CSP)
        return response


def sessions(request: Request) -> Sessions:
    return request.app.state.hfvet_sessions  # type: ignore[no-any-return]


def page(request: Request) -> Page:
    """The page context (a dependency): read pages need a session under HFVET_READ_AUTH."""
    state: AppState = request.app.state.hfvet
    session = sessions(request).load(request)
    who = holder(state.store, session.session_id) if session.session_id else None
    if session.session_id and who is None:
        session.log_out()  # logged out elsewhere, or the token was revoked or expired since login
        session.say("Your session or its token is no longer valid: log in again.")
    current = Page(request, state, session, who)
    if state.settings.read_auth and who is None and request.url.path not in ("/ui/login",):
        if request.method == "GET":
            raise LoginNeeded
        current.require("reader")
    return current


def error_page(request: Request, status: int, title: str, message: str, *, login: bool = False) -> Response:
    """The error page, for a visitor whose session may not even load (it renders without one)."""
    try:
        state = request.app.state.hfvet
        session = sessions(request).load(request)
        current = Page(request, state, session, None)
        return current.render("error.html", status=status, status_code=status, title=title, message=message,
                              login=login)
    except Exception:
        log.exception("the error page itself failed")
        return HTMLResponse(f"<h1>{status}</h1><p>hfvet could not show this page.</p>", status_code=status)


class PageRoute(APIRoute):
    """Routes whose failures answer with the error page: PageError as it says, the hub's as 502, others 500."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            try:
                return await handler(request)
            except LoginNeeded:
                return RedirectResponse(f"/ui/login?next={quote(request.url.path)}", status_code=303)
            except PageError as exc:
                return error_page(request, exc.status, exc.title, exc.message, login=exc.login)
            except RequestValidationError:
                return error_page(request, 422, "Bad request", "A parameter of this page is malformed.")
            except StarletteHTTPException as exc:
                return error_page(request, exc.status_code, "Not available", str(exc.detail))
            except (HubRepoNotFound, HubRevisionNotFound) as exc:
                return error_page(request, 404, "Not on the hub", str(exc))
            except HubAccessDenied as exc:
                return error_page(request, 403, "The hub refused", str(exc))
            except (SourceError, HfvetError) as exc:
                return error_page(request, 502, "The hub or the store did not answer", str(exc))
            except Exception:
                log.exception("dashboard page %s failed", request.url.path)
                return error_page(request, 500, "Something went wrong",
                                  "hfvet could not build this page; the error is in the server's log.")

        return handle
