"""POST /webhooks/huggingface: a Hub webhook for new commits queues a vet of each new head.

The Hub authenticates itself with the shared secret it sends verbatim in `X-Webhook-Secret`
(no HMAC), so the secret is the only credential here: checked in constant time, before the body
is read. Until the new commit is vetted and approved, the gate for its branch answers 409.
A replayed delivery, or one announcing a head already vetted, queues nothing (app.services.webhooks).
"""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import APIRouter, Header, Request, Response
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from app.api import webhook_payload
from app.api.deps import StateDep
from app.api.errors import ApiError
from app.api.openapi import errors
from app.api.schemas import JobOut
from app.services import webhooks
from app.settings import reveal

router = APIRouter(tags=["webhooks"])
MAX_BODY = 256 * 1024  # Hub payloads are a few KiB; anything this large is not one
REQUESTED_BY = "webhook"


class WebhookOut(BaseModel):
    queued: list[JobOut]  # one job per new head (joined when that work is already queued)
    # {"ref", "reason"}: deleted refs, non-model repos, PR refs, replayed deliveries, heads already vetted
    ignored: list[dict[str, str]]


@router.post("/webhooks/huggingface", response_model=WebhookOut, status_code=202,
             responses={200: {"model": WebhookOut, "description": "Nothing to vet (deleted refs, no model, no refs)"},
                        **errors(400, 401, 404, 413, 422, 503, s400="`invalid-json`, `json-too-deep`",
                                 s401="`webhook-secret-missing`, `bad-webhook-secret`",
                                 s404="`webhooks-disabled`: HFVET_WEBHOOK_SECRET is not set",
                                 s413="`body-too-large`: over 256 KiB",
                                 s422="`invalid-webhook-payload`, `invalid-repo`, `invalid-revision`, `invalid-sha`")})
async def huggingface_webhook(
    app: StateDep,
    request: Request,
    response: Response,
    x_webhook_secret: Annotated[str | None, Header(max_length=512, description="The webhook's secret.")] = None,
) -> WebhookOut:
    """Queue a vet of every branch or tag head the payload's `updatedRefs` moved (202); 200 when the
    event asks for nothing (a deleted ref, a dataset or Space, no refs, a replayed delivery, a head
    already vetted under the active policy)."""
    _check_secret(reveal(app.settings.webhook_secret), x_webhook_secret)
    plan = webhook_payload.plan(webhook_payload.parse(await _bounded_body(request)))
    wanted = [webhooks.Delivery(plan.webhook_id, t.repo, t.ref, t.revision, t.old_sha, t.sha) for t in plan.targets]
    received = await run_in_threadpool(  # one transaction for the vets: all queued, or none (503)
        lambda: webhooks.receive(app.store, app.jobs, app.policy.sha256, wanted, requested_by=REQUESTED_BY)
    ) if wanted else webhooks.Received([], [])
    if not received.queued:
        response.status_code = 200
    return WebhookOut(queued=[JobOut.of(job) for job in received.queued], ignored=[*plan.ignored, *received.ignored])


def _check_secret(expected: str | None, sent: str | None) -> None:
    if not expected:  # 404, not 5xx: the server is fine, this endpoint is simply not enabled
        raise ApiError(404, "webhooks-disabled",
                       "webhooks are off: set HFVET_WEBHOOK_SECRET to the secret configured on the Hub")
    if sent is None:
        raise ApiError(401, "webhook-secret-missing", "send the webhook's secret in X-Webhook-Secret")
    if not hmac.compare_digest(sent.encode(), expected.encode()):
        raise ApiError(401, "bad-webhook-secret", "X-Webhook-Secret does not match HFVET_WEBHOOK_SECRET")


async def _bounded_body(request: Request) -> bytes:
    """The body, refused as soon as it passes MAX_BODY (declared or actually sent)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise _too_large()
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise _too_large()
    return bytes(body)


def _too_large() -> ApiError:
    return ApiError(413, "body-too-large", f"a webhook payload is at most {MAX_BODY // 1024} KiB")
