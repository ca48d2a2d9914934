"""``/api/models/{org}/{name}/...``: model info, tree, paths-info, refs and commits, at the served commit."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, Response

from app.core.ids import parse_repo_id, parse_revision
from app.endpoint import payloads
from app.endpoint.call import Call, entry_not_found, header_text, not_found
from app.services.hub_endpoint import Refusal, Served

log = logging.getLogger("hfvet.endpoint")
PAGE_SIZE, EXPANDED_PAGE_SIZE = 1000, 50  # the Hub's pages (hub-protocol.md §1.1)
MAX_PATHS_BODY = 1 << 20
DEFAULT_BRANCH = "main"
Handler = Callable[[Call, str, list[str], bytes], Awaitable[Response]]


async def api(call: Call, body: bytes) -> Response:
    seg = call.segments
    if len(seg) < 4 or seg[1] != "models" or not seg[2] or not seg[3]:
        raise not_found()
    repo, rest = f"{seg[2]}/{seg[3]}", seg[4:]
    if not rest:
        return await _only("GET", call) or await info(call, repo, [], body)
    handlers: dict[str, tuple[str, Handler]] = {
        "revision": ("GET", info), "tree": ("GET", tree), "paths-info": ("POST", paths_info),
        "refs": ("GET", refs), "commits": ("GET", commits),
    }
    if rest[0] not in handlers:
        raise not_found()  # xet-read-token among them: xet is never offered
    method, handler = handlers[rest[0]]
    return await _only(method, call) or await handler(call, repo, rest[1:], body)


async def _only(method: str, call: Call) -> Response | None:
    return None if call.method == method else Response(status_code=405, headers={"Allow": method})


async def served(call: Call, repo: str, revision: str) -> Served:
    """The commit ``repo`` is served at for ``revision``; ids the Hub would refuse are refused first, as it
    refuses them (app.core.ids), before any store or upstream call."""
    try:
        parse_repo_id(repo)
    except ValueError as exc:
        raise Refusal(404, "RepoNotFound", "invalid-repo", f"hfvet: {exc}") from exc
    try:
        parse_revision(revision)
    except ValueError as exc:
        raise Refusal(404, "RevisionNotFound", "invalid-revision", f"hfvet: {exc}") from exc
    return await run_in_threadpool(call.state.hub_endpoint.serve, repo, revision)  # the store is synchronous


async def info(call: Call, repo: str, rest: list[str], body: bytes) -> Response:
    at = await served(call, repo, "/".join(rest) or DEFAULT_BRANCH)
    if at.note:  # a moved branch served at an older approval: the client's log does not show the header
        log.warning("hub endpoint: %s: %s", repo, at.note)
    expand = call.query.getlist("expand") + call.query.getlist("expand[]")
    return _json(payloads.model_info(at, blobs=call.flag("blobs"), expand=expand), at)


async def tree(call: Call, repo: str, rest: list[str], body: bytes) -> Response:
    if not rest:
        raise Refusal(400, None, "bad-request", "hfvet: missing revision")
    at = await served(call, repo, rest[0])
    folder = "/".join(rest[1:]).strip("/")
    if folder and folder not in payloads.directories(at):
        raise entry_not_found(repo, at.commit, folder)
    entries = payloads.children(at, folder, call.flag("recursive"))
    return _paged(call, entries, at, EXPANDED_PAGE_SIZE if call.flag("expand") else PAGE_SIZE)


async def paths_info(call: Call, repo: str, rest: list[str], body: bytes) -> Response:
    at = await served(call, repo, "/".join(rest))
    folders = payloads.directories(at)
    wanted = dict.fromkeys(p.strip("/") for p in _paths(call, body))
    return _json([payloads.file_entry(at.files[p]) if p in at.files else payloads.directory_entry(p)
                  for p in wanted if p in at.files or p in folders], at)


async def refs(call: Call, repo: str, rest: list[str], body: bytes) -> Response:
    try:
        commit: str | None = (await served(call, repo, DEFAULT_BRANCH)).commit
    except Refusal as refusal:
        if refusal.status != 403:
            raise
        commit = None  # main is refused: no branch is served
    return JSONResponse(payloads.refs(DEFAULT_BRANCH, commit, call.flag("include_prs")))


async def commits(call: Call, repo: str, rest: list[str], body: bytes) -> Response:
    at = await served(call, repo, "/".join(rest) or DEFAULT_BRANCH)
    formatted = "formatted" in call.query.getlist("expand[]") + call.query.getlist("expand")
    return _json(payloads.commits(at, formatted), at)


def _paths(call: Call, body: bytes) -> list[str]:
    """paths-info's paths: form-encoded (huggingface_hub) or JSON (huggingface.js)."""
    if len(body) > MAX_PATHS_BODY:
        raise Refusal(413, None, "bad-request", "hfvet: paths-info body too large")
    if call.headers.get("content-type", "").startswith("application/json"):
        try:
            doc: Any = json.loads(body or b"{}")
        except ValueError as exc:
            raise Refusal(400, None, "bad-request", f"hfvet: paths-info body is not JSON: {exc}") from exc
        paths = doc.get("paths", []) if isinstance(doc, dict) else []
        return [p for p in paths if isinstance(p, str)]
    return parse_qs(body.decode("utf-8", "replace")).get("paths", [])


def _paged(call: Call, entries: list[dict[str, Any]], at: Served, size: int) -> Response:
    cursor = call.query.get("cursor", "0")
    start = int(cursor) if cursor.isdigit() else 0
    response = _json(entries[start:start + size], at)
    if start + size < len(entries):
        response.headers["Link"] = f'<{call.link_with(cursor=start + size)}>; rel="next"'
    return response


def _json(body: Any, at: Served) -> Response:
    headers = {"X-Repo-Commit": at.commit}
    if at.note:
        headers["X-Hfvet-Note"] = header_text(at.note)
    return JSONResponse(body, headers=headers)
