"""create_app(settings): the HTTP API over the store, a job queue (in process, or procrastinate) and the hub."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial

from fastapi import FastAPI

from app import __version__, web
from app.api import errors, metrics
from app.api.asgi import HfvetAPI
from app.api.limits import BodyLimit
from app.api.main import api_router
from app.api.ratelimit import RateLimit, buckets_from
from app.db.version import VersionProbe
from app.jobs.inprocess import InProcessQueue, VetFn
from app.jobs.interface import JobQueue
from app.jobs.pgqueue import ProcrastinateQueue
from app.jobs.poller import Poller
from app.jobs.processes import ProcessVets
from app.services.blob_cache import BlobCache
from app.services.hub_resolutions import SharedResolver
from app.services.outcomes import Resolver
from app.services.policies import active_policy
from app.services.polling import poll_once
from app.services.store import open_store
from app.services.vetting import job_vet
from app.settings import Settings
from app.sources.upstream import Upstream
from app.state import AppState


def create_app(settings: Settings | None = None, *, resolve: Resolver | None = None,
               hub_port: int | None = None) -> FastAPI:
    """The server's app; ``hub_port``: the port whose requests all go to the Hub endpoint (app.api.asgi)."""
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state = build_state(settings, resolve)
        app.state.hfvet = state
        state.jobs.start()
        poller = Poller(settings.poll_seconds, partial(poll_once, store=state.store, jobs=state.jobs,
                                                       policy=state.policy, resolve=state.resolve))
        poller.start()
        try:
            yield
        finally:
            poller.stop()  # before the queue and the store it uses go away
            state.jobs.stop()
            if state.vet_processes is not None:
                state.vet_processes.close()
            state.version.close()
            state.store.close()
            if state.upstream is not None:
                await state.upstream.aclose()

    app = HfvetAPI(title="hfvet", version=__version__, lifespan=lifespan,
                  description="Vet Hugging Face checkpoints; gate deploys on stored, policy-driven verdicts.")
    app.hub_port = hub_port
    errors.install(app)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes, max_json_depth=settings.max_json_depth,
                       max_header_bytes=settings.max_header_bytes, max_headers=settings.max_headers)
    app.add_middleware(RateLimit, buckets=buckets_from(settings.rate_limit_burst, settings.rate_limit_per_second))
    app.include_router(api_router)
    web.install(app, settings)  # the dashboard's pages under /ui/, after the API's routes
    return app


def build_state(settings: Settings, resolve: Resolver | None = None) -> AppState:
    policy = active_policy(settings)  # a bad policy stops the server before it listens
    store = open_store(settings, signing=True)

    vet = job_vet(settings, store)
    jobs: JobQueue
    processes = None
    if settings.queue == "procrastinate":  # `hfvet worker`s run the vets (docs/deploy.md)
        jobs = ProcrastinateQueue(store, (policy.name, policy.sha256))
    else:
        run: VetFn = vet
        if settings.job_isolation == "process":
            run = processes = ProcessVets(settings, processes=settings.job_workers, nice=settings.job_nice)
        jobs = InProcessQueue(store, metrics.observed(run), (policy.name, policy.sha256), workers=settings.job_workers)
    resolve = resolve or hub_resolver(settings)
    shared = SharedResolver(resolve, store, ttl=settings.hub_resolve_ttl, failure_ttl=settings.hub_resolve_failure_ttl)
    return AppState(settings, store, jobs, policy, resolve, VersionProbe(store.engine), vet_processes=processes,
                    gate_resolve=shared, upstream=upstream(settings), blob_cache=blob_cache(settings))


def upstream(settings: Settings) -> Upstream:
    """The Hub endpoint's source: the server's own hub and token (never a client's)."""
    from app.sources.hub import HubClient

    hub = HubClient.from_settings(settings)
    return Upstream(hub.endpoint, hub.token if isinstance(hub.token, str) else None)


def blob_cache(settings: Settings) -> BlobCache | None:
    if settings.hub_cache_dir is None:
        return None
    return BlobCache(settings.hub_cache_dir, int(settings.hub_cache_max_bytes))


def stop_answers(app: FastAPI) -> None:
    """The server is stopping (SIGTERM): gate answers still resolving references end now (app.cli.serve)."""
    state: AppState | None = getattr(app.state, "hfvet", None)
    if state is not None:
        state.stopping.set()


def hub_resolver(settings: Settings) -> Resolver:
    from app.sources.hub import HubClient, resolve_revision

    hub = HubClient.from_settings(settings)
    return lambda repo, revision: resolve_revision(repo, revision, hub)
