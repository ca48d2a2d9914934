"""GET /bom/{org}/{name}/{commit}: the CycloneDX 1.6 ML-BOM of a vetted commit (docs/provenance.md)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from fastapi.responses import Response

from app.api import validation
from app.api.deps import ReaderDep, StateDep
from app.api.errors import ApiError
from app.api.openapi import errors
from app.api.routes.repos import Name, Org
from app.core.ids import SHORT_COMMIT_PATTERN
from app.core.provenance.bom import MEDIA_TYPE
from app.services.boms import BomNotFound, commit_bom
from app.services.commits import NotACommit

router = APIRouter(tags=["bom"])
Commit = Annotated[str, Path(description="The vetted commit: its 40-hex sha, or the first 7 or more hex digits "
                                         "(`ambiguous-revision` when several vetted commits start with them).",
                             json_schema_extra=validation.documented(SHORT_COMMIT_PATTERN))]
_DOCUMENT = {"description": "The ML-BOM: the model, its files with hashes, the repos it references, the policy "
                            "(`definitions`) and hfvet's claims and verdict (`declarations`). Unsigned.",
             "content": {MEDIA_TYPE: {"schema": {"type": "object"}}}}


@router.get("/bom/{org}/{name}/{commit}", response_class=Response,
            responses={200: _DOCUMENT, **errors(401, 404, 422, s404="`commit-not-vetted`: no stored report of "
                                                               "the repo at that commit",
                                                  s422="`invalid-repo`, `invalid-revision` (not a commit sha); "
                                                       "`ambiguous-revision` (with `candidates`)")})
def get_bom(app: StateDep, _who: ReaderDep, org: Org, name: Name, commit: Commit) -> Response:
    """The CycloneDX 1.6 ML-BOM of the newest stored report of the repo at the commit: the same stored report
    always gives the same bytes (its decided_at is the timestamp; the serial number derives from it)."""
    repo = validation.repo_id(f"{org}/{name}")
    try:
        bom = commit_bom(app.store, app.policy, repo, commit)
    except NotACommit as exc:
        raise ApiError(422, "invalid-revision", str(exc)) from None
    except BomNotFound as exc:
        raise ApiError(404, "commit-not-vetted", str(exc)) from None
    return Response(bom.document, media_type=MEDIA_TYPE,
                    headers={"Content-Disposition": f'inline; filename="{bom.filename}"'})
