"""The dashboard: server-rendered pages under /ui/ on the API's app (docs/dashboard.md)."""

from __future__ import annotations

import secrets
from pathlib import Path

from fastapi import APIRouter, Depends, FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.responses import RedirectResponse, Response

from app.settings import Settings, reveal
from app.web.page import Page, PageError, PageRoute, page
from app.web.pages import auth, bom, diff, home, policy, pulls, repo, reviews, vet, vets
from app.web.session import Sessions

STATIC = Path(__file__).parent / "static"


def install(app: FastAPI, settings: Settings) -> None:
    """Mount the pages, their static files and the session signer on ``app``."""
    # Without a configured key each process signs with its own: sessions end when the server restarts.
    app.state.hfvet_sessions = Sessions(reveal(settings.session_secret) or secrets.token_urlsafe(32))
    app.mount("/ui/static", StaticFiles(directory=STATIC), name="ui-static")
    for module in (home, repo, bom, diff, reviews, vet, vets, pulls, policy, auth):
        app.include_router(module.router, include_in_schema=False)
    app.include_router(_fallback, include_in_schema=False)


_fallback = APIRouter(route_class=PageRoute)


@_fallback.get("/", include_in_schema=False)
def root() -> Response:
    return RedirectResponse("/ui/", status_code=307)


@_fallback.get("/ui")
def ui_root() -> Response:
    return RedirectResponse("/ui/", status_code=307)


@_fallback.api_route("/ui/{rest:path}", methods=["GET", "POST"])
def not_found(current: Page = Depends(page)) -> Response:  # noqa: B008 - FastAPI's dependency idiom
    raise PageError(404, "Page not found", "There is no such page. The approved checkpoints are on the home page.")
