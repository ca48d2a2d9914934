"""API errors: every error is JSON `{"error": {"code", "message"}}` with a stable code."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match, Mount

from app.core.ports import SourceError
from app.errors import HfvetError
from app.services.commits import AmbiguousCommit
from app.sources.hub_errors import (
    HubAccessDenied,
    HubProtocolError,
    HubRepoNotFound,
    HubRevisionNotFound,
    HubUnreachable,
)

log = logging.getLogger(__name__)


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, **extra: object) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.extra = status, code, message, extra


def error_body(code: str, message: str, **extra: object) -> dict[str, object]:
    return {"error": {"code": code, "message": message, **extra}}


def install(app: FastAPI) -> None:
    """Map every failure to JSON in one place."""

    @app.exception_handler(ApiError)
    async def _api(_: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(error_body(exc.code, exc.message, **exc.extra), status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        message = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        return JSONResponse(error_body("invalid-request", message), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not-found", 405: "method-not-allowed"}.get(exc.status_code, "http-error")
        headers = dict(exc.headers or {})
        if exc.status_code == 405:  # RFC 9110: a 405 says which methods the path has
            headers["Allow"] = allowed_methods(request, headers.get("Allow", ""))
        return JSONResponse(error_body(code, str(exc.detail)), status_code=exc.status_code, headers=headers)

    @app.exception_handler(SourceError)
    async def _hub(_: Request, exc: SourceError) -> JSONResponse:
        code, status = next(((c, s) for kind, (c, s) in _HUB_CODES.items() if isinstance(exc, kind)),
                            ("hub-error", 502))
        return JSONResponse(error_body(code, str(exc)), status_code=status)

    @app.exception_handler(AmbiguousCommit)
    async def _ambiguous(_: Request, exc: AmbiguousCommit) -> JSONResponse:
        return JSONResponse(error_body("ambiguous-revision", str(exc), candidates=exc.candidates), status_code=422)

    @app.exception_handler(HfvetError)
    async def _hfvet(_: Request, exc: HfvetError) -> JSONResponse:
        return JSONResponse(error_body("unavailable", str(exc)), status_code=503)

    @app.exception_handler(SQLAlchemyError)
    async def _store(request: Request, exc: SQLAlchemyError) -> JSONResponse:
        # A store that is restarting, unreachable or refusing: the request's transaction rolled back.
        # The driver's own words may name hosts and users: logged for the operator, not sent.
        log.warning("%s %s: the store failed: %s", request.method, request.url.path, type(exc).__name__)
        return JSONResponse(error_body("store-unavailable", "the verdict store did not answer "
                                       f"({type(exc).__name__}); nothing was approved by this request: try again"),
                            status_code=503, headers={"Retry-After": "1"})


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(request: Request, named: str) -> str:
    """The methods some route answers at the request's path, with those Starlette ``named``.

    Starlette's own `Allow` names only the first route matching the path, and a path may have a
    GET route and a POST route (the dashboard's forms). A mount (the static files) matches any
    method and says itself what it allows.
    """
    routes = [r for r in request.app.router.routes if not isinstance(r, Mount)]
    allowed = {m.strip() for m in named.split(",") if m.strip()}
    allowed |= {m for m in _METHODS if any(r.matches({**request.scope, "method": m})[0] is Match.FULL for r in routes)}
    return ", ".join(m for m in _METHODS if m in allowed)


# Hub failures as (stable code, HTTP status).
_HUB_CODES: dict[type[SourceError], tuple[str, int]] = {
    HubRepoNotFound: ("repo-not-found", 404),
    HubRevisionNotFound: ("revision-not-found", 404),
    HubAccessDenied: ("hub-access-denied", 403),
    HubUnreachable: ("hub-unreachable", 503),
    HubProtocolError: ("hub-protocol-error", 502),
}
