"""Verdict attestations end to end with a real store, the CLI and the fixture hub: signed when stored,
backfilled by `hfvet attest`, verified offline by `hfvet verify`, and required by `hfvet download`
before any file byte is fetched (the counting hub proves none was)."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat, load_pem_public_key
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from app.cli.main import app
from app.core import report_json
from app.core.findings import Finding, Severity
from app.core.provenance.statement import canonical
from app.core.report import Report
from app.db.attestations import statement_bytes
from app.db.models import ReportRow
from app.db.repository import report_by_id
from app.examples import build_examples
from app.hubfixture import AppServer
from app.hubfixture.app import create_app
from app.services.attestations import NoAttestation, newest_envelope
from app.services.signing_keys import load_signing_key
from app.services.store import open_store
from app.services.vetting import record
from app.settings import Settings
from tests.integration.test_download import CountingHub

NVIDIA = "nvidia/DeepSeek-V4-Flash-NVFP4"
CANADA = "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP"
NEMOTRON = "nvidia/Nemotron-Mini-Custom-Code"  # `review` under the default policy
runner = CliRunner()


@dataclass
class World:
    tmp: Path
    hub: CountingHub
    hub_root: Path
    env: dict[str, str]
    public: Path

    def run(self, *args: str, **env: str) -> tuple[int, str, str]:
        result = runner.invoke(app, list(args), env=self.env | env)
        return result.exit_code, result.stdout, result.stderr

    def envelope(self, repo: str, sha: str) -> Path:
        out = self.tmp / f"{repo.replace('/', '_')}-{sha[:8]}.json"
        code, _, err = self.run("attest", repo, "--revision", sha, "--out", str(out))
        assert code == 0, err
        return out


def _commit(world: World, repo: str) -> str:
    code, out, _ = world.run("gate", repo)
    if code == 0:
        return out.strip()
    store = sqlite3.connect(world.tmp / "store.db")
    try:
        row = store.execute("SELECT sha FROM revisions JOIN repos ON repos.id = revisions.repo_pk "
                            "WHERE repos.repo_id = ?", (repo,)).fetchone()
    finally:
        store.close()
    return str(row[0])


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    root = tmp_path / "hub"
    build_examples(root)
    counting = CountingHub(create_app(root))
    with AppServer(counting) as served:
        env = {"HF_ENDPOINT": served.url, "HFVET_DATABASE_URL": f"sqlite:///{tmp_path / 'store.db'}",
               "HF_HOME": str(tmp_path / "hf-home"), "HFVET_SERVER": "", "HF_HUB_DISABLE_XET": "1"}
        created = runner.invoke(app, ["keys", "create", "--out", str(tmp_path / "keys")], env=env)
        assert created.exit_code == 0, created.output
        env["HFVET_ATTESTATION_KEY"] = str(tmp_path / "keys" / "hfvet-attestation.key")
        yield World(tmp_path, counting, root, env, tmp_path / "keys" / "hfvet-attestation.pub")


def vet(world: World, repo: str, **env: str) -> str:
    code, _, err = world.run("vet", repo, "--format", "json", **env)
    assert code in (0, 1, 3), err
    return _commit(world, repo)


def files_of(world: World, repo: str) -> Path:
    """The repo's files as a download lands them (the fixture hub's metadata file left out)."""
    copy = world.tmp / "files" / repo
    shutil.copytree(world.hub_root / repo, copy, ignore=shutil.ignore_patterns(".hub.json"))
    return copy


def test_keys_create_writes_a_private_key_only_its_owner_reads_and_never_overwrites(world: World) -> None:
    private = world.tmp / "keys" / "hfvet-attestation.key"
    assert private.stat().st_mode & 0o777 == 0o600
    assert private.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    code, out, err = world.run("keys", "create", "--out", str(world.tmp / "keys"))
    assert code == 2 and "refusing to overwrite" in err and out == ""
    code, out, _ = world.run("keys", "create", "--out", str(world.tmp / "other"))
    der = load_pem_public_key((world.tmp / "other" / "hfvet-attestation.pub").read_bytes()).public_bytes(
        Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    assert code == 0 and out.strip() == hashlib.sha256(der).hexdigest()  # the key id, as docs say to compute it


def test_a_vet_is_signed_when_stored_and_verifies_offline_with_its_files(world: World) -> None:
    sha = vet(world, NVIDIA)
    envelope = world.envelope(NVIDIA, sha)
    code, out, err = world.run("verify", str(envelope), "--key", str(world.public), "--files",
                               str(files_of(world, NVIDIA)), "--repo", NVIDIA, "--revision", sha, "--require-approve")
    assert code == 0, err
    assert out.startswith(f"valid: verdict approve for hf://{NVIDIA}@{sha} (11 files)") and "all 11 files" in out


def test_a_changed_file_is_refused(world: World) -> None:
    sha = vet(world, NVIDIA)
    files = files_of(world, NVIDIA)
    with (files / "config.json").open("a") as handle:
        handle.write(" ")
    code, out, err = world.run("verify", str(world.envelope(NVIDIA, sha)), "--key", str(world.public),
                               "--files", str(files))
    assert code == 1 and out == ""
    assert "refused: config.json: digest" in err and "[subjects]" in err


def test_another_revision_and_another_key_are_refused(world: World) -> None:
    sha = vet(world, NVIDIA)
    envelope = str(world.envelope(NVIDIA, sha))
    code, _, err = world.run("verify", envelope, "--key", str(world.public), "--revision", "0" * 40)
    assert code == 1 and f"about commit {sha}, not {'0' * 40}" in err and "[revision]" in err
    world.run("keys", "create", "--out", str(world.tmp / "stranger"))
    code, _, err = world.run("verify", envelope, "--key", str(world.tmp / "stranger" / "hfvet-attestation.pub"))
    assert code == 1 and "not signed by the given key" in err and "[unknown-key]" in err


def test_verify_usage_errors_exit_2(world: World) -> None:
    sha = vet(world, NVIDIA)
    envelope = str(world.envelope(NVIDIA, sha))
    cases = [
        (["--key", str(world.tmp / "nope.pub")], "--key"),
        (["--key", str(world.tmp / "keys" / "hfvet-attestation.key")], "this is a private key; pass the public key"),
        (["--key", str(world.public), "--revision", "main"], "--revision must be a full 40-hex"),
        (["--key", str(world.public), "--key-expires", "soon"], "--key-expires must be a date"),
        (["--key", str(world.public), "--files", str(world.tmp / "nowhere")], "not a directory"),
    ]
    for args, message in cases:
        code, _, err = world.run("verify", envelope, *args)
        assert code == 2 and message in err, (args, err)
    code, _, err = world.run("verify", str(world.tmp / "missing.json"), "--key", str(world.public))
    assert code == 2 and "cannot read it" in err


def test_a_truncated_attestation_is_refused(world: World) -> None:
    sha = vet(world, NVIDIA)
    envelope = world.envelope(NVIDIA, sha)
    envelope.write_text(envelope.read_text()[:200])
    code, _, err = world.run("verify", str(envelope), "--key", str(world.public))
    assert code == 1 and "not a DSSE envelope: truncated or not JSON [garbled]" in err


def test_without_a_key_nothing_is_signed_and_attest_backfills_byte_stably(world: World) -> None:
    sha = vet(world, NVIDIA, HFVET_ATTESTATION_KEY="")
    code, _, err = world.run("attest", NVIDIA, "--revision", sha, HFVET_ATTESTATION_KEY="")
    assert code == 2 and "no verdict attestation" in err and "HFVET_ATTESTATION_KEY is not set" in err
    code, _, err = world.run("attest", NVIDIA)  # the configured key signs what was stored unsigned
    assert code == 0 and "signed 1 verdict(s) and 0 review(s)" in err
    first = world.envelope(NVIDIA, sha).read_text()
    code, _, err = world.run("attest", NVIDIA)
    assert code == 0 and "signed 0 verdict(s)" in err  # signed once, kept as signed
    signed = base64.b64decode(json.loads(first)["payload"])
    store = open_store(Settings(database_url=world.env["HFVET_DATABASE_URL"]))
    key = load_signing_key(Path(world.env["HFVET_ATTESTATION_KEY"]))
    with store.session() as session:  # the stored report's statement, built again: the same bytes
        assert statement_bytes(session, first_report(session), key) == signed
    store.close()


def first_report(session: Session) -> int:
    return int(session.execute(select(ReportRow.id).order_by(ReportRow.id)).scalars().first() or 0)


def test_a_bad_key_setting_stops_the_command_in_one_line(world: World) -> None:
    code, _, err = world.run("vet", NVIDIA, HFVET_ATTESTATION_KEY=str(world.tmp / "nope.key"))
    assert code == 2 and "HFVET_ATTESTATION_KEY" in err and "cannot read it" in err and len(err.splitlines()) == 1
    code, _, err = world.run("vet", NVIDIA, HFVET_ATTESTATION_KEY_EXPIRES="2020-01-01")
    assert code == 2 and "expired on 2020-01-01" in err
    code, _, err = world.run("serve", "--port", "0", HFVET_ATTESTATION_KEY=str(world.public))
    assert code == 2 and "this is a public key; HFVET_ATTESTATION_KEY needs the private key" in err


def test_download_requires_a_matching_approving_attestation(world: World) -> None:
    vet(world, NVIDIA)
    world.hub.paths.clear()
    code, _, err = world.run("download", NVIDIA, "--local-dir", str(world.tmp / "model"),
                               "--require-attestation", str(world.public))
    assert code == 0, err
    assert "attested: valid: verdict approve" in err and world.hub.file_requests()
    world.run("keys", "create", "--out", str(world.tmp / "stranger"))
    world.hub.paths.clear()
    code, _, err = world.run("download", NVIDIA, "--local-dir", str(world.tmp / "model2"), "--require-attestation",
                             str(world.tmp / "stranger" / "hfvet-attestation.pub"))
    assert code == 1 and "[unknown-key]; nothing was fetched" in err
    assert world.hub.file_requests() == [] and not (world.tmp / "model2").exists()


def test_a_verdict_changed_in_the_store_after_signing_is_caught_before_download(world: World) -> None:
    sha = vet(world, CANADA)  # rejected, and signed so
    with sqlite3.connect(world.tmp / "store.db") as store:  # someone with database access flips it
        store.execute("UPDATE reports SET verdict = 'approve', "
                      "document = json_set(document, '$.verdict', 'approve', '$.reasons', json('[]'))")
    code, out, _ = world.run("gate", CANADA)
    assert code == 0 and out.strip() == sha  # the gate believes the store...
    envelope = json.loads(world.envelope(CANADA, sha).read_text())  # ...the attestation still says reject
    assert json.loads(base64.b64decode(envelope["payload"]))["predicate"]["hfvet"]["verdict"] == "reject"
    world.hub.paths.clear()
    code, _, err = world.run("download", CANADA, "--local-dir", str(world.tmp / "model"),
                             "--require-attestation", str(world.public))
    assert code == 1 and "'reject', and no signed review approves it" in err
    assert world.hub.file_requests() == []


def test_a_signed_reject_of_an_approved_verdict_stops_the_download_though_the_store_lost_it(world: World) -> None:
    sha = vet(world, NVIDIA)
    code, _, err = world.run("review", NVIDIA, "--revision", sha, "--reject", "--reason", "a backdoored template")
    assert code == 0, err
    with sqlite3.connect(world.tmp / "store.db") as store:  # someone with database access drops the reject...
        store.execute("UPDATE attestations SET review_pk = NULL")
        store.execute("DELETE FROM reviews")
    code, out, _ = world.run("gate", NVIDIA)
    assert code == 0 and out.strip() == sha  # ...the gate believes the store; the signed reject remains
    world.hub.paths.clear()
    code, _, err = world.run("download", NVIDIA, "--local-dir", str(world.tmp / "model"),
                             "--require-attestation", str(world.public))
    assert code == 1 and "approves, but a signed review rejects it: a backdoored template" in err, err
    assert world.hub.file_requests() == [] and not (world.tmp / "model").exists()


def test_a_signed_review_approves_a_review_verdict_for_download(world: World) -> None:
    sha = vet(world, NEMOTRON)
    world.hub.paths.clear()
    code, _, err = world.run("download", NEMOTRON, "--local-dir", str(world.tmp / "early"),
                             "--require-attestation", str(world.public), "--revision", sha)
    assert code != 0 and world.hub.file_requests() == []  # the gate refuses first: waiting for review
    code, _, err = world.run("review", NEMOTRON, "--revision", sha, "--approve", "--reason", "modeling code read")
    assert code == 0, err
    code, _, err = world.run("download", NEMOTRON, "--local-dir", str(world.tmp / "model"),
                             "--require-attestation", str(world.public))
    assert code == 0, err
    assert "attested: valid: review: approve" in err and world.hub.file_requests()


def test_a_review_stored_unsigned_is_signed_by_attest_and_then_approves_the_download(world: World) -> None:
    sha = vet(world, NEMOTRON)  # the verdict is signed; the review below is stored while no key is set
    code, _, err = world.run("review", NEMOTRON, "--revision", sha, "--approve", "--reason", "read",
                             HFVET_ATTESTATION_KEY="")
    assert code == 0, err
    code, _, err = world.run("download", NEMOTRON, "--local-dir", str(world.tmp / "early"),
                             "--require-attestation", str(world.public))
    assert code == 1 and "no signed review approves it" in err and f"hfvet attest {NEMOTRON} --revision" in err
    code, _, err = world.run("attest", NEMOTRON)
    assert code == 0 and "signed 0 verdict(s) and 1 review(s)" in err
    code, _, err = world.run("download", NEMOTRON, "--local-dir", str(world.tmp / "model"),
                             "--require-attestation", str(world.public))
    assert code == 0 and "attested: valid: review: approve" in err, err


def test_attest_says_never_vetted_for_an_unknown_commit_or_repo(world: World) -> None:
    vet(world, NVIDIA)
    key = world.env["HFVET_ATTESTATION_KEY"]
    cases = [(["attest", NVIDIA, "--revision", "0" * 40, "--key", key], {"HFVET_ATTESTATION_KEY": ""}),
             (["attest", "nvidia/DeepSeek-V4-Flsh"], {})]
    for args, env in cases:
        code, _, err = world.run(*args, **env)
        assert code == 4 and "never been vetted" in err and "HFVET_ATTESTATION_KEY" not in err, (args, err)


def test_an_unsigned_verdict_is_refused_with_what_signs_it(world: World) -> None:
    vet(world, NVIDIA, HFVET_ATTESTATION_KEY="")
    code, _, err = world.run("download", NVIDIA, "--local-dir", str(world.tmp / "model"),
                             "--require-attestation", str(world.public))
    assert code == 1 and "[missing]" in err and f"hfvet attest {NVIDIA} --revision" in err


def test_verify_follows_a_hub_cache_snapshot_s_links_but_not_a_dangling_one(world: World) -> None:
    sha = vet(world, NVIDIA)
    source, cache = files_of(world, NVIDIA), world.tmp / "cache"  # huggingface_hub's cache layout
    snapshot, blobs = cache / "snapshots" / sha, cache / "blobs"
    blobs.mkdir(parents=True)
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        blob = blobs / hashlib.sha256(path.read_bytes()).hexdigest()
        shutil.copyfile(path, blob)
        link = snapshot / path.relative_to(source)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(Path("../" * len(link.relative_to(snapshot.parent).parts[1:]), "..", "blobs", blob.name))
    envelope = str(world.envelope(NVIDIA, sha))
    code, out, err = world.run("verify", envelope, "--key", str(world.public), "--files", str(snapshot))
    assert code == 0 and "all 11 files" in out, err
    (snapshot / "dangling.bin").symlink_to(blobs / "nowhere")
    code, _, err = world.run("verify", envelope, "--key", str(world.public), "--files", str(snapshot))
    assert code == 1 and "dangling.bin: a dangling link" in err and "[files]" in err


def test_a_key_of_the_wrong_half_is_named_by_the_flag_used(world: World) -> None:
    vet(world, NVIDIA)
    private = world.env["HFVET_ATTESTATION_KEY"]
    code, _, err = world.run("download", NVIDIA, "--local-dir", str(world.tmp / "m"), "--require-attestation", private)
    assert code == 2 and f"--require-attestation {private}: this is a private key; pass the public key" in err
    assert len(err.splitlines()) == 1
    code, _, err = world.run("attest", NVIDIA, "--key", str(world.public))
    assert code == 2 and f"--key {world.public}: this is a public key; --key needs the private key" in err
    assert "HFVET_ATTESTATION_KEY" not in err and len(err.splitlines()) == 1


def test_vet_says_it_attested_and_keys_create_prints_an_absolute_path(world: World, monkeypatch: pytest.MonkeyPatch,
                                                                      ) -> None:
    code, _, err = world.run("vet", NVIDIA)
    assert code == 0 and "attested (key " in err
    code, _, err = world.run("vet", NVIDIA, HFVET_ATTESTATION_KEY="")
    assert code == 0 and "attested" not in err
    monkeypatch.chdir(world.tmp)
    code, _, err = world.run("keys", "create", "--out", "relative")
    assert code == 0 and f"HFVET_ATTESTATION_KEY={world.tmp / 'relative' / 'hfvet-attestation.key'}" in err


def test_key_settings_are_checked_at_start(world: World) -> None:
    private = Path(world.env["HFVET_ATTESTATION_KEY"])
    private.chmod(0o644)
    code, _, err = world.run("vet", NVIDIA, "--format", "json")
    warnings = [line for line in err.splitlines() if "readable by group or others" in line]
    assert code == 0 and len(warnings) == 1 and "chmod 600" in warnings[0]
    private.chmod(0o600)
    code, _, err = world.run("vet", NVIDIA, HFVET_ATTESTATION_KEY="", HFVET_ATTESTATION_KEY_EXPIRES="2030-01-01")
    assert code == 2 and "HFVET_ATTESTATION_KEY_EXPIRES is set but HFVET_ATTESTATION_KEY is not" in err
    sha = _commit(world, NVIDIA)
    code, out, err = world.run("attest", NVIDIA, "--revision", sha, HFVET_ATTESTATION_KEY_EXPIRES="2020-01-01")
    assert code == 0 and json.loads(out)["payloadType"] == "application/vnd.in-toto+json", err


def review_envelope(world: World, repo: str, sha: str) -> dict[str, Any]:
    """The review attestation the store serves for ``repo@sha`` (as GET /attestations/...?kind=review does), decoded."""
    store = open_store(Settings(database_url=world.env["HFVET_DATABASE_URL"]))
    try:
        envelope = newest_envelope(store, repo, sha, "review").envelope
    finally:
        store.close()
    return json.loads(base64.b64decode(json.loads(envelope)["payload"]))  # type: ignore[no-any-return]


def download(world: World, repo: str, where: str) -> tuple[int, str]:
    code, _, err = world.run("download", repo, "--local-dir", str(world.tmp / where),
                             "--require-attestation", str(world.public))
    return code, err


def vet_an_hour_ago(world: World, repo: str) -> str:
    """A vet signed as of an hour ago: a re-vet now states another timeVerified, so another verdict statement
    (two vets within one second state the same bytes)."""
    sha = vet(world, repo, HFVET_ATTESTATION_KEY="")
    with sqlite3.connect(world.tmp / "store.db") as store:
        store.execute("UPDATE reports SET decided_at = datetime(decided_at, '-1 hour')")
    code, _, err = world.run("attest", repo)
    assert code == 0, err
    return sha


def revet_with_a_new_finding(world: World, repo: str) -> None:
    """What a re-vet of the same commit by a newer scanner that finds one more thing stores (and signs)."""
    extra = Finding("modeling_custom.py", "python-code", "rule-new", Severity.MEDIUM, "opens a socket")
    revet(world, lambda report: dataclasses.replace(report, findings=(*report.findings, extra)))


def revet(world: World, change: Callable[[Report], Report] = lambda report: report) -> None:
    """A re-vet of the newest report's commit, stored and signed as a vet stores it (services.vetting.record):
    by default one that finds the same, as a vet of the same bytes does (tests/integration/test_determinism.py).
    Not vetted over the hub again: the carry rule is what is tested here, not a second read of the repo."""
    store = open_store(Settings(database_url=world.env["HFVET_DATABASE_URL"],
                                attestation_key=world.env["HFVET_ATTESTATION_KEY"]), signing=True)
    try:
        with store.session() as session:
            stored = report_by_id(session, int(session.execute(select(func.max(ReportRow.id))).scalar_one()))
            assert stored is not None
            report = report_json.load(stored.document)
        record(store, change(report), requested_revision="main", actor="test")
    finally:
        store.close()


def test_an_approval_carried_over_a_re_vet_is_signed_for_the_new_verdict(world: World) -> None:
    sha = vet_an_hour_ago(world, NEMOTRON)
    code, _, err = world.run("review", NEMOTRON, "--revision", sha, "--approve", "--reason", "modeling code read")
    assert code == 0, err
    human = review_envelope(world, NEMOTRON, sha)
    revet(world)  # a re-vet of the same commit finds the same: the gate keeps the approval
    code, err = download(world, NEMOTRON, "model")
    assert code == 0 and "attested: valid: review: approve" in err, err  # before: approves another verdict statement
    carried = review_envelope(world, NEMOTRON, sha)["predicate"]
    assert carried["carriedBy"] == "hfvet" and carried["reviewer"] == human["predicate"]["reviewer"]
    human_digest = hashlib.sha256(canonical(human)).hexdigest()
    assert carried["carriedFrom"]["statement"] == {"digest": {"sha256": human_digest}}
    assert carried["verdictStatement"] != human["predicate"]["verdictStatement"]
    assert carried["timeReviewed"] == human["predicate"]["timeReviewed"]


def test_an_approval_a_re_vet_withdrew_signs_nothing_and_the_download_says_why(world: World) -> None:
    sha = vet_an_hour_ago(world, NEMOTRON)
    code, _, err = world.run("review", NEMOTRON, "--revision", sha, "--approve", "--reason", "modeling code read")
    assert code == 0, err
    revet_with_a_new_finding(world, NEMOTRON)
    store = sqlite3.connect(world.tmp / "store.db")
    try:
        kinds = [row[0] for row in store.execute("SELECT kind FROM attestations ORDER BY id")]
    finally:
        store.close()
    assert kinds == ["verdict", "review", "verdict"]  # no carried review for the re-vet
    world.hub.paths.clear()
    code, err = download(world, NEMOTRON, "model")  # the gate refuses first, naming what is new
    assert code == 1 and "1 new finding: rule-new (medium)" in err and world.hub.file_requests() == []
    with pytest.raises(NoAttestation) as refused:  # what the attestation check (and GET ...?kind=review) says
        review_envelope(world, NEMOTRON, sha)
    assert "(admin) was withdrawn by a re-vet: the review of report 1 no longer applies: the re-vet found 1 new " \
           "finding: rule-new (medium)" in str(refused.value)


def test_an_admin_override_of_a_reject_carries_over_a_re_vet_for_the_download_as_for_the_gate(world: World) -> None:
    sha = vet_an_hour_ago(world, CANADA)
    code, _, err = world.run("review", CANADA, "--revision", sha, "--approve", "--reason", "known false positive")
    assert code == 0, err
    vet(world, CANADA)
    code, out, _ = world.run("gate", CANADA)
    assert code == 0 and out.strip() == sha
    code, err = download(world, CANADA, "model")
    assert code == 0 and "attested: valid: review: approve" in err, err
    assert review_envelope(world, CANADA, sha)["predicate"]["role"] == "admin"


def test_attest_signs_a_carried_review_a_store_missed(world: World) -> None:
    sha = vet_an_hour_ago(world, NEMOTRON)
    world.run("review", NEMOTRON, "--revision", sha, "--approve", "--reason", "modeling code read")
    revet(world)
    with sqlite3.connect(world.tmp / "store.db") as store:  # as a store signed before the carry was attested
        store.execute("DELETE FROM attestations WHERE id = (SELECT max(id) FROM attestations WHERE kind = 'review')")
    code, err = download(world, NEMOTRON, "early")
    assert code == 1 and "approves another verdict statement" in err
    code, _, err = world.run("attest", NEMOTRON, "--revision", sha)
    assert code == 0 and "signed 0 verdict(s) and 1 review(s)" in err, err
    assert review_envelope(world, NEMOTRON, sha)["predicate"]["carriedBy"] == "hfvet"
    code, err = download(world, NEMOTRON, "model")
    assert code == 0, err
    code, _, err = world.run("attest", NEMOTRON, "--revision", sha)
    assert code == 0 and "signed 0 verdict(s) and 0 review(s)" in err  # signed once
