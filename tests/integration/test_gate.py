"""The deploy gate end to end: vet through the fixture hub, store, then `hfvet gate` as a deploy script would."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli.main import app
from app.examples import build_examples
from app.hubfixture import FixtureHub

NVIDIA = "nvidia/DeepSeek-V4-Flash-NVFP4"
CANADA = "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP"
runner = CliRunner()


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "hub"
    build_examples(root)
    monkeypatch.setenv("HFVET_DATABASE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    with FixtureHub(root) as served:
        monkeypatch.setenv("HF_ENDPOINT", served.url)
        yield root


def vet(repo: str, *args: str) -> None:
    result = runner.invoke(app, ["vet", repo, "--format", "json", *args])
    assert result.exit_code in (0, 1, 3), result.output


def gate(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["gate", *args])
    return result.exit_code, result.stdout, result.stderr


def test_vendor_repo_is_approved_and_the_gate_prints_its_commit(hub: Path) -> None:
    vet(NVIDIA, "--policy", "default")
    code, out, _ = gate(NVIDIA)
    assert code == 0 and len(out.strip()) == 40
    sha = out.strip()
    assert gate(NVIDIA, "--revision", sha)[:2] == (0, out)
    assert gate(NVIDIA, "--revision", "main")[:2] == (0, out)
    doc = json.loads(gate(NVIDIA, "--format", "json")[1])
    assert doc["approved"] is True and doc["revision"] == sha and doc["policy"]["name"] == "default"
    assert {f["path"] for f in doc["files"]} >= {"config.json", "model.safetensors.index.json"}
    assert sha in doc["pins"]["vllm"]


def test_third_party_repo_is_refused_with_reasons(hub: Path) -> None:
    vet(CANADA, "--policy", "default")
    code, out, err = gate(CANADA)
    assert code == 1 and out == ""
    assert "refused" in err and "(reject)" in err and "third-party" in err


def test_a_repo_never_vetted_is_not_vetted(hub: Path) -> None:
    code, _, err = gate(NVIDIA, "--revision", "a" * 40)
    assert code == 4 and "hfvet vet" in err


def test_a_branch_that_moved_is_refused_naming_the_approved_commit(hub: Path) -> None:
    vet(NVIDIA, "--policy", "default")
    approved = gate(NVIDIA)[1].strip()
    (hub / NVIDIA / "README.md").write_text("a new commit on main\n")
    code, _, err = gate(NVIDIA, "--revision", "main")
    assert code == 5 and approved in err
    assert gate(NVIDIA, "--revision", approved)[0] == 0  # the pinned commit stays approved


def test_a_verdict_under_another_policy_is_re_decided(hub: Path) -> None:
    vet(CANADA, "--policy", "unsafe-allow-all")  # approved, but only by a development policy
    doc = json.loads(gate(CANADA, "--format", "json")[1])
    assert doc["approved"] is False and doc["verdict"] == "reject"
    assert "re-decided" in doc["decided_by"]


def test_an_unreachable_hub_fails_closed_for_a_branch(hub: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vet(NVIDIA, "--policy", "default")
    sha = gate(NVIDIA)[1].strip()
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    code, _, err = gate(NVIDIA, "--revision", "main")
    assert code == 2 and "not approved" in err
    assert gate(NVIDIA, "--revision", sha)[0] == 0  # an exact commit needs no hub


def test_no_store_records_nothing(hub: Path) -> None:
    vet(NVIDIA, "--policy", "default", "--no-store")
    assert gate(NVIDIA)[0] == 4


def test_policy_diff_replays_every_stored_report(hub: Path) -> None:
    vet(NVIDIA, "--policy", "default")
    vet(CANADA, "--policy", "default")
    vet(CANADA, "--policy", "default")  # a re-vet of the same commit: only the newest report counts
    result = runner.invoke(app, ["policy", "diff", "policies/default.yaml", "policies/unsafe-allow-all.yaml",
                                 "--stored"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert "1 of 2 verdict(s) change" in result.output
    assert "store:canada-quant/DeepSeek" in result.output


def test_a_local_scan_is_stored_but_never_approves_at_the_gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HFVET_DATABASE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    sha = "c" * 40
    snapshot = tmp_path / "models--acme--tiny" / "snapshots" / sha
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text('{"model_type": "llama"}')
    scanned = runner.invoke(app, ["scan", str(snapshot), "--repo", "nvidia/tiny", "--format", "json"])
    assert scanned.exit_code == 0, scanned.output  # approved by the policy, as a report
    assert json.loads(scanned.stdout)["revision"] == sha  # the commit came from the snapshot's folder
    code, out, err = gate("nvidia/tiny", "--revision", sha)
    assert code == 1 and out == "" and "local-scan" in err



def test_no_review_makes_a_local_scan_approve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A human cannot tell that local bytes are the hub's commit either: only `hfvet vet` ties them.
    from app.db.models import ReportRow, ReviewRow
    from app.services.store import open_store
    from app.settings import Settings

    monkeypatch.setenv("HFVET_DATABASE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    sha = "c" * 40
    snapshot = tmp_path / "models--acme--tiny" / "snapshots" / sha
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text('{"model_type": "llama"}')
    assert runner.invoke(app, ["scan", str(snapshot), "--repo", "nvidia/tiny"]).exit_code == 0
    reviewed = runner.invoke(app, ["review", "nvidia/tiny", "--revision", sha, "--approve", "--reason", "looks fine"])
    assert reviewed.exit_code != 0 and "local-scan" in reviewed.stderr
    store = open_store(Settings())
    with store.session() as session:  # an approval recorded anyway (an older version, a direct write)
        report_pk = session.query(ReportRow.id).scalar()
        session.add(ReviewRow(report_pk=report_pk, decision="approve", reason="ok", reviewer="cli:x", role="admin",
                              verdict="approve"))
    store.close()
    code, out, err = gate("nvidia/tiny", "--revision", sha)
    assert code == 1 and out == "" and "local-scan" in err


def test_scan_refuses_a_revision_that_is_not_a_commit(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    result = runner.invoke(app, ["scan", str(tmp_path), "--repo", "acme/x", "--revision", "main"])
    assert result.exit_code == 2 and "40-hex" in result.stderr


def test_an_approved_repo_that_changed_hands_is_a_finding(hub: Path) -> None:
    vet(NVIDIA, "--policy", "default")
    meta_path = hub / NVIDIA / ".hub.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    meta |= {"_id": "0123456789abcdef01234567", "author": "someone-else"}  # deleted and re-created by another
    meta_path.write_text(json.dumps(meta))
    (hub / NVIDIA / "README.md").write_text("new owner, new commit\n")
    result = runner.invoke(app, ["vet", NVIDIA, "--policy", "default", "--format", "json"])
    doc = json.loads(result.stdout)
    changed = [f for f in doc["findings"] if f["rule"] == "identity-changed"]
    assert changed and changed[0]["severity"] == "high" and "someone-else" in changed[0]["message"]
    assert doc["verdict"] != "approve" and result.exit_code != 0
    assert gate(NVIDIA, "--revision", "main")[0] == 1  # the new commit is refused


def test_a_repo_never_approved_is_not_checked_for_identity(hub: Path) -> None:
    vet(CANADA, "--policy", "default")  # rejected: nothing to protect yet
    meta_path = hub / CANADA / ".hub.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    meta_path.write_text(json.dumps(meta | {"author": "someone-else"}))
    doc = json.loads(runner.invoke(app, ["vet", CANADA, "--policy", "default", "--format", "json"]).stdout)
    assert not [f for f in doc["findings"] if f["rule"] == "identity-changed"]


def test_a_repo_approved_by_a_reviewer_that_changed_hands_is_a_finding(hub: Path) -> None:
    repo = "nvidia/Nemotron-Mini-Custom-Code"  # remote code: `review`, approved by a human
    vet(repo, "--policy", "default")
    code, out, _ = gate(repo, "--revision", "main", "--format", "json")
    assert code == 1  # waiting for review
    sha = json.loads(out)["revision"]
    reviewed = runner.invoke(app, ["review", repo, "--revision", sha, "--approve", "--reason", "read the code"])
    assert reviewed.exit_code == 0, reviewed.output
    meta_path = hub / repo / ".hub.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    meta_path.write_text(json.dumps(meta | {"_id": "0123456789abcdef01234567", "author": "someone-else"}))
    (hub / repo / "README.md").write_text("new owner, new commit\n")
    result = runner.invoke(app, ["vet", repo, "--policy", "default", "--format", "json"])
    changed = [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "identity-changed"]
    assert changed and "someone-else" in changed[0]["message"]


@pytest.mark.parametrize("command", [
    ["gate", "nvidia"], ["gate", "nvidia", "--server", "http://127.0.0.1:9"], ["vet", "nvidia"],
    ["download", "nvidia", "--local-dir", "out"], ["review", "nvidia", "-r", "f" * 40, "--approve", "--reason", "x"],
])
def test_a_malformed_repo_id_is_refused_alike_before_the_store_or_the_hub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    """Once `gate nvidia` said "not vetted, run `hfvet vet nvidia`", which died on the hub's 404."""
    monkeypatch.setenv("HFVET_DATABASE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens: a hub call would fail otherwise
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, command)
    assert result.exit_code == 2, result.output
    assert result.stderr == "error: repo must be ORG/NAME, got 'nvidia'\n"
    assert not (tmp_path / "store.db").exists() and not (tmp_path / "out").exists()


