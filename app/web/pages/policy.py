"""GET /ui/policy: the active trust policy, readable: name, sha256, tiers, defaults, rules, waivers."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.responses import Response

from app.web.page import Page, PageRoute, page

router = APIRouter(route_class=PageRoute)


@router.get("/ui/policy", name="policy")
def policy_page(current: Annotated[Page, Depends(page)]) -> Response:
    policy = current.app.policy
    return current.render("policy.html", policy=policy, model=policy.model)
