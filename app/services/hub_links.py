"""Links to a repo on the hub this server reads: ``HF_ENDPOINT`` when set, else huggingface_hub's default
(https://huggingface.co), never a hard-coded host. A mirror or the fixture hub may not serve the hub's
web pages: the link still names the repo and commit the vet read."""

from __future__ import annotations

from urllib.parse import quote

from app.settings import Settings
from app.sources.hub import endpoint_of


def hub_tree_url(settings: Settings, repo: str, sha: str | None = None) -> str:
    """The repo's file tree on the hub, at ``sha`` when given (``{endpoint}/org/name/tree/sha``)."""
    base = f"{endpoint_of(settings.hf_endpoint)}/{quote(repo, safe='/')}"
    return f"{base}/tree/{quote(sha, safe='')}" if sha else base
