"""HubSource: a repo on a hub (the real one, a mirror, or the fixture hub) pinned to one commit.

The branch or tag asked for is resolved once, when the source is built; from then on the
manifest and every byte read belong to that 40-hex commit, even if the branch moves.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TypeVar

from huggingface_hub import HfApi, constants
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.hf_api import ModelInfo, RepoFile
from huggingface_hub.utils import (  # type: ignore[attr-defined]  # public, but lazily exported
    build_hf_headers,
    get_token_to_send,
)

from app.core.manifest import Manifest, ManifestFile
from app.core.ports import SourceError
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
    "HubError",
    "HubProtocolError",
    "HubRepoNotFound",
    "HubRevisionNotFound",
    "HubSource",
    "HubUnreachable",
]


T = TypeVar("T")


class HubSource:
    """Manifest and Range reads of ``repo_id`` at the commit ``revision`` resolves to.

    ``endpoint`` defaults to ``HF_ENDPOINT`` (read now, not at import) and then huggingface.co;
    ``token`` defaults to huggingface_hub's own lookup (``HF_TOKEN``, the token file); pass
    ``False`` to send none. Raises a ``HubError`` subclass if the repo or revision cannot be had.
    """

    def __init__(
        self,
        repo_id: str,
        revision: str = "main",
        *,
        endpoint: str | None = None,
        token: str | bool | None = None,
        timeout: float = 30.0,
        retries: int = 4,
        backoff: float = 0.5,
        max_wait: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.repo_id = repo_id
        self.endpoint = (endpoint or os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")
        self._token: str | bool = get_token_to_send(token) or False
        self._timeout = timeout
        self._policy = RetryPolicy(retries, backoff, max_wait, sleep)
        info = self._fetch_info(revision)
        self.commit = pinned_commit(info, revision)
        manifest = build_manifest(info, repo_id, revision, self.endpoint)
        tree = self._policy.run(f"file tree of {repo_id}@{self.commit}", self._tree)
        self._manifest = reconcile_tree(manifest, tree)
        self._sizes = {f.path: f.size for f in self._manifest.files}
        headers = build_hf_headers(token=self._token)
        self._reader = RangeReader(repo_id, self.commit, self.endpoint, headers, timeout, self._policy)

    @property
    def bytes_read(self) -> int:
        return self._reader.bytes_received

    def manifest(self) -> Manifest:
        return self._manifest

    def files(self) -> tuple[ManifestFile, ...]:
        return self._manifest.files

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

    def _fetch_info(self, revision: str) -> ModelInfo:
        what = f"model info of {self.repo_id}@{revision}"
        info = self._policy.run(what, lambda: self._model_info(revision))
        if info.disabled:
            raise HubAccessDenied(f"{self.repo_id} is disabled on the hub")
        return info

    def _tree(self) -> list[RepoFile]:
        api = HfApi(endpoint=self.endpoint, token=self._token)
        return self._hub_call(
            self.commit,
            lambda: [e for e in api.list_repo_tree(self.repo_id, revision=self.commit, recursive=True)
                     if isinstance(e, RepoFile)],
        )

    def _model_info(self, revision: str) -> ModelInfo:
        api = HfApi(endpoint=self.endpoint, token=self._token)
        return self._hub_call(
            revision,
            lambda: api.model_info(
                self.repo_id, revision=revision, files_metadata=True, securityStatus=True, timeout=self._timeout
            ),
        )

    def _hub_call(self, revision: str, call: Callable[[], T]) -> T:
        """One API call with the client's errors mapped to ours (retryable ones to Retry)."""
        try:
            return call()
        except HfHubHTTPError as exc:
            if exc.response.status_code in RETRY_STATUSES:
                raise Retry(f"HTTP {exc.response.status_code}", retry_after(exc.response.headers)) from exc
            raise translate(exc, self.repo_id, revision) from exc
        except RETRY_EXCEPTIONS as exc:
            raise Retry(f"{type(exc).__name__}: {exc}") from exc
        except Exception as exc:  # anything else from the client (bad JSON...) becomes a HubError
            raise translate(exc, self.repo_id, revision) from exc
