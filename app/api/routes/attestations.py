"""GET /attestations/{org}/{name}/{commit} (a signed verdict or review, DSSE) and GET /attestations/key
(the public key that verifies them). Reads, with the same auth as the other GET routes."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from app.api import validation
from app.api.deps import ReaderDep, StateDep
from app.api.errors import ApiError
from app.api.openapi import errors
from app.api.routes.repos import Name, Org
from app.services.attestations import CommitNotVetted, NoAttestation, newest_envelope, public_key_pem
from app.services.commits import AmbiguousCommit, NotACommit

router = APIRouter(tags=["attestations"])
PEM = "application/x-pem-file"
_ENVELOPE = {"application/json": {"schema": {"type": "object", "description": "A DSSE envelope: payload "
             "(base64 in-toto Statement v1), payloadType application/vnd.in-toto+json, signatures [{keyid, sig}]"}}}


@router.get("/attestations/key", response_class=Response,
            responses={200: {"description": "The ed25519 public key (PEM) that verifies this server's "
                                             "attestations; its key id is the sha256 of its DER form",
                             "content": {PEM: {"schema": {"type": "string"}}}},
                       **errors(401, 404, s404="`no-signing-key`: this server signs nothing "
                                               "(HFVET_ATTESTATION_KEY is not set)")})
def get_key(app: StateDep, _who: ReaderDep) -> Response:
    """The public key of the server's attestation key, to verify offline (`hfvet verify --key`)."""
    try:
        pem = public_key_pem(app.store)
    except NoAttestation as exc:
        raise ApiError(404, "no-signing-key", str(exc)) from None
    return Response(pem, media_type=PEM)


@router.get("/attestations/{org}/{name}/{commit}", response_class=Response,
            responses={200: {"description": "The newest attestation of that kind for the commit, byte for byte "
                                             "as signed when the verdict (or review) was stored",
                             "content": _ENVELOPE},
                       **errors(401, 404, 422, s404="`commit-not-vetted`: no stored report of the repo at "
                                                    "that commit; `no-attestation`: vetted or reviewed but not "
                                                    "signed (no key configured then), or never reviewed")})
async def get_attestation(
    app: StateDep, _who: ReaderDep, org: Org, name: Name,
    commit: Annotated[str, Path(description="The commit: its 40-hex sha, or the first 7+ hex of a vetted one.")],
    kind: Annotated[Literal["verdict", "review"], Query(description="`verdict` (a SLSA VSA) or `review` (the "
                                                                    "newest human review's).")] = "verdict",
) -> Response:
    """The signed attestation of a vetted commit (docs/provenance.md "Verdict attestations")."""
    repo = validation.repo_id(f"{org}/{name}")
    try:
        found = await run_in_threadpool(newest_envelope, app.store, repo, commit, kind)
    except NotACommit as exc:
        raise ApiError(422, "invalid-revision", str(exc)) from None
    except AmbiguousCommit as exc:
        raise ApiError(422, "ambiguous-revision", str(exc)) from None
    except CommitNotVetted as exc:
        raise ApiError(404, "commit-not-vetted", str(exc)) from None
    except NoAttestation as exc:
        raise ApiError(404, "no-attestation", str(exc)) from None
    headers = {"X-Hfvet-Key-Id": found.key_id, "X-Hfvet-Commit": found.sha}
    return Response(found.envelope, media_type="application/json", headers=headers)
