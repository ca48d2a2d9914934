"""`hfvet serve`: the API with its in-process job runner (SQLite migrations apply on start)."""

from __future__ import annotations

import ipaddress
import socket
import sys
from contextlib import ExitStack
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import typer

from app.cli import exit_codes
from app.cli.listen import listen
from app.cli.options import command_examples
from app.setting_checks import SettingsError
from app.settings import Settings

# How long the event loop may wait for the GIL while one of the server's threads runs Python (storing a
# report, answering POST /vet): CPython's default is 5 ms, a quarter of the gate's p99 budget, and the soak
# found those threads holding it ~60 ms a second while vets ran (docs/benchmarks.md §26c).
LOOP_GIL_WAIT_SECONDS = 0.001

if TYPE_CHECKING:
    from fastapi import FastAPI


@command_examples(
    ('the API and the dashboard at http://127.0.0.1:8000/ui/', 'hfvet serve'),
    ('another port, against a mirror', 'HF_ENDPOINT=https://hub.example.com hfvet serve --port 8001'),
    ("on every interface (needs a live token: hfvet token create --role admin --name ops)",
     "hfvet serve --host 0.0.0.0"),
    ("the Hub endpoint on a port of its own too (clients: HF_ENDPOINT=http://HOST:8001)",
     "hfvet serve --hub-port 8001"),
)
def serve(
    host: Annotated[
        str, typer.Option("--host", show_default=False,
                          help="Address to bind (default 127.0.0.1; any other address needs a live API token).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port (in use: exit 2, naming it).")] = 8000,
    hub_port: Annotated[
        int | None, typer.Option("--hub-port", min=0, max=65535, show_default=False,
                                 help="Also answer as the Hub endpoint alone on this port, at its root "
                                      "(HF_ENDPOINT=http://HOST:PORT); it is always at /hub on --port too.")
    ] = None,
    access_log: Annotated[
        bool, typer.Option("--access-log/--no-access-log", help="Log one line per request.")
    ] = True,
) -> None:
    """Serve the HTTP API (POST /vet, GET /gate, POST /webhooks/huggingface, ...) and the dashboard at /ui/,
    and run vets.

    The hub is HF_ENDPOINT (default https://huggingface.co; a mirror or the fixture hub of `hfvet hub serve`),
    with HF_TOKEN; every hub error names the hub it asked. Offline, set HF_ENDPOINT to a hub you can reach.

    Vets run in child processes at a lower CPU priority (HFVET_JOB_ISOLATION, HFVET_JOB_NICE), or, with
    HFVET_QUEUE=procrastinate, in `hfvet worker`s.

    The Hub endpoint at /hub (and on --hub-port) serves only approved commits' files, verified against their
    manifests, to any huggingface_hub client pointed at it with HF_ENDPOINT (docs/endpoint.md). Its clients
    send an hfvet token as HF_TOKEN; HFVET_READ_AUTH=1 requires one (for the API's reads too).
    HFVET_HUB_BRANCH_MOVED, HFVET_HUB_VET_UNVETTED, HFVET_HUB_CACHE_DIR and HFVET_HUB_CACHE_MAX_BYTES
    set what it does with a moved branch, an unvetted repo, and verified blobs.

    Webhooks need HFVET_WEBHOOK_SECRET; HFVET_POLL_SECONDS=N re-checks approved repos' branches every N s.

    A non-loopback --host needs a live (unrevoked, unexpired) token at startup; later, every write needs one.

    X-Forwarded-For/-Proto are believed only from HFVET_FORWARDED_ALLOW_IPS (default 127.0.0.1,::1: a proxy
    on this host; empty: nobody); docs/deploy.md.

    On SIGTERM, requests in flight get HFVET_SHUTDOWN_TIMEOUT seconds; gate answers still resolving
    referenced repos' branches on the hub stop at once.

    It starts by printing the hub it vets from (HF_ENDPOINT), the store (HFVET_DATABASE_URL, password
    masked), the dashboard's URL and the Hub endpoint's URLs and settings. Exit 2: a bad setting, a store or
    blob cache folder it cannot open, an attestation key (HFVET_ATTESTATION_KEY) it cannot sign with, or the
    port in use (pick another with --port or --hub-port).
    """
    settings = Settings()  # first: a bad setting refuses before the server stack is imported

    from app.api.header_limits import header_limited
    from app.server import create_app

    try:
        proxies = forwarded_allow_ips(settings.forwarded_allow_ips)
    except ValueError as exc:
        exit_codes.fail(str(exc))
    # The store is opened here first, for every host: one it cannot open is one line and exit 2, not the
    # traceback of a failed startup and uvicorn's exit 3.
    has_tokens = exit_codes.guard(lambda: _has_tokens(settings))
    exit_codes.guard(lambda: _blob_cache_usable(settings))
    signs = exit_codes.guard(lambda: _attestation_key_usable(settings))
    if hub_port is not None and hub_port == port and port != 0:
        exit_codes.fail(f"--hub-port {hub_port} is --port too: give the Hub endpoint a port of its own, or "
                        "leave --hub-port out (the endpoint is always at /hub on --port)")
    if not is_loopback(host) and not has_tokens:
        exit_codes.fail(f"refusing to listen on {host} while no live API token exists (none, or all revoked or "
                        "expired): "
                        "create one with `hfvet token create --role admin --name NAME` first")
    with ExitStack() as stack:  # bound before the app is built: a port in use is one line, not uvicorn's exit 3
        sock = stack.enter_context(listen(host, port))
        port = sock.getsockname()[1]
        sockets = [sock]
        if hub_port is not None:
            sockets.append(stack.enter_context(listen(host, hub_port, flag="--hub-port")))
            hub_port = sockets[1].getsockname()[1]
        sys.setswitchinterval(LOOP_GIL_WAIT_SECONDS)
        api = create_app(settings, hub_port=hub_port)
        for line in startup_lines(settings, host, port, hub_port, signs=signs, policy=_policy_named(settings)):
            typer.echo(line, err=True)
        run_until_stopped(api, sockets=sockets, host=host, port=port, log_level="info", access_log=access_log,
                          http=header_limited(settings.max_header_bytes, settings.max_headers),
                          proxy_headers=True, forwarded_allow_ips=proxies,
                          timeout_graceful_shutdown=settings.shutdown_timeout)


