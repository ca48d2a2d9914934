"""A repo on a hub (the real one, a mirror, or the fixture hub), pinned to one commit.

Two steps, apart: ``resolve_revision`` turns a branch or tag into a 40-hex commit (the gate and
the job runner need only that), and ``HubSource.open`` builds the pinned source: from then on
the manifest and every byte read belong to that commit, even if the branch moves.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from huggingface_hub import HfApi, constants
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.hf_api import ModelInfo, RepoFile
from huggingface_hub.utils import (  # type: ignore[attr-defined]  # public, but lazily exported
    build_hf_headers,
    get_token_to_send,
)

from app.core.manifest import Manifest
from app.core.ports import SourceError
from app.settings import Settings
from app.sources.hub_errors import (
    HubAccessDenied,
    HubError,
    HubProtocolError,
    HubRepoNotFound,
    HubRevisionNotFound,
    HubUnreachable,
    translate,
)
from app.sources.hub_facts import build_manifest, pinned_commit, reconcile_tree
from app.sources.hub_http import (
    RETRY_EXCEPTIONS,
    RETRY_STATUSES,
    RangeReader,
    Retry,
    RetryPolicy,
    retry_after,
)

__all__ = [
    "HubAccessDenied",
    "HubClient",
    "HubError",
    "HubProtocolError",
    "HubRepoNotFound",
    "HubRevisionNotFound",
    "HubSource",
    "HubUnreachable",
    "resolve_revision",
]


T = TypeVar("T")


@dataclass(frozen=True)
class HubClient:
    """Where the hub is and how to talk to it: endpoint, token, timeout and retry policy.

    ``endpoint`` defaults to huggingface_hub's own (``HF_ENDPOINT`` at its import, then
    huggingface.co); the app passes ``Settings.hf_endpoint``. ``token`` defaults to
    huggingface_hub's lookup (``HF_TOKEN``, the token file); ``False`` sends none.
    """

    endpoint: str
    token: str | bool
    timeout: float
    policy: RetryPolicy

    @classmethod
    def create(
        cls,
        endpoint: str | None = None,
        token: str | bool | None = None,
        *,
        timeout: float = 30.0,
        retries: int = 4,
        backoff: float = 0.5,
        max_wait: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> HubClient:
        return cls(
            (endpoint or constants.ENDPOINT).rstrip("/"),
            get_token_to_send(token) or False,
            timeout,
            RetryPolicy(retries, backoff, max_wait, sleep),
        )

    @classmethod
    def from_settings(cls, settings: Settings) -> HubClient:
        return cls.create(settings.hf_endpoint, settings.hf_token)

    def api(self) -> HfApi:
        return HfApi(endpoint=self.endpoint, token=self.token)

    def call(self, repo_id: str, revision: str, what: str, call: Callable[[], T]) -> T:
        """One API call, retried by the policy, with the client's errors mapped to ours."""
        return self.policy.run(what, lambda: _mapped(repo_id, revision, call))


def resolve_revision(repo_id: str, revision: str, hub: HubClient) -> str:
    """The 40-hex commit that ``revision`` (branch, tag or sha) names on the hub now."""
    info = _model_info(hub, repo_id, revision, files_metadata=False)
    return pinned_commit(info, revision)


class HubSource:
    """Manifest and Range reads of one repo at one commit. Build it with ``HubSource.open``."""

    def __init__(self, repo_id: str, commit: str, manifest: Manifest, reader: RangeReader) -> None:
        self.repo_id = repo_id
        self.commit = commit
        self._manifest = manifest
        self._sizes = {f.path: f.size for f in manifest.files}
        self._reader = reader

    @classmethod
    def open(cls, repo_id: str, revision: str = "main", *, hub: HubClient | None = None) -> HubSource:
        """Pin ``revision`` to its commit and list the files there (model info + recursive tree).

        Raises a ``HubError`` subclass if the repo or revision cannot be had.
        """
        hub = hub or HubClient.create()
        info = _model_info(hub, repo_id, revision, files_metadata=True)
        commit = pinned_commit(info, revision)
        manifest = build_manifest(info, repo_id, revision, hub.endpoint)
        tree = hub.call(repo_id, commit, f"file tree of {repo_id}@{commit}", lambda: _tree(hub, repo_id, commit))
        headers = build_hf_headers(token=hub.token)
        reader = RangeReader(repo_id, commit, hub.endpoint, headers, hub.timeout, hub.policy)
        return cls(repo_id, commit, reconcile_tree(manifest, tree), reader)

    @property
    def bytes_read(self) -> int:
        return self._reader.bytes_received

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
        return self._reader.read(path, offset, length, size)


def _model_info(hub: HubClient, repo_id: str, revision: str, *, files_metadata: bool) -> ModelInfo:
    info = hub.call(
        repo_id, revision, f"model info of {repo_id}@{revision}",
        lambda: hub.api().model_info(
            repo_id, revision=revision, files_metadata=files_metadata, securityStatus=files_metadata,
            timeout=hub.timeout,
        ),
    )
    if info.disabled:
        raise HubAccessDenied(f"{repo_id} is disabled on the hub")
    return info


def _tree(hub: HubClient, repo_id: str, commit: str) -> list[RepoFile]:
    entries = hub.api().list_repo_tree(repo_id, revision=commit, recursive=True)
    return [e for e in entries if isinstance(e, RepoFile)]


def _mapped(repo_id: str, revision: str, call: Callable[[], T]) -> T:
    """Run ``call``; retryable failures become ``Retry``, everything else a ``HubError``."""
    try:
        return call()
    except HfHubHTTPError as exc:
        if exc.response.status_code in RETRY_STATUSES:
            raise Retry(f"HTTP {exc.response.status_code}", retry_after(exc.response.headers)) from exc
        raise translate(exc, repo_id, revision) from exc
    except RETRY_EXCEPTIONS as exc:
        raise Retry(f"{type(exc).__name__}: {exc}") from exc
    except Exception as exc:  # anything else from the client (bad JSON...) becomes a HubError
        raise translate(exc, repo_id, revision) from exc
