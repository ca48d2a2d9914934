"""A thin client of the hfvet API for the CLI: stdlib only, so a deploy script's `hfvet gate` starts fast.

Anything but a well-formed answer from the server is a ServerError: the caller fails closed.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from app.core.ids import is_commit, is_short_sha
from app.errors import HfvetError
from app.redact import mask_url

TIMEOUT = 30.0


class ServerError(HfvetError):
    """The server did not answer usefully (unreachable, 5xx, not JSON, or an error): nothing is approved."""


@dataclass(frozen=True)
class Reply:
    status: int
    body: dict[str, Any]


class Client:
    def __init__(self, server: str, token: str | None = None, timeout: float = TIMEOUT) -> None:
        scheme = urllib.parse.urlsplit(server).scheme
        if scheme not in ("http", "https"):
            raise ServerError(f"the server URL must start with http:// or https://, got {redacted(server)[:100]!r}")
        self.server, self.token, self.timeout = server.rstrip("/"), token, timeout
        self.shown = redacted(self.server)  # the server as messages name it

    def gate(self, repo: str, revision: str | None) -> dict[str, Any]:
        """GET /gate: the gate document, whatever it says (200, 403, 404, 409); ServerError otherwise."""
        params = {"repo": repo} | ({"revision": revision} if revision else {})
        reply = self.get("/gate", params)
        if reply.status in (200, 403, 404, 409) and "error" not in reply.body and "status" in reply.body:
            _check_answers(reply, repo, revision)
            return reply.body
        raise ServerError(_explain(self.shown, reply))

    def get(self, path: str, params: dict[str, str]) -> Reply:
        url = f"{self.server}{path}?{urllib.parse.urlencode(params)}"
        return self._send(urllib.request.Request(url, headers=self._headers()), path)  # noqa: S310 (scheme checked)

    def document(self, path: str) -> tuple[int, bytes]:
        """GET ``path`` as bytes, whatever its type (a CycloneDX BOM is kept byte for byte): status and body."""
        request = urllib.request.Request(self.server + path, headers=self._headers() | {"Accept": "*/*"})  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 (scheme checked)
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            with exc:
                return exc.code, exc.read()
        except (urllib.error.URLError, OSError) as exc:
            raise ServerError(f"cannot reach the hfvet server at {self.shown}: {getattr(exc, 'reason', exc)}") from exc

    def post(self, path: str, body: dict[str, Any]) -> Reply:
        """POST ``body`` as JSON; the reply whatever its status (the caller reads the error document)."""
        request = urllib.request.Request(  # noqa: S310 (scheme checked)
            self.server + path, data=json.dumps(body).encode(), method="POST",
            headers=self._headers() | {"Content-Type": "application/json"})
        return self._send(request, path)

    def _send(self, request: urllib.request.Request, path: str) -> Reply:
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 (scheme checked)
                return Reply(response.status, _json(response.read(), self.shown + path))
        except urllib.error.HTTPError as exc:  # a status >= 400 still carries a JSON body
            with exc:
                return Reply(exc.code, _json(exc.read(), self.shown + path, exc.code))
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ServerError(f"cannot reach the hfvet server at {self.shown}: {reason}") from exc

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "hfvet-cli"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers


def redacted(url: str) -> str:
    """``url`` without the credentials a user may have put in it (user:password@, ?token=), for messages."""
    return mask_url(url)


def _json(data: bytes, url: str, status: int = 200) -> dict[str, Any]:
    try:
        body = json.loads(data)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise ServerError(f"the server answered {status} without a JSON object ({url.split('?')[0]})")
    return body


def _check_answers(reply: Reply, repo: str, revision: str | None) -> None:
    """An approval counts only with a 200, for the repo asked about, at the exact commit asked for."""
    body = reply.body
    if body.get("status") != "approved" and body.get("approved") is not True:
        return  # a refusal: it is explained as it stands
    if reply.status != 200:
        raise ServerError(f"the server answered {reply.status} with an approval: it contradicts itself")
    if body.get("repo") != repo:
        raise ServerError(f"the server approved {str(body.get('repo'))[:100]!r}, not {repo!r}")
    if revision is not None and is_commit(revision) and body.get("revision") != revision:
        raise ServerError(f"the server approved {str(body.get('revision'))[:100]!r}, not the commit {revision}")
    requested = body.get("requested")  # a short commit id comes back as the full sha it named
    if revision is not None and is_short_sha(revision) and is_commit(requested) and (
            not str(requested).startswith(revision) or body.get("revision") != requested):
        raise ServerError(f"the server approved {str(body.get('revision'))[:100]!r}, not a commit starting {revision}")


def _explain(server: str, reply: Reply) -> str:
    error = reply.body.get("error")
    if isinstance(error, dict):
        return f"the hfvet server at {server} answered {reply.status} {error.get('code')}: {error.get('message')}"
    return f"the hfvet server at {server} answered {reply.status} with no gate answer"
