"""The fast twin of GET /gate (app/api/routes/gate.py): its hot case without FastAPI, an exact commit
already answered with nothing it read written since. Differential tests:
tests/integration/api/test_gate_fast_path.py and tests/unit/services/test_gate_cache_dependencies.py.

Deploy scripts ask the gate about the same pinned commits again and again. Once the route has
answered one (and cached it: app.services.gating.GateCache), ``HfvetAPI`` (app.api.asgi) has this
module send that answer itself, in front of FastAPI's middleware and routing, while the store is
unchanged, or changed only in repos the answer never read (GateCache.lookup and restamp decide that;
this module only asks the store): the same status, headers and bytes as the route (``gate_response``),
counted in the same metric. The caller is checked as the route checks it: a token that is sent must be
live at this very request (app.db.tokens.LIVE, asked with the store's version in one statement), and
HFVET_READ_AUTH needs one.
Everything else goes on to FastAPI untouched: a request with a body (the body limit applies there),
a token that is not live (the route says why), no token under HFVET_READ_AUTH, a branch, a cache
miss, a store that changed or does not answer, and anything the route would refuse (invalid input
is never in the cache, since only the route fills it, after validating).
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.types import Receive, Scope, Send

from app.api import metrics
from app.api.routes.gate import gate_response
from app.core.ids import is_commit
from app.core.principals import bearer_secret, digest
from app.services.gating import GateResult, cache_key
from app.state import AppState


async def answered(state: AppState | None, scope: Scope, receive: Receive, send: Send) -> bool:
    """Send the cached answer for this GET /gate, counted as the route counts it; False: FastAPI decides."""
    result = None if state is None else await _cached_answer(state, scope)
    if result is None:
        return False
    metrics.gate_answered(result.status)
    await gate_response(result)(scope, receive, send)
    return True


async def _cached_answer(state: AppState, scope: Scope) -> GateResult | None:
    """The cached answer the route would give now, or None when the route has to decide."""
    if scope.get("root_path"):
        return None
    # Parsed as Starlette parses it for the route: the last of repeated parameters counts.
    params = dict(parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True))
    repo, revision = params.get("repo"), params.get("revision")
    if repo is None or revision is None or not is_commit(revision):
        return None
    headers = _headers(scope)
    if b"content-length" in headers or b"transfer-encoding" in headers:
        return None  # a body: BodyLimit (app.api.limits) sees it first
    header = headers.get(b"authorization")
    if header is None and state.settings.read_auth:
        return None  # the route refuses it
    secret = None if header is None else bearer_secret(header.decode("latin-1"))
    if header is not None and secret is None:
        return None  # not a bearer token: the route refuses it
    try:
        version = await _version(state, None if secret is None else digest(secret))
    except Exception:  # noqa: BLE001 - any driver's error: the route asks again and reports it its own way
        return None
    if version is None:
        return None  # the token is not live: the route refuses it
    key = cache_key(repo, revision, state.policy)
    found = state.gate_cache.lookup(key, version)
    if found is None or isinstance(found, GateResult):
        return found
    try:  # the version moved under the answer: does it hold again? (GateCache.restamp decides)
        written = await _written_since(state, found.since)
    except Exception:  # noqa: BLE001 - any driver's error: the route decides and reports it its own way
        return None
    return state.gate_cache.restamp(key, version, found, written)


async def _version(state: AppState, token_digest: str | None) -> tuple[int, int] | None:
    """The store's version now; None if ``token_digest`` is given and is not a live token's."""
    probe = state.version
    if not probe.inline:  # a round trip: shared with the requests asking at the same moment
        version, live = await state.shared_version(token_digest)
    elif token_digest is None:
        return probe()
    else:
        version, live = probe.with_token(token_digest)
    return version if live else None


async def _written_since(state: AppState, version: tuple[int, int]) -> set[str]:
    """The repos written since ``version``: on SQLite asked here, as the version is (~15 us compiled; from a
    thread it held the GIL the loop needed right after each vet); elsewhere one read shared by all asking."""
    if state.version.inline:
        return state.version.written_since(version)
    return await state.shared_written(version)  # one round trip for the requests asking at once


def _headers(scope: Scope) -> dict[bytes, bytes]:
    """The first value of each header, as Starlette's ``headers.get`` reads it for the route."""
    first: dict[bytes, bytes] = {}
    for name, value in scope["headers"]:
        first.setdefault(name, value)
    return first
