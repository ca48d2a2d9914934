"""Logging in with an API token (into a signed session cookie) and out again; both forms CSRF-checked."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form
from starlette.responses import Response

from app.core.principals import TokenExpired
from app.services.tokens import end_session, login, start_session
from app.web.page import Page, PageRoute, page

router = APIRouter(route_class=PageRoute)


@router.get("/ui/login", name="login")
def login_form(current: Annotated[Page, Depends(page)], next: str = "") -> Response:
    return current.render("login.html", next=_local(next), error=None)


@router.post("/ui/login")
def login_post(current: Annotated[Page, Depends(page)], csrf: Annotated[str, Form()] = "",
               token: Annotated[str, Form()] = "", next: Annotated[str, Form()] = "") -> Response:
    current.check_csrf(csrf)
    try:
        found = login(current.app.store, token.strip()) if token.strip() else None
    except TokenExpired as exc:
        return current.render("login.html", status=401, next=_local(next),
                              error=f"That {exc}: ask an admin for a new one.")
    if found is None:
        return current.render("login.html", status=401, next=_local(next),
                              error="That token is unknown or revoked.")
    who, token_digest = found
    current.session.log_in(start_session(current.app.store, token_digest))
    return current.redirect(_local(next) or "/ui/", flash=f"Logged in as {who.name} ({who.role}).")


@router.post("/ui/logout", name="logout")
def logout(current: Annotated[Page, Depends(page)], csrf: Annotated[str, Form()] = "") -> Response:
    current.check_csrf(csrf)
    if current.session.session_id is not None:
        end_session(current.app.store, current.session.session_id)  # every copy of the cookie ends here
    current.session.log_out()
    return current.redirect("/ui/", flash="Logged out.")


def _local(target: str) -> str:
    """Only a path of this dashboard: a login link must not send anyone elsewhere."""
    return target if target.startswith("/ui/") and not target.startswith("//") and "\\" not in target else ""
