"""The OpenAPI schema's error answers: every route's own (``errors``), and the edge's on every route.

The edge (app.api.limits, the rate limit) answers before any route runs, so no route declares those
answers: ``with_edge_answers`` adds them to every operation once the schema is built, and replaces
FastAPI's 422 body (`{"detail": [...]}`) by the one the API sends (`{"error": {...}}`, app.api.errors).
"""

from __future__ import annotations

from typing import Any

from app.api.schemas import ErrorOut

_ERROR_REF = {"$ref": "#/components/schemas/ErrorOut"}
WHAT = {
    400: "`json-too-deep`: a JSON body nested deeper than HFVET_MAX_JSON_DEPTH (any route, before auth)",
    401: "`token-required`, `bad-authorization`, `bad-token`, `token-expired`: a token that is sent must be "
         "valid; reads need one under HFVET_READ_AUTH",
    403: "`role-too-low`: the token's role is below the route's",
    404: "not found (the code says what)",
    409: "a conflict with what is stored (the code says what)",
    413: "`body-too-large`: a body over HFVET_MAX_BODY_BYTES (any route, before auth)",
    422: "`invalid-request`, `invalid-repo`, `invalid-revision`, ...: a parameter or body the API refuses",
    429: "`rate-limited`: the caller's write allowance is spent; `Retry-After` says when to try again",
    431: "`headers-too-large`, `too-many-headers`: over HFVET_MAX_HEADER_BYTES or HFVET_MAX_HEADERS (before "
         "auth; the connection is closed)",
    502: "the hub answered something hfvet will not trust (`hub-error`, `hub-protocol-error`)",
    503: "`hub-unreachable`, `store-unavailable`, `unavailable`: fails closed, nothing approved; try again",
}
_EDGE = (400, 413, 431)
_WRITES = ("post", "put", "patch", "delete")


def errors(*statuses: int, **described: str) -> dict[int | str, dict[str, Any]]:
    """A route's ``responses`` for these error statuses, each with the error body; ``described`` (e.g.
    ``s404="..."``) says more than WHAT does for this route."""
    return {status: {"model": ErrorOut, "description": described.get(f"s{status}", WHAT[status])}
            for status in statuses}


def link(operation_id: str, description: str, *, body: dict[str, str] | None = None,
         **parameters: str) -> dict[str, Any]:
    """An OpenAPI link: which values of this answer (``$response.body#/...``) feed which request
    (FastAPI's operation ids: the function's name, path and method). Clients and schemathesis'
    stateful tests follow them."""
    found: dict[str, Any] = {"operationId": operation_id, "description": description}
    if parameters:
        found["parameters"] = parameters
    if body is not None:
        found["requestBody"] = body
    return found


def with_edge_answers(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (FastAPI's), amended in place: the edge's answers on every operation, and 422 as sent."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    detail = ErrorOut.model_json_schema(ref_template="#/components/schemas/{model}")
    components.update(detail.pop("$defs", {}))
    components["ErrorOut"] = detail
    for operations in schema.get("paths", {}).values():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            for status in (*_EDGE, 429) if method in _WRITES else _EDGE:
                responses.setdefault(str(status), _answer(status))
            if "422" in responses:
                responses["422"]["content"] = {"application/json": {"schema": _ERROR_REF}}
    for unused in ("HTTPValidationError", "ValidationError"):  # FastAPI's 422 bodies, never sent
        components.pop(unused, None)
    return schema


def _answer(status: int) -> dict[str, Any]:
    return {"description": WHAT[status], "content": {"application/json": {"schema": _ERROR_REF}}}