def _policy_named(settings: Settings) -> str:
    """The active policy as the start lines name it (loaded as the app will load it; parsed once, cached)."""
    from app.services.policies import active_policy

    policy = exit_codes.guard(lambda: active_policy(settings))
    return f"{policy.name} (sha256 {policy.sha256[:12]})"


def startup_lines(settings: Settings, host: str, port: int, hub_port: int | None = None,
                  signs: str | None = None, policy: str | None = None) -> list[str]:
    """What this server uses and where to find it: the hub, the store (password masked), the active policy
    (``policy``: its name and sha256), the dashboard, the Hub endpoint clients point HF_ENDPOINT at, and
    whether it signs attestations (``signs``: the key id)."""
    from app.redact import mask_url
    from app.sources.hub import endpoint_of

    shown = f"[{host}]" if ":" in host else host
    origin = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else shown}:{port}"  # noqa: S104 - a wildcard
    hub = endpoint_of(settings.hf_endpoint)
    hub_from = "HF_ENDPOINT" if settings.hf_endpoint else "the default; set HF_ENDPOINT for a mirror"
    return [f"hfvet serve: hub {hub} ({hub_from})",
            f"hfvet serve: store {mask_url(settings.store_url())} (HFVET_DATABASE_URL)",
            *([f"hfvet serve: policy {policy} (HFVET_POLICY; GET /policy)"] if policy else []),
            f"hfvet serve: dashboard {origin}/ui/ , API {origin}/ (docs/api.md)",
            f"hfvet serve: attestations signed with key {signs[:16]} (HFVET_ATTESTATION_KEY; public key at "
            f"{origin}/attestations/key)" if signs else
            "hfvet serve: attestations: none signed (HFVET_ATTESTATION_KEY unset; docs/provenance.md)",
            f"hfvet serve: Hub endpoint HF_ENDPOINT={origin}/hub"
            + ("" if hub_port is None else f" or HF_ENDPOINT={origin.rsplit(':', 1)[0]}:{hub_port}")
            + " (docs/endpoint.md)",
            f"hfvet serve: Hub endpoint {endpoint_settings(settings)}"]


