"""FastAPI dependencies, named once: the server's state (app.state.AppState), who is calling, and which role
an endpoint needs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool

from app.api.errors import ApiError
from app.core.principals import Principal, TokenExpired, bearer_secret
from app.state import AppState


async def state(request: Request) -> AppState:  # async: no thread hop for a lookup
    return request.app.state.hfvet  # type: ignore[no-any-return]


StateDep = Annotated[AppState, Depends(state)]


async def principal(request: Request, app: StateDep) -> Principal | None:
    """The caller, from `Authorization: Bearer <token>`; a token that is sent must be valid.

    Async so that a request without a token costs no thread hop; the store is asked in a thread.
    """
    header = request.headers.get("authorization")
    if header is None:
        return None
    secret = bearer_secret(header)
    if secret is None:
        raise ApiError(401, "bad-authorization", "send `Authorization: Bearer <token>`")
    try:
        who = await run_in_threadpool(app.verify, secret)
    except TokenExpired as exc:
        raise ApiError(401, "token-expired", f"{exc}: ask an admin for a new one "
                       "(`hfvet token create --role R --name N [--expires-in 90d]`)") from None
    if who is None:
        raise ApiError(401, "bad-token", "the token is unknown or revoked")
    return who


PrincipalDep = Annotated[Principal | None, Depends(principal)]


def require(role: str) -> Callable[[Principal | None], Principal]:
    """A dependency that admits tokens of ``role`` or a higher one."""

    def check(who: PrincipalDep) -> Principal:
        if who is None:
            raise ApiError(401, "token-required", f"this needs a token with the {role} role (or higher)")
        if not who.may(role):
            raise ApiError(403, "role-too-low", f"token {who.name!r} is {who.role}; this needs {role}")
        return who

    return check


async def readable(app: StateDep, who: PrincipalDep) -> Principal | None:
    """Reads are open unless HFVET_READ_AUTH is set; then they need a reader token."""
    if app.settings.read_auth:
        return require("reader")(who)
    return who


ReaderDep = Annotated[Principal | None, Depends(readable)]
VetterDep = Annotated[Principal, Depends(require("vetter"))]
ReviewerDep = Annotated[Principal, Depends(require("reviewer"))]
