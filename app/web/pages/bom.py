"""GET /ui/repos/{org}/{name}/bom/{commit}.cdx.json: the dashboard's download of a commit's ML-BOM (CycloneDX 1.6)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from starlette.responses import Response

from app.core.provenance.bom import MEDIA_TYPE
from app.services.boms import BomNotFound, commit_bom
from app.web import inputs
from app.web.page import Page, PageError, PageRoute, page

router = APIRouter(route_class=PageRoute)


@router.get("/ui/repos/{org}/{name}/bom/{commit}.cdx.json", name="bom-download")
def bom_download(current: Annotated[Page, Depends(page)], org: str, name: str, commit: str) -> Response:
    repo = inputs.repo_id(f"{org}/{name}")
    sha = inputs.commit(current.app.store, repo, commit)
    try:
        bom = commit_bom(current.app.store, current.app.policy, repo, sha)
    except BomNotFound as exc:
        raise PageError(404, "Revision not vetted", str(exc)) from None
    return current.finish(Response(bom.document, media_type=MEDIA_TYPE,
                                   headers={"Content-Disposition": f'attachment; filename="{bom.filename}"'}))
