"""``/api/models/{org}/{name}/...``: model info, tree, paths-info, refs, commits."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from starlette.responses import JSONResponse, Response

from app.hubfixture import errors, payloads
from app.hubfixture.context import Call, Level, open_repo, resolve
from app.hubfixture.repo import MAIN

_EXPAND_PAGE_SIZE = 50  # the Hub pages expanded listings more finely


def api(call: Call) -> Response:
    seg = call.segments
    if len(seg) < 4 or seg[1] != "models":
        raise errors.not_found()
    org, name, rest = seg[2], seg[3], seg[4:]
    if not rest:
        return _only("GET", call) or info(call, org, name, MAIN)
    handlers: dict[str, tuple[str, Callable[[Call, str, str, list[str]], Response]]] = {
        "revision": ("GET", lambda c, o, n, r: info(c, o, n, "/".join(r[1:]))),
        "tree": ("GET", tree),
        "paths-info": ("POST", paths_info),
        "refs": ("GET", refs),
        "commits": ("GET", commits),
    }
    if rest[0] not in handlers:
        raise errors.not_found()
    method, handler = handlers[rest[0]]
    return _only(method, call) or handler(call, org, name, rest)


def info(call: Call, org: str, name: str, revision: str) -> Response:
    repo = open_repo(call, org, name, Level.INFO)
    snap = resolve(repo, revision)
    expand = call.query.getlist("expand") + call.query.getlist("expand[]")
    body = payloads.model_info(
        repo, snap, blobs=call.flag("blobs"), security=call.flag("securityStatus"), expand=expand
    )
    return JSONResponse(body)


def tree(call: Call, org: str, name: str, rest: list[str]) -> Response:
    if len(rest) < 2:
        raise errors.bad_request("missing revision")
    repo = open_repo(call, org, name, Level.LISTING)
    snap = resolve(repo, rest[1])
    folder = "/".join(rest[2:]).strip("/")
    if folder and folder not in snap.directories:
        raise errors.entry_not_found(folder, snap.commit)
    expand = call.flag("expand")
    paths = snap.children(folder, call.flag("recursive"))
    return _paged(call, paths, lambda p: payloads.tree_entry(snap, p, expand), expand)


def paths_info(call: Call, org: str, name: str, rest: list[str]) -> Response:
    repo = open_repo(call, org, name, Level.LISTING)
    snap = resolve(repo, "/".join(rest[1:]))
    paths, expand = _paths_body(call)
    known = set(snap.by_path) | set(snap.directories)
    wanted = dict.fromkeys(p.strip("/") for p in paths)  # dedupe, keep order
    return JSONResponse([payloads.tree_entry(snap, p, expand) for p in wanted if p in known])


def refs(call: Call, org: str, name: str, rest: list[str]) -> Response:
    repo = open_repo(call, org, name, Level.INFO)
    return JSONResponse(payloads.refs(repo.refs(), call.flag("include_prs")))


def commits(call: Call, org: str, name: str, rest: list[str]) -> Response:
    repo = open_repo(call, org, name, Level.INFO)
    head = resolve(repo, "/".join(rest[1:]) or MAIN)
    formatted = "formatted" in call.query.getlist("expand[]") + call.query.getlist("expand")
    history = repo.history(head)
    return _paged(call, history, lambda s: payloads.commit(s, formatted), expand=False)


def _paths_body(call: Call) -> tuple[list[str], bool]:
    """huggingface_hub posts a form, huggingface.js posts JSON: accept both."""
    if "json" in call.headers.get("content-type", ""):
        try:
            body = json.loads(call.body or b"{}")
        except ValueError:
            raise errors.bad_request("invalid JSON body") from None
        paths, expand = body.get("paths", []), body.get("expand", False)
        if isinstance(paths, str):
            paths = [paths]
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            raise errors.bad_request("'paths' must be a list of strings")
        return paths, expand is True or str(expand).lower() == "true"
    form = parse_qs(call.body.decode("utf-8", "replace"), keep_blank_values=True)
    return form.get("paths", []), form.get("expand", ["false"])[-1].lower() in ("1", "true")


def _paged(call: Call, items: list[Any], render: Callable[[Any], dict[str, Any]], expand: bool) -> Response:
    size = min(call.page_size, _EXPAND_PAGE_SIZE) if expand else call.page_size
    cursor = call.query.get("cursor", "0")
    if not cursor.isdigit():
        raise errors.bad_request("invalid cursor")
    start = int(cursor)
    page = items[start : start + size]
    headers = {}
    if start + size < len(items):
        headers["Link"] = f'<{call.link_with(cursor=start + size)}>; rel="next"'
    return JSONResponse([render(item) for item in page], headers=headers)


def _only(method: str, call: Call) -> Response | None:
    allowed = ("GET", "HEAD") if method == "GET" else (method,)
    if call.method in allowed:
        return None
    return JSONResponse({"error": "Method not allowed"}, status_code=405, headers={"Allow": method})
