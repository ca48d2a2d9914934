"""Errors of the hub source, and the translation from huggingface_hub / httpx2 exceptions.

Every class is a ``SourceError``, so the pipeline fails closed on any of them; callers that
want to tell the user *why* (CLI exit messages, API status codes) catch the leaves.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

import httpx2
from huggingface_hub.errors import (
    DisabledRepoError,
    GatedRepoError,
    HfHubHTTPError,
    HFValidationError,
    OfflineModeIsEnabled,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from app.core.ids import not_found_hint
from app.core.ports import SourceError


class HubError(SourceError):
    """The hub could not give us what we asked for."""


class HubRepoNotFound(HubError):
    """No such repo, or it is private and the token cannot see it (the Hub does not say which)."""


class HubRevisionNotFound(HubError):
    """The repo exists but the branch, tag or commit does not."""


class HubAccessDenied(HubError):
    """Gated, disabled, or the token is not authorised for this content."""


class HubUnreachable(HubError):
    """Network failure, timeout, offline mode, or the hub kept failing (429/5xx) past the retry budget."""


class HubTimeout(HubUnreachable):
    """A deadline ran out: one hub call's own budget, or the whole vet's (``--timeout``)."""


class HubStalled(HubTimeout):
    """The hub sent nothing (or a trickle) for a whole read timeout, again on the one retry; the other
    calls of the same vet then fail at once instead of waiting for it too."""


class HubProtocolError(HubError):
    """The hub answered, but not what the protocol promises (ignored Range, wrong Content-Range,
    short body, a commit other than the pinned one...). Never trusted as data."""


ENDPOINT_SETTING = "HF_ENDPOINT"  # the setting that names the hub (app.settings.Settings.hf_endpoint)


@contextmanager
def naming_the_hub(endpoint: str) -> Iterator[None]:
    """Every ``HubError`` raised inside, re-raised (same class) naming the hub it asked and the setting that
    changes it: on an offline machine or behind a mirror, "cannot reach the hub" alone leaves one guessing."""
    try:
        yield
    except HubError as exc:
        raise named(exc, endpoint) from exc


def named(exc: HubError, endpoint: str) -> HubError:
    """``exc``, or a copy of it naming ``endpoint`` and ``HF_ENDPOINT`` if it does not yet."""
    if ENDPOINT_SETTING in str(exc):
        return exc
    return type(exc)(f"{exc} [hub {endpoint}; {ENDPOINT_SETTING} sets another]")


def unresolved_host(exc: BaseException) -> bool:
    """Whether a transport error is a failed name resolution (no DNS, or no such host): retrying it in the
    next second does not help, so the caller fails at once (an offline machine without HF_ENDPOINT)."""
    seen: BaseException | None = exc
    for _ in range(8):  # the chain is httpx2 -> httpcore2 -> socket; bounded in case of a cycle
        if seen is None:
            return False
        if isinstance(seen, socket.gaierror) or any(isinstance(a, socket.gaierror) for a in seen.args):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def translate(exc: Exception, repo_id: str, revision: str) -> HubError:
    """The one mapping from client exceptions to ours (order matters: subclasses first)."""
    where = f"{repo_id}@{revision}"
    if isinstance(exc, GatedRepoError):
        return HubAccessDenied(f"{repo_id} is gated; the token has not been granted access ({_status(exc)})")
    if isinstance(exc, DisabledRepoError):
        return HubAccessDenied(f"{repo_id} is disabled on the hub")
    if isinstance(exc, RepositoryNotFoundError):
        return HubRepoNotFound(f"{repo_id} not found (or private and not visible to the token)")
    if isinstance(exc, RevisionNotFoundError):
        return HubRevisionNotFound(f"revision {revision!r} not found in {repo_id}{not_found_hint(revision)}")
    if isinstance(exc, RemoteEntryNotFoundError):
        return HubProtocolError(f"{where}: a file listed in the manifest is missing on the hub")
    if isinstance(exc, HfHubHTTPError):
        status = _status(exc)
        if status in (401, 403):
            return HubAccessDenied(f"{where}: access denied (HTTP {status})")
        return HubError(f"{where}: hub error HTTP {status}: {_first_line(exc)}")
    if isinstance(exc, OfflineModeIsEnabled):
        return HubUnreachable("offline mode is enabled (HF_HUB_OFFLINE): the hub cannot be reached")
    if isinstance(exc, HFValidationError):
        return HubError(f"invalid repo id or revision {where!r}: {exc}")
    if isinstance(exc, httpx2.TransportError):
        if unresolved_host(exc):
            return HubUnreachable(f"cannot reach the hub for {where}: its host name does not resolve "
                                  f"({type(exc).__name__}: {exc})")
        return HubUnreachable(f"cannot reach the hub for {where}: {type(exc).__name__}: {exc}")
    return HubError(f"{where}: {type(exc).__name__}: {exc}")


def _status(exc: HfHubHTTPError) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
