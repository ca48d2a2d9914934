"""One request to the Hub endpoint: its parts as the Hub's routes need them, who sent it, and the answers
the client maps to exceptions by their X-Error-Code (shared/reference/hub-protocol.md §2)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, unquote, urlencode

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import URL, Headers, QueryParams
from starlette.responses import JSONResponse, Response
from starlette.types import Scope

from app.core.principals import Principal, TokenExpired, bearer_secret
from app.services.hub_endpoint import Refusal
from app.state import AppState

ANONYMOUS = "anonymous"
MAX_HEADER_MESSAGE = 2000  # X-Error-Message is a header: bounded, one line, ASCII


@dataclass(frozen=True)
class Call:
    state: AppState
    method: str
    prefix: str  # where the endpoint is mounted ("/hub", or "" on its own port)
    segments: list[str]  # the path after the prefix, split on "/" before percent-decoding (refs%2Fpr%2F1 is one)
    query: QueryParams
    headers: Headers
    url: URL
    who: Principal | None

    @property
    def actor(self) -> str:
        return ANONYMOUS if self.who is None else self.who.actor

    def flag(self, name: str) -> bool:
        return self.query.get(name, "").lower() in ("1", "true")

    def link_with(self, **params: str | int) -> str:
        """This URL, absolute, with new query parameters (the client follows a `Link` verbatim)."""
        query = [(k, v) for k, v in self.query.multi_items() if k not in params]
        return str(self.url.replace(query=urlencode(query + [(k, str(v)) for k, v in params.items()])))

    def url_of(self, path: str) -> str:
        """An absolute URL of this endpoint's ``path`` (segments already quoted)."""
        return str(self.url.replace(path=f"{self.prefix}/{path}", query=""))


async def call_of(state: AppState, scope: Scope, prefix: str) -> Call:
    raw = scope.get("raw_path")
    path = raw.decode("latin-1").split("?")[0] if isinstance(raw, bytes) else quote(scope["path"])
    rest = path[len(prefix):] if path.startswith(prefix) else path
    headers = Headers(scope=scope)
    return Call(state, scope["method"], prefix, [unquote(s) for s in rest.split("/")[1:]],
                QueryParams(scope.get("query_string", b"")), headers, URL(scope=scope),
                await who_sent(state, headers.get("authorization")))


async def who_sent(state: AppState, header: str | None) -> Principal | None:
    """The token's holder; a token that is sent must be a live hfvet token, and HFVET_READ_AUTH needs one."""
    if header is None:
        if state.settings.read_auth:
            raise Refusal(401, None, "token-required", "hfvet: this endpoint needs an hfvet reader token: set "
                          "HF_TOKEN to one (`hfvet token create --role reader --name NAME`)")
        return None
    secret = bearer_secret(header)
    try:
        who = None if secret is None else await run_in_threadpool(state.verify, secret)
    except TokenExpired as exc:
        raise Refusal(401, None, "token-expired", f"hfvet: {exc}: ask an admin for a new reader token") from None
    if who is None:
        raise Refusal(401, None, "bad-token", "hfvet: HF_TOKEN is not a live hfvet token (the Hub's own tokens "
                      "are not used here): set HF_TOKEN to an hfvet reader token")
    return who


def refusal_response(refusal: Refusal) -> Response:
    headers = {"X-Error-Message": header_text(refusal.message)}
    if refusal.code:
        headers["X-Error-Code"] = refusal.code
    if refusal.retry_after is not None:
        headers["Retry-After"] = str(refusal.retry_after)
    if refusal.commit:
        headers["X-Repo-Commit"] = refusal.commit  # the client caches "absent at this commit" (EntryNotFound)
    return JSONResponse({"error": refusal.message}, status_code=refusal.status, headers=headers)


def header_text(message: str) -> str:
    """``message`` as one bounded ASCII header line (a reason may quote a file name in any script)."""
    flat = " ".join(message.split())
    text = flat.encode("ascii", "backslashreplace").decode("ascii")
    return text if len(text) <= MAX_HEADER_MESSAGE else text[:MAX_HEADER_MESSAGE - 3] + "..."


def not_found() -> Refusal:
    return Refusal(404, None, "not-found", "hfvet: the Hub endpoint does not serve this path")


def entry_not_found(repo: str, commit: str, path: str) -> Refusal:
    return Refusal(404, "EntryNotFound", "not-in-manifest",
                   f"hfvet: {path} is not in the approved manifest of {repo}@{commit}", commit=commit)
