"""The Hugging Face webhook payload (v3), and which commits it asks us to vet.

Only the fields hfvet acts on are modelled; the Hub sends more (owner, url, discussion, ...),
which are ignored. Shape: ``{"event": {"action", "scope"}, "repo": {"type", "name", "headSha"},
"updatedRefs": [{"ref", "oldSha", "newSha"}], "webhook": {"id", "version"}}`` (see huggingface_hub's
``_webhooks_payload``). The Hub sends no delivery id: a delivery is named by its webhook id and what
each ref moved from and to (app.services.webhooks).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.api import validation
from app.api.errors import ApiError
from app.core.ids import is_commit

MAX_REFS = 100  # a push updates a handful of refs; more is not a Hub payload
DELETED = "0" * 40  # the Hub's newSha for a deleted ref


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class WebhookEvent(_Lenient):
    action: str = Field(max_length=40)
    scope: str = Field(max_length=80)


class WebhookRepo(_Lenient):
    type: str = Field(max_length=20)
    name: str = Field(max_length=200)
    headSha: str | None = Field(None, max_length=64)  # the Hub spells it in camelCase


class UpdatedRef(_Lenient):
    ref: str = Field(max_length=300)
    oldSha: str | None = Field(None, max_length=64)
    newSha: str | None = Field(None, max_length=64)


class WebhookInfo(_Lenient):
    id: str = Field("", max_length=100)


class WebhookPayload(_Lenient):
    event: WebhookEvent | None = None
    webhook: WebhookInfo | None = None
    repo: WebhookRepo
    updatedRefs: list[UpdatedRef] = Field(default_factory=list, max_length=MAX_REFS)


@dataclass(frozen=True)
class Target:
    """One commit to vet: the branch or tag it is the new head of, and its sha; the ref as the Hub named it
    and where it was before, which with the webhook's id name the delivery."""

    repo: str
    revision: str
    sha: str
    ref: str = ""
    old_sha: str | None = None


@dataclass(frozen=True)
class Plan:
    targets: list[Target]
    ignored: list[dict[str, str]]  # {"ref", "reason"} for each ref (or the whole event) left alone
    webhook_id: str = ""


def parse(body: bytes) -> WebhookPayload:
    """The payload, or a 400/422 ApiError saying what is wrong with it."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, "invalid-json", f"the webhook body is not JSON: {exc}") from exc
    except RecursionError as exc:  # app.api.limits refuses these first; this parser must not 500 without it
        raise ApiError(400, "json-too-deep", "the webhook body nests too deeply") from exc
    try:
        return WebhookPayload.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors()[:5])
        raise ApiError(422, "invalid-webhook-payload", f"not a Hugging Face webhook payload: {problems}") from exc


def plan(payload: WebhookPayload) -> Plan:
    """What to vet. Every ref is checked before anything is queued, so a bad payload queues nothing."""
    webhook_id = payload.webhook.id if payload.webhook is not None else ""
    if payload.repo.type != "model":
        return Plan([], [{"ref": "*", "reason": f"{payload.repo.type} repos are not vetted (only models)"}],
                     webhook_id)
    repo = validation.repo_id(payload.repo.name)
    targets: list[Target] = []
    ignored: list[dict[str, str]] = []
    for update in payload.updatedRefs:
        revision, reason = _revision_of(update)
        if revision is None:
            ignored.append({"ref": update.ref, "reason": reason})
        else:
            targets.append(Target(repo, revision, reason, update.ref, update.oldSha))
    if not payload.updatedRefs:
        ignored.append({"ref": "*", "reason": "the event updates no refs"})
    return Plan(targets, ignored, webhook_id)


def _revision_of(update: UpdatedRef) -> tuple[str | None, str]:
    """(branch or tag, new sha) to vet, or (None, why not)."""
    sha = update.newSha
    if sha is None or sha == DELETED:
        return None, "the ref was deleted"
    if not is_commit(sha):
        raise ApiError(422, "invalid-sha", f"newSha of {update.ref[:100]!r} is not a 40-hex commit: {sha[:64]!r}")
    for prefix in ("refs/heads/", "refs/tags/"):
        if update.ref.startswith(prefix):
            return validation.revision(update.ref.removeprefix(prefix)), sha
    return None, "not a branch or tag (pull-request and conversion refs are not deployed)"
