"""Fetching one file of a repo at a pinned commit with huggingface_hub, for the verified download.

The caller verifies what lands; this only puts the hub's bytes at ``root/path`` (huggingface_hub
adds its bookkeeping under ``root/.cache/huggingface``). Errors come out as ``HubError``s.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from huggingface_hub import hf_hub_download
from huggingface_hub.utils.tqdm import disable_progress_bars

from app.sources.hub import HubClient


def hub_fetcher(hub: HubClient, repo_id: str, sha: str) -> Callable[[str, Path], None]:
    """A fetch function for ``app.services.downloads``: exactly ``sha``, never a branch."""
    disable_progress_bars()  # the CLI draws one progress bar of its own, only on a terminal

    def fetch(path: str, root: Path) -> None:
        hub.call(
            repo_id, sha, f"download of {repo_id}@{sha}/{path}",
            lambda: hf_hub_download(
                repo_id, path, revision=sha, local_dir=root, endpoint=hub.endpoint, token=hub.token,
                etag_timeout=hub.timeout,
            ),
        )

    return fetch
