"""`hfvet worker`: run vets from the PostgreSQL queue (procrastinate), beside any number of others."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from app.cli import exit_codes
from app.cli.options import command_examples
from app.settings import Settings

if TYPE_CHECKING:
    import procrastinate

    from app.db.session import Store

QUEUES = ["vets", "revet"]  # app.jobs.connection.VET_QUEUE, REVET_QUEUE (kept light: --help imports nothing)


@command_examples(
    ("run queued vets (HFVET_QUEUE=procrastinate, a PostgreSQL store)",
     "HFVET_DATABASE_URL=postgresql+psycopg://hfvet@db/hfvet hfvet worker --concurrency 4"),
    ('with Prometheus metrics on :9100', 'hfvet worker --metrics-port 9100'),
)
def worker(
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, max=64, help="Vets this worker runs at once.")
    ] = 2,
    metrics_port: Annotated[
        int, typer.Option("--metrics-port", min=0, max=65535, help="Serve Prometheus /metrics on this port (0: off).")
    ] = 0,
) -> None:
    """Run vets queued by the API replicas (HFVET_QUEUE=procrastinate, a PostgreSQL HFVET_DATABASE_URL).

    Start as many workers on as many machines as the hub and the database allow (docs/deploy.md).
    Jobs of a worker that dies are taken over by the others; SIGTERM finishes running vets first.
    The periodic re-vet pass runs on HFVET_REVET_CRON (default every 15 minutes). The worker runs at
    HFVET_JOB_NICE (default 10) above its start priority, so an API on the same host answers first.
    """
    import asyncio
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("app").setLevel(logging.INFO)  # hfvet's own lines: attempts, retries, sweeps, re-vets
    import os

    settings = Settings()
    app, store = exit_codes.guard(lambda: _prepare(settings))
    if settings.job_nice:
        os.nice(settings.job_nice)  # scans yield the CPU to an API on the same host (HFVET_JOB_NICE)
    if metrics_port:
        from prometheus_client import start_http_server

        from app.cli.listen import cannot_listen

        try:
            start_http_server(metrics_port)
        except OSError as exc:
            cannot_listen(exc, "0.0.0.0", metrics_port, flag="--metrics-port")  # noqa: S104 - where it binds
    typer.echo(f"hfvet worker: {concurrency} at once on queues {', '.join(QUEUES)} (nice {os.nice(0)})", err=True)
    try:
        asyncio.run(_run(app, store, concurrency, settings.worker_heartbeat_seconds))
    finally:
        store.close()


def _prepare(settings: Settings) -> tuple[procrastinate.App, Store]:
    """The procrastinate app with hfvet's tasks, on the store the API replicas use."""
    from app.api import metrics
    from app.cli.keycheck import warn_if_key_exposed
    from app.core.scanners import all_scanners
    from app.jobs.connection import working_app
    from app.jobs.tasks import register
    from app.server import hub_resolver
    from app.services.policies import active_policy
    from app.services.store import open_store
    from app.services.vetting import job_vet

    policy = active_policy(settings)  # a bad policy stops the worker before it takes a job
    app = working_app(settings.store_url())
    store = open_store(settings, signing=True)
    warn_if_key_exposed(settings)

    vet = job_vet(settings, store)
    register(app, store=store, vet=metrics.observed(vet), policy=policy, resolve=hub_resolver(settings),
             scanners={s.name: s.version() for s in all_scanners()}, revet_cron=settings.revet_cron)
    return app, store


async def _run(app: procrastinate.App, store: Store, concurrency: int, heartbeat: float) -> None:
    import asyncio

    from app.jobs.runloop import work_until_stopped
    from app.jobs.sweep import STALE_HEARTBEATS, sweep_forever

    async with app.open_async():
        sweeper = asyncio.create_task(sweep_forever(app, store, heartbeat))
        try:
            await work_until_stopped(app, queues=QUEUES, concurrency=concurrency, update_heartbeat_interval=heartbeat,
                                     stalled_worker_timeout=heartbeat * STALE_HEARTBEATS,
                                     fetch_job_polling_interval=heartbeat)
        finally:
            sweeper.cancel()