def endpoint_settings(settings: Settings) -> str:
    """What the Hub endpoint does, in one line: read auth, moved branches, unvetted repos, the blob cache."""
    from app.cli.progress import human_bytes

    cache = (f"blob cache {settings.hub_cache_dir} (max {human_bytes(int(settings.hub_cache_max_bytes))})"
             if settings.hub_cache_dir else "no blob cache (HFVET_HUB_CACHE_DIR)")
    return (f"reads {'need a token' if settings.read_auth else 'open'} (HFVET_READ_AUTH), moved branch: "
            f"{settings.hub_branch_moved} (HFVET_HUB_BRANCH_MOVED), unvetted: "
            f"{'vetted on demand' if settings.hub_vet_unvetted else 'refused'} (HFVET_HUB_VET_UNVETTED), {cache}")


def run_until_stopped(api: FastAPI, sockets: list[socket.socket] | None = None, **config: Any) -> None:
    """uvicorn.run, with SIGTERM/SIGINT also telling gate answers in flight to stop resolving (app.server).

    uvicorn's graceful shutdown waits for requests in flight; one resolving thousands of references
    would hold it for minutes, and the worker thread would keep the process alive after it.
    """
    import uvicorn

    from app.server import stop_answers

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            stop_answers(api)
            super().handle_exit(sig, frame)

    Server(uvicorn.Config(api, **config)).run(sockets=sockets)


def forwarded_allow_ips(value: str) -> list[str]:
    """HFVET_FORWARDED_ALLOW_IPS as uvicorn takes it; ValueError, naming the setting, for an entry that is
    no address, network or `*` (uvicorn would keep it as a name no peer ever has, silently)."""
    entries = [entry.strip() for entry in value.split(",") if entry.strip()]
    for entry in entries:
        if entry != "*" and not _is_address_or_network(entry):
            raise ValueError(f"HFVET_FORWARDED_ALLOW_IPS: {entry[:100]!r} is not an IP address, a network "
                             "(10.0.0.0/8, no host bits) or `*`")
    return entries


def _is_address_or_network(entry: str) -> bool:
    try:
        _ = ipaddress.ip_network(entry) if "/" in entry else ipaddress.ip_address(entry)  # as uvicorn reads it
    except ValueError:
        return False
    return True


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name other than localhost may resolve anywhere


def _attestation_key_usable(settings: Settings) -> str | None:
    """HFVET_ATTESTATION_KEY, when set, can sign: its key id; else one line naming it (not a failed startup)."""
    if settings.attestation_key is None and settings.attestation_key_expires is None:
        return None
    from app.cli.keycheck import warn_if_key_exposed
    from app.services.signing_keys import configured_key

    key = configured_key(settings)
    warn_if_key_exposed(settings)
    return None if key is None else key.key_id


def _blob_cache_usable(settings: Settings) -> None:
    """The blob cache's folder can be made and written, else one line naming it (not a failed startup)."""
    if settings.hub_cache_dir is None:
        return
    from app.services.blob_cache import BlobCache

    try:
        BlobCache(settings.hub_cache_dir, int(settings.hub_cache_max_bytes)).writer(("sha256", "0" * 64), 0).abort()
    except OSError as exc:
        raise SettingsError([f"HFVET_HUB_CACHE_DIR: cannot use {settings.hub_cache_dir} for the blob cache: "
                             f"{exc.strerror or exc}"]) from exc


def _has_tokens(settings: Settings) -> bool:
    from app.services import tokens  # on use: a bad setting refuses before the database layer loads
    from app.services.store import open_store

    store = open_store(settings)
    try:
        return tokens.any_live(store)
    finally:
        store.close()