def test_a_short_commit_id_names_the_vetted_commit(hub: Path) -> None:
    vet(NVIDIA, "--policy", "default")
    sha = gate(NVIDIA)[1].strip()
    assert gate(NVIDIA, "--revision", sha[:12]) == (0, sha + "\n", "")
    assert gate(NVIDIA, "--revision", sha[:7])[:2] == (0, sha + "\n")


def test_a_typo_in_the_repo_gets_a_did_you_mean(hub: Path) -> None:
    vet(NVIDIA, "--policy", "default")
    vet(NVIDIA.replace("nvidia", "nvldia"), "--policy", "default")  # the typosquat, vetted (and denied)
    code, _, err = gate(NVIDIA.replace("NVFP4", "NVFP5"))
    assert code == 4 and f"did you mean {NVIDIA}?" in err.replace("\n", " ") and "nvldia" not in err


def test_vet_takes_a_short_id_of_a_vetted_commit(hub: Path) -> None:
    vet(NVIDIA, "--policy", "default")
    sha = gate(NVIDIA)[1].strip()
    again = runner.invoke(app, ["vet", NVIDIA, "--revision", sha[:7], "--no-store", "--format", "json"])
    assert again.exit_code == 0 and json.loads(again.stdout)["revision"] == sha, again.output
    unknown = runner.invoke(app, ["vet", NVIDIA, "--revision", "1234567", "--no-store"])
    assert unknown.exit_code == 2 and "must name a vetted commit; otherwise give the full 40-hex sha" in unknown.stderr


def test_a_too_short_commit_id_says_how_long_one_must_be(hub: Path) -> None:
    code, _, err = gate(NVIDIA, "--revision", "9f0f")
    assert code == 2 and "(a short commit id needs 7 or more hex digits)" in err.replace("\n", " ")
