"""Fetching one file of a repo at a pinned commit with huggingface_hub, for the verified download.

The caller verifies what lands; this only puts the hub's bytes at ``root/path`` (huggingface_hub
adds its bookkeeping under ``root/.cache/huggingface``). Errors come out as ``HubError``s. There
is no retry here: a failed file fails the whole download closed, and running it again is safe.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from huggingface_hub import hf_hub_download
from huggingface_hub.utils.tqdm import disable_progress_bars

from app.sources.hub import HubClient
from app.sources.hub_errors import named, translate

ETAG_TIMEOUT = 30.0  # seconds for the metadata request before each file


def hub_fetcher(hub: HubClient, repo_id: str, sha: str) -> Callable[[str, Path], None]:
    """A fetch function for ``app.services.downloads``: exactly ``sha``, never a branch."""
    disable_progress_bars()  # the CLI draws one progress bar of its own, only on a terminal

    def fetch(path: str, root: Path) -> None:
        try:
            hf_hub_download(repo_id, path, revision=sha, local_dir=root, endpoint=hub.endpoint, token=hub.token,
                            etag_timeout=ETAG_TIMEOUT)
        except Exception as exc:  # every client failure (HTTP, transport, validation) becomes a HubError
            raise named(translate(exc, repo_id, sha), hub.endpoint) from exc

    return fetch
