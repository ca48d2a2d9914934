"""An API process and two `hfvet worker` processes on one PostgreSQL database (issue 15's tests)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from tests.integration.api.conftest import Hub, prepare_store
from tests.integration.api.live import LiveServer
from tests.integration.workers.cluster import (
    Cluster,
    Worker,
    cluster_env,
    reports_by_repo,
    scalar,
    vet,
    wait_all,
    wait_jobs_closed,
)

pytestmark = pytest.mark.postgres


@contextmanager
def started(hub: Hub, pg_store: str, home: Path, **extra: str) -> Iterator[tuple[Cluster, str]]:
    tokens = prepare_store(pg_store)
    env = cluster_env(hub.url, pg_store, home, **extra)
    running = Cluster(LiveServer(env, home / "api.log"))
    try:
        running.url = running.api.start()
        running.workers = [Worker(env, home / f"worker-{i}.log").start() for i in range(2)]
        yield running, tokens["vetter"]
    finally:
        running.stop()


@pytest.fixture(scope="module")
def cluster(fleet_hub: tuple[Hub, list[str]], shared_store: str,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Cluster, str]]:
    """One API and two workers for the module's tests; each test vets repos no other one touches."""
    with started(fleet_hub[0], shared_store, tmp_path_factory.mktemp("cluster")) as running:
        yield running


def own(store_url: str, repos: list[str]) -> dict[str, int]:
    """Reports per repo, for ``repos`` only."""
    return {repo: n for repo, n in reports_by_repo(store_url).items() if repo in repos}


def test_a_hundred_vets_complete_exactly_once_each(cluster: tuple[Cluster, str], fleet: list[str],
                                                    shared_store: str) -> None:
    running, token = cluster
    repos = fleet[:100]
    job_ids = [vet(running.url, token, repo) for repo in repos]
    jobs = wait_all(running.url, job_ids, timeout=90)
    assert {job["status"] for job in jobs.values()} == {"done"}
    assert own(shared_store, repos) == dict.fromkeys(repos, 1)
    assert scalar(shared_store, "SELECT count(*) FROM vets WHERE repo_id = ANY(:r)", r=repos) == len(repos)
    wait_jobs_closed(shared_store, repos, timeout=30)  # a done vet's job may not be marked succeeded yet
    ran = scalar(shared_store, "SELECT count(*) FROM procrastinate.procrastinate_jobs WHERE task_name = 'hfvet.vet' "
                               "AND status = 'succeeded' AND args->>'repo' = ANY(:r)", r=repos)
    assert ran == len(repos)  # one procrastinate job per (repo, sha, policy sha)


def _worker_running(running: Cluster, job_id: str, timeout: float = 30) -> Worker:
    """The worker whose log says it claimed ``job_id`` (each attempt logs `vet <id> of ...: attempt N`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for worker in running.workers:
            if f"vet {job_id} of" in worker.log.read_text():
                return worker
        time.sleep(0.05)
    raise AssertionError(f"no worker took job {job_id} in {timeout}s")


def test_a_worker_killed_mid_vet_leaves_the_job_to_the_other(cluster: tuple[Cluster, str], fleet: list[str],
                                                             hub: Hub, shared_store: str) -> None:
    running, token = cluster
    repo = fleet[100]
    hub.app.delay = 1.5  # every file read held back: the vet takes several seconds
    reads = hub.app.file_reads
    job_id = vet(running.url, token, repo)
    holder = _worker_running(running, job_id)
    while hub.app.file_reads == reads:  # the vet is reading the repo now
        time.sleep(0.05)
    assert vet(running.url, token, repo) == job_id  # a duplicate request attaches to the running job
    holder.kill()
    hub.app.delay = 0.0
    other = next(w for w in running.workers if w is not holder)
    try:
        job = wait_all(running.url, [job_id], timeout=60)[job_id]
        assert job["status"] == "done" and job["attempts"] == 2 and job["error"] is None
        assert f"vet {job_id} of {repo}" in other.log.read_text()  # the survivor finished it
        assert own(shared_store, [repo]) == {repo: 1}
    finally:
        holder.start()  # two workers again for the next test


def test_dropped_database_connections_lose_and_duplicate_no_verdict(cluster: tuple[Cluster, str], fleet: list[str],
                                                                     hub: Hub, shared_store: str) -> None:
    running, token = cluster
    hub.app.delay = 0.2
    repos = fleet[101:131]
    job_ids = [vet(running.url, token, repo) for repo in repos]
    database = shared_store.rsplit("/", 1)[1]
    engine = create_engine(shared_store)
    try:
        for _ in range(2):  # twice, mid-run: every worker and API session is cut off
            time.sleep(2)
            with engine.connect() as conn:
                cut = conn.execute(text("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                        "WHERE datname = :db AND pid <> pg_backend_pid()"), {"db": database})
                assert cut.scalar_one() > 0
    finally:
        engine.dispose()
    hub.app.delay = 0.0
    jobs = wait_all(running.url, job_ids, timeout=90)
    assert {job["status"] for job in jobs.values()} == {"done"}
    assert own(shared_store, repos) == dict.fromkeys(repos, 1)
    assert all(w.proc is not None and w.proc.poll() is None for w in running.workers)  # the workers lived on


def test_the_periodic_pass_vets_a_moved_head_of_an_approved_repo(hub: Hub, fleet: list[str], pg_store: str,
                                                                  tmp_path: Path) -> None:
    repo = fleet[-1]
    with started(hub, pg_store, tmp_path, HFVET_REVET_CRON="* * * * * */2") as (running, token):  # every 2 s
        first = wait_all(running.url, [vet(running.url, token, repo)], timeout=60)
        assert next(iter(first.values()))["status"] == "done"
        readme = hub.root / repo / "README.md"
        readme.write_text(readme.read_text() + "\nA push.\n")  # the fixture hub: a new commit on main
        deadline = time.monotonic() + 60
        while scalar(pg_store, "SELECT count(*) FROM vets WHERE requested_by = 'poller' AND status = 'done'") == 0:
            assert time.monotonic() < deadline, "the moved head was not vetted"
            time.sleep(0.25)
    assert reports_by_repo(pg_store) == {repo: 2}  # the first commit's report and the new head's
    assert scalar(pg_store, "SELECT count(DISTINCT sha) FROM vets") == 2
