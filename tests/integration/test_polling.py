"""poll_once, the webhook fallback: a moved head of an approved repo queues one vet; nothing else does."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.core.policy import LoadedPolicy
from app.db.models import ReportRow, VetRow
from app.db.session import Store
from app.examples import build_examples
from app.hubfixture import FixtureHub
from app.jobs.inprocess import InProcessQueue
from app.server import hub_resolver
from app.services.gating import GateError, gate
from app.services.outcomes import Resolver
from app.services.policies import active_policy
from app.services.polling import PollResult, poll_once
from app.services.store import open_store
from app.services.vetting import record, vet_remote
from app.settings import Settings

NVIDIA = "nvidia/DeepSeek-V4-Flash-NVFP4"
CANADA = "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP"


@dataclass
class World:
    root: Path
    settings: Settings
    store: Store
    queue: InProcessQueue  # never started: what poll_once queues stays queued for the test to see
    policy: LoadedPolicy

    def vet(self, repo: str, revision: str = "main") -> str:
        report = vet_remote(repo, settings=self.settings, revision=revision, policy_path=self.settings.policy)
        record(self.store, report, requested_revision=revision, actor="test")
        return report.revision or ""

    def poll(self, resolve: Resolver | None = None) -> PollResult:
        return poll_once(store=self.store, jobs=self.queue, policy=self.policy,
                         resolve=resolve or hub_resolver(self.settings))

    def count(self, row: type[VetRow] | type[ReportRow]) -> int:
        with self.store.session() as session:
            return session.execute(select(func.count()).select_from(row)).scalar_one()


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    root = tmp_path / "hub"
    build_examples(root)
    monkeypatch.setenv("HFVET_DATABASE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    with FixtureHub(root) as served:
        monkeypatch.setenv("HF_ENDPOINT", served.url)
        settings = Settings()
        store = open_store(settings)
        policy = active_policy(settings)
        queue = InProcessQueue(store, lambda job: pytest.fail("poll_once must not vet"), (policy.name, policy.sha256))
        yield World(root, settings, store, queue, policy)
        store.close()


def test_a_moved_head_queues_one_vet_of_the_new_commit(world: World) -> None:
    approved = world.vet(NVIDIA)
    (world.root / NVIDIA / "README.md").write_text("a new commit on main\n")
    result = world.poll()
    [job] = result.queued
    assert job.sha != approved and (job.repo, job.requested_revision, job.requested_by) == (NVIDIA, "main", "poller")
    assert job.sha == hub_resolver(world.settings)(NVIDIA, "main")
    again = world.poll()  # the head has not been vetted yet: the next pass joins the queued job
    assert [j.id for j in again.queued] == [job.id] and world.count(VetRow) == 1


def test_an_unchanged_head_queues_nothing(world: World) -> None:
    world.vet(NVIDIA)
    result = world.poll()
    assert (result.checked, result.queued, result.failed) == (1, [], [])
    assert world.count(VetRow) == 0


def test_a_repo_without_an_approved_commit_is_not_polled(world: World) -> None:
    world.vet(CANADA)  # rejected: there is no deployed commit to keep current
    (world.root / CANADA / "README.md").write_text("moved\n")
    assert world.poll().checked == 0 and world.count(VetRow) == 0


def test_a_branch_vetted_by_name_is_watched_beside_main(world: World) -> None:
    repo = world.root / NVIDIA
    shutil.copytree(repo, repo / ".revisions" / "dev", ignore=shutil.ignore_patterns(".revisions", ".hub.json"))
    world.vet(NVIDIA)
    world.vet(NVIDIA, revision="dev")
    world.vet(NVIDIA, revision=world.vet(NVIDIA))  # an exact sha is not a branch to watch
    (repo / ".revisions" / "dev" / "README.md").write_text("dev moved\n")
    result = world.poll()
    assert result.checked == 2
    dev_head = hub_resolver(world.settings)(NVIDIA, "dev")
    assert [(j.requested_revision, j.sha) for j in result.queued] == [("dev", dev_head)]


def test_an_unreachable_hub_queues_nothing_says_so_and_never_approves(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    approved = world.vet(NVIDIA)
    (world.root / NVIDIA / "README.md").write_text("moved while the hub is down\n")
    reports = world.count(ReportRow)
    down = hub_resolver(Settings(_env_file=None, HF_ENDPOINT="http://127.0.0.1:9"))  # type: ignore[call-arg]
    with caplog.at_level(logging.WARNING, logger="app.services.polling"):
        result = world.poll(resolve=down)
    assert result.queued == [] and result.checked == 0
    assert len(result.failed) == 1 and result.failed[0].startswith(f"{NVIDIA}@main")
    assert f"cannot resolve {NVIDIA}@main, nothing queued" in caplog.text
    assert world.count(VetRow) == 0 and world.count(ReportRow) == reports
    with pytest.raises(GateError, match="not approved"):
        gate(NVIDIA, "main", store=world.store, policy=world.policy, resolve=down)
    assert gate(NVIDIA, approved, store=world.store, policy=world.policy, resolve=down).approved
