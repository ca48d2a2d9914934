"""JSON request bodies, read only once the caller is known.

FastAPI reads and decodes a declared body before it runs any dependency, so an anonymous caller's
malformed body got 400 or 422 where every other unauthenticated write gets 401 (and a reply that
describes the body to someone who may not send one). A route takes its body from ``json_body``
instead: a dependency that depends on the route's auth, so the body is read after it passed.
``openapi_body`` puts the body's schema back into the route's OpenAPI operation.
"""

from __future__ import annotations

import email.message
from typing import Any, TypeVar, get_args

from fastapi import Depends, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

Model = TypeVar("Model", bound=BaseModel)


def json_body(model: type[Model], *, after: Any) -> Any:
    """A dependency giving the body as ``model``, read after ``after`` passed: the route's auth, as
    the ``Annotated[..., Depends(...)]`` the route declares (FastAPI runs it once per request).

    Errors are FastAPI's own (a 422 ``invalid-request`` naming `body...`): JSON only, as FastAPI
    reads a declared body (`application/json` or `+json`).
    """
    auth = get_args(after)[1]

    async def read(request: Request, _caller: Any = auth) -> Model:
        if not _is_json(request.headers.get("content-type")):
            raise RequestValidationError([{"type": "model_attributes_type", "loc": ("body",),
                                           "msg": "send the body as application/json", "input": None}])
        try:
            return model.model_validate_json(await request.body())
        except ValidationError as exc:
            raise RequestValidationError([{**e, "loc": ("body", *e["loc"])} for e in exc.errors()]) from None

    return Depends(read)


def openapi_body(model: type[BaseModel]) -> dict[str, Any]:
    """The route's `openapi_extra`: ``model`` as its required JSON body (FastAPI sees no body to document)."""
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def _is_json(content_type: str | None) -> bool:
    if not content_type:
        return False
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (subtype == "json" or subtype.endswith("+json"))
