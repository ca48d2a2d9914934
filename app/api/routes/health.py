"""GET /healthz (the store answers) and GET /metrics (Prometheus text)."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.api.deps import StateDep
from app.api.errors import ApiError
from app.api.openapi import errors
from app.services.store import ping

router = APIRouter(tags=["health"])


@router.get("/healthz", responses=errors(503, s503="`store-unavailable`: the store does not answer"))
def healthz(app: StateDep) -> dict[str, str]:
    try:
        ping(app.store)
    except Exception as exc:
        raise ApiError(503, "store-unavailable", f"the store does not answer: {type(exc).__name__}") from exc
    return {"status": "ok"}


@router.get("/metrics", response_class=Response)
def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
