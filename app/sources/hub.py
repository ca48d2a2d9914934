"""A repo on a hub (the real one, a mirror, or the fixture hub), pinned to one commit.

Two steps, apart: ``resolve_revision`` turns a branch or tag into a 40-hex commit (the gate and
the job runner need only that), and ``HubSource.open`` builds the pinned source: from then on
the manifest and every byte read belong to that commit, even if the branch moves.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from huggingface_hub import HfApi, constants
from huggingface_hub.hf_api import ModelInfo
from huggingface_hub.utils import (  # type: ignore[attr-defined]  # public, but lazily exported
    build_hf_headers,
    get_token_to_send,
)

from app.core.manifest import Manifest
from app.core.ports import SourceError
from app.settings import Settings, reveal
from app.sources import hub_api
from app.sources.hub_errors import (
    HubAccessDenied,
    HubError,
    HubProtocolError,
    HubRepoNotFound,
    HubRevisionNotFound,
    HubStalled,
    HubTimeout,
    HubUnreachable,
    named,
    naming_the_hub,
)
from app.sources.hub_facts import build_manifest, pinned_commit, reconcile_tree
from app.sources.hub_http import RangeReader, RetryPolicy
from app.sources.hub_wire import Deadline, HubLimits, Wire

__all__ = [
    "Deadline",
    "HubAccessDenied",
    "HubClient",
    "HubError",
    "HubLimits",
    "HubProtocolError",
    "HubRepoNotFound",
    "HubRevisionNotFound",
    "HubSource",
    "HubStalled",
    "HubTimeout",
    "HubUnreachable",
    "endpoint_of",
    "resolve_revision",
]


def endpoint_of(configured: str | None) -> str:
    """The hub's base URL: the configured one (``HF_ENDPOINT``), else huggingface_hub's own default."""
    return (configured or constants.ENDPOINT).rstrip("/")


@dataclass(frozen=True)
class HubClient:
    """Where the hub is and how to talk to it: endpoint, token, limits, retry policy, deadline.

    ``endpoint`` defaults to huggingface_hub's own (``HF_ENDPOINT`` at its import, then
    huggingface.co); the app passes ``Settings.hf_endpoint``. ``token`` defaults to
    huggingface_hub's lookup (``HF_TOKEN``, the token file); ``False`` sends none.
    ``deadline``, if set, caps every call (the vet's ``--timeout``, a job's deadline).
    """

    endpoint: str
    token: str | bool
    limits: HubLimits
    policy: RetryPolicy
    deadline: Deadline | None = None

    @classmethod
    def create(
        cls,
        endpoint: str | None = None,
        token: str | bool | None = None,
        *,
        limits: HubLimits | None = None,
        retries: int = 4,
        backoff: float = 0.5,
        max_wait: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> HubClient:
        return cls(
            endpoint_of(endpoint),
            get_token_to_send(token) or False,
            limits or HubLimits(),
            RetryPolicy(retries, backoff, max_wait, sleep),
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> HubClient:
        return cls.create(settings.hf_endpoint, reveal(settings.hf_token))

    def until(self, deadline: Deadline) -> HubClient:
        """The same client, with every call also ending by ``deadline``."""
        return replace(self, deadline=deadline)

    def api(self) -> HfApi:
        return HfApi(endpoint=self.endpoint, token=self.token)

    def wire(self) -> Wire:
        return Wire(self.endpoint, build_hf_headers(token=self.token), self.limits, self.deadline)


def resolve_revision(repo_id: str, revision: str, hub: HubClient) -> str:
    """The 40-hex commit that ``revision`` (branch, tag or sha) names on the hub now."""
    with naming_the_hub(hub.endpoint):
        info = _model_info(hub, hub.wire(), repo_id, revision, files_metadata=False)
        return pinned_commit(info, revision)


class HubSource:
    """Manifest and Range reads of one repo at one commit. Build it with ``HubSource.open``."""

    def __init__(self, repo_id: str, commit: str, manifest: Manifest, reader: RangeReader, wire: Wire) -> None:
        self.repo_id = repo_id
        self.commit = commit
        self._manifest = manifest
        self._sizes = {f.path: f.size for f in manifest.files}
        self._reader = reader
        self._wire = wire

    @classmethod
    def open(cls, repo_id: str, revision: str = "main", *, hub: HubClient | None = None) -> HubSource:
        """Pin ``revision`` to its commit and list the files there (model info + recursive tree).

        Raises a ``HubError`` subclass if the repo or revision cannot be had.
        """
        hub = hub or HubClient.create()
        wire = hub.wire()
        with naming_the_hub(hub.endpoint):
            info = _model_info(hub, wire, repo_id, revision, files_metadata=True)
            commit = pinned_commit(info, revision)
            manifest = build_manifest(info, repo_id, revision, hub.endpoint)
            tree = hub_api.tree(wire, hub.policy, repo_id, commit)
        reader = RangeReader(repo_id, commit, wire, hub.policy)
        return cls(repo_id, commit, reconcile_tree(manifest, tree), reader, wire)

    @property
    def bytes_read(self) -> int:
        return self._reader.bytes_received

    @property
    def served_by(self) -> list[str]:
        """The origins (scheme://host:port) that served bytes so far: the hub, and any CDN it redirected to."""
        return self._wire.served_by

    def fail_if_stalled(self) -> None:
        """Raise the ``HubStalled`` of a read that gave up on a silent hub: the hub failed, not the
        files, so there is no report to keep (the job runner retries it later)."""
        if (stall := self._wire.silence.first) is not None:
            raise named(stall, self._wire.endpoint)

    def manifest(self) -> Manifest:
        return self._manifest

    def size(self, path: str) -> int:
        try:
            return self._sizes[path]
        except KeyError:
            raise SourceError(f"unknown file {path!r} in {self.repo_id}@{self.commit}") from None

    def read(self, path: str, offset: int, length: int) -> bytes:
        size = self.size(path)
        if offset < 0 or length < 0:
            raise SourceError(f"invalid read of {path!r}: offset={offset} length={length}")
        length = min(length, size - offset)
        if length <= 0:
            return b""
        with naming_the_hub(self._wire.endpoint):
            return self._reader.read(path, offset, length, size)


def _model_info(hub: HubClient, wire: Wire, repo_id: str, revision: str, *, files_metadata: bool) -> ModelInfo:
    info = hub_api.model_info(wire, hub.policy, repo_id, revision, files_metadata=files_metadata)
    if info.disabled:
        raise HubAccessDenied(f"{repo_id} is disabled on the hub")
    return info
