"""The two JSON calls a vet makes: model info at a revision, and the recursive file tree.

They are sent through ``Wire`` rather than ``HfApi.model_info`` / ``HfApi.list_repo_tree``:
the tree listing takes no timeout there (a stalled hub hangs it for good) and retries inside
huggingface_hub with any ``Retry-After`` the hub names (an hour, if it says so). The URLs, the
parameters and the parsing into ``ModelInfo`` / ``RepoFile`` are huggingface_hub's own.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from huggingface_hub.hf_api import ModelInfo, RepoFile
from huggingface_hub.utils import validate_repo_id  # type: ignore[attr-defined]  # public, lazily exported

from app.sources.hub_errors import HubProtocolError, translate
from app.sources.hub_http import RetryPolicy
from app.sources.hub_wire import Deadline, Wire, mapped_errors


def model_info(wire: Wire, policy: RetryPolicy, repo_id: str, revision: str, *, files_metadata: bool) -> ModelInfo:
    with mapped_errors(repo_id, revision):
        validate_repo_id(repo_id)
    url = f"{wire.endpoint}/api/models/{repo_id}/revision/{quote(revision, safe='')}"
    params = {"securityStatus": "true", "blobs": "true"} if files_metadata else {}
    data, _ = _get_json(wire, policy, url, params, (repo_id, revision), f"model info of {repo_id}@{revision}")
    try:
        return ModelInfo(**data)  # type: ignore[no-untyped-call]
    except Exception as exc:  # a body that is JSON but not model info
        raise translate(exc, repo_id, revision) from exc


def tree(wire: Wire, policy: RetryPolicy, repo_id: str, commit: str) -> list[RepoFile]:
    """Every file of the recursive tree, page by page (each page one call, with its own deadline)."""
    url: str | None = f"{wire.endpoint}/api/models/{repo_id}/tree/{quote(commit, safe='')}"
    params: dict[str, str] = {"recursive": "true", "expand": "false"}
    files: list[RepoFile] = []
    seen: set[str] = set()
    while url is not None:
        if url in seen or len(seen) >= wire.limits.max_tree_pages:
            raise HubProtocolError(f"{repo_id}@{commit}: the tree listing loops or runs past "
                                   f"{wire.limits.max_tree_pages} pages")
        seen.add(url)
        what = f"file tree of {repo_id}@{commit}, page {len(seen)}"
        entries, url = _get_json(wire, policy, url, params, (repo_id, commit), what)
        params = {}  # the next-page link carries its own query
        files += _files(entries, repo_id, commit)
    return files


def _files(entries: Any, repo_id: str, commit: str) -> list[RepoFile]:
    if not isinstance(entries, list):
        raise HubProtocolError(f"{repo_id}@{commit}: a tree page is not a list")
    try:
        return [RepoFile(**e) for e in entries if e.get("type") == "file"]  # type: ignore[no-untyped-call]
    except Exception as exc:  # entries that are not tree entries
        raise translate(exc, repo_id, commit) from exc


def _get_json(
    wire: Wire, policy: RetryPolicy, url: str, params: dict[str, str], where: tuple[str, str], what: str
) -> tuple[Any, str | None]:
    """The decoded JSON body of one call, and the Link header's next page if any."""
    deadline = wire.deadline()
    return policy.run(what, lambda: _attempt(wire, url, params, where, what, deadline), deadline, wire.silence)


def _attempt(
    wire: Wire, url: str, params: dict[str, str], where: tuple[str, str], what: str, deadline: Deadline
) -> tuple[Any, str | None]:
    limit = wire.limits.max_json_bytes
    with mapped_errors(*where), wire.get(url, deadline, what, params=params) as response:
        wire.check_status(response, deadline, *where)
        if response.status_code != 200:
            raise HubProtocolError(f"{what}: the hub answered HTTP {response.status_code}, not 200")
        body = wire.body(response, limit, deadline, what)
        next_page = response.links.get("next", {}).get("url")
    if len(body) > limit:
        raise HubProtocolError(f"{what}: answer larger than {limit} bytes")
    try:
        return json.loads(body), next_page
    except ValueError as exc:
        raise HubProtocolError(f"{what}: the hub's answer is not JSON ({exc})") from exc
