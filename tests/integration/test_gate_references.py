"""Referenced repos at the gate, through the fixture hub: an adapter waits for its base model's approval.

A vendor's LoRA adapter on a third party's base model goes to review under the default policy until
that base is vetted and approved; once a reviewer approves the base, the gate approves the adapter's
commit as it was vetted (no re-vet), and a push to the base's branch takes the approval away again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli.main import app
from app.examples.safetensors_writer import TensorSpec, write_safetensors
from app.hubfixture import FixtureHub

ADAPTER = "nvidia/Llama-Tiny-LoRA-Chat"
BASE = "tinyco/tiny-base-1b"  # a third party: `review` until a human approves it
runner = CliRunner()


def build(root: Path) -> None:
    adapter, base = root / ADAPTER, root / BASE
    adapter.mkdir(parents=True)
    (adapter / "adapter_config.json").write_text(json.dumps(
        {"peft_type": "LORA", "base_model_name_or_path": BASE, "r": 8, "target_modules": ["q_proj", "v_proj"]}))
    write_safetensors(adapter / "adapter_model.safetensors", [TensorSpec("lora_A.weight", "F16", (8, 16))])
    base.mkdir(parents=True)
    (base / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 16}))
    write_safetensors(base / "model.safetensors", [TensorSpec("embed.weight", "F16", (16, 16))])


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "hub"
    build(root)
    monkeypatch.setenv("HFVET_DATABASE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    monkeypatch.setenv("HFVET_POLICY", "default")
    with FixtureHub(root) as served:
        monkeypatch.setenv("HF_ENDPOINT", served.url)
        yield root


def vet(repo: str, *args: str) -> tuple[dict[str, object], str]:
    result = runner.invoke(app, ["vet", repo, "--format", "json", *args])
    assert result.exit_code in (0, 1, 3), result.output
    return json.loads(result.stdout), result.stderr


def gate(repo: str, *args: str) -> dict[str, object]:
    return dict(json.loads(runner.invoke(app, ["gate", repo, "--format", "json", *args]).stdout))


def approve(repo: str, sha: str) -> None:
    reviewed = runner.invoke(app, ["review", repo, "--revision", sha, "--approve", "--reason", "read it"])
    assert reviewed.exit_code == 0, reviewed.output


def test_the_adapter_is_approved_once_its_base_is_with_no_re_vet(hub: Path) -> None:
    adapter, _ = vet(ADAPTER)
    assert adapter["verdict"] == "review"
    assert [r["repo"] for r in adapter["references"]] == [BASE]  # type: ignore[attr-defined]
    sha = str(adapter["revision"])
    before = gate(ADAPTER, "--revision", sha)
    assert before["approved"] is False and any("referenced-repo-elsewhere" in r for r in before["reasons"])

    base, _ = vet(BASE)
    assert base["verdict"] == "review"  # vetted, not approved yet: the adapter stays denied
    assert gate(ADAPTER, "--revision", sha)["approved"] is False
    approve(BASE, str(base["revision"]))

    after = gate(ADAPTER, "--revision", sha)
    assert after["approved"] is True and after["verdict"] == "approve"
    assert "referenced repos' approval changed" in str(after["decided_by"])

    (hub / BASE / "README.md").write_text("a new, unvetted commit on the base's main\n")
    assert gate(ADAPTER, "--revision", sha)["approved"] is False  # judged at the head the hub names now


def test_vet_with_references_vets_and_stores_the_base(hub: Path) -> None:
    adapter, err = vet(ADAPTER, "--with-references")
    assert adapter["verdict"] == "review"  # the report printed is the adapter's own
    assert f"reference {BASE}@main: review at " in err
    base_sha = err.split(f"reference {BASE}@main: review at ", 1)[1].split()[0]
    assert gate(BASE, "--revision", base_sha)["verdict"] == "review"  # stored: a reviewer can approve it now
    approve(BASE, base_sha)
    assert gate(ADAPTER, "--revision", str(adapter["revision"]))["approved"] is True


def test_with_references_needs_the_store(hub: Path) -> None:
    result = runner.invoke(app, ["vet", ADAPTER, "--with-references", "--no-store"])
    assert result.exit_code == 2 and "--no-store" in result.stderr


def test_listings_judge_pinned_references_as_the_gate_does(hub: Path) -> None:
    """The dashboard and GET /repos show an adapter on an approved, pinned base as deployable, like the gate."""
    from app.core.policy import load_policy
    from app.services.listing import RepoQuery, list_repos, repo_history
    from app.services.store import open_store
    from app.settings import Settings

    base, _ = vet(BASE)
    base_sha = str(base["revision"])
    config = json.loads((hub / ADAPTER / "adapter_config.json").read_text())
    (hub / ADAPTER / "adapter_config.json").write_text(json.dumps({**config, "revision": base_sha}))
    adapter, _ = vet(ADAPTER)
    sha = str(adapter["revision"])
    settings = Settings()
    policy = load_policy(settings.resolve_policy(settings.policy))
    store = open_store(settings)
    try:
        def deployable() -> list[str]:
            return [i.repo.repo_id for i in list_repos(store, policy, RepoQuery(deployable=True)).items]

        assert ADAPTER not in deployable()  # the base is vetted but waits for review
        approve(BASE, base_sha)
        assert gate(ADAPTER, "--revision", sha)["approved"] is True
        assert ADAPTER in deployable()
        history = repo_history(store, policy, ADAPTER)
        assert history is not None and history.commits[0][1][0].effective.approved
    finally:
        store.close()


def test_listings_do_not_ask_the_hub_for_a_referenced_branch(hub: Path) -> None:
    """A base named by branch is resolved by the gate only; a listing fails closed on it (never the other way)."""
    from app.core.policy import load_policy
    from app.services.listing import RepoQuery, list_repos
    from app.services.store import open_store
    from app.settings import Settings

    base, _ = vet(BASE)
    approve(BASE, str(base["revision"]))
    adapter, _ = vet(ADAPTER)
    assert gate(ADAPTER, "--revision", str(adapter["revision"]))["approved"] is True
    settings = Settings()
    store = open_store(settings)
    try:
        page = list_repos(store, load_policy(settings.resolve_policy(settings.policy)), RepoQuery(deployable=True))
        assert ADAPTER not in [i.repo.repo_id for i in page.items]
        assert BASE in [i.repo.repo_id for i in page.items]
    finally:
        store.close()
