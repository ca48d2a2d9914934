"""GET /attestations/{org}/{name}/{commit} and GET /attestations/key (in-process client): what is served is
the envelope signed when the verdict (or review) was stored, with the same read auth as other GETs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from app.core.provenance.envelope import load_public
from app.core.provenance.verify import Expect, verify
from app.db import tokens
from app.db.models import ReportRow
from app.db.repository import save_report
from app.server import create_app
from app.services.signing_keys import create_key
from app.services.store import open_store
from app.settings import Settings
from tests.integration.vetted import APPROVE_REPO, REJECT_REPO, REVIEW_REPO, Vetted, vet_examples


@pytest.fixture(scope="module")
def vetted(tmp_path_factory: pytest.TempPathFactory) -> Vetted:
    return vet_examples(tmp_path_factory.mktemp("hub"))


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    return create_key(tmp_path / "keys").private


def settings_for(tmp_path: Path, key: Path | None, **more: object) -> Settings:
    return Settings(database_url=f"sqlite:///{tmp_path / 'store.db'}", policy=Path("default"),
                    attestation_key=key, **more)


def stored(settings: Settings, vetted: Vetted) -> dict[str, str]:
    """The `review` and `reject` reports stored (signed when the settings name a key); a token per role."""
    from app.db.attestations import attest_report

    store = open_store(settings, signing=True)
    with store.session() as session:
        for report in (vetted.review, vetted.reject):
            attest_report(session, save_report(session, report, requested_revision="main", actor="test"),
                          store.signer)
        made = {role: tokens.create(session, f"{role}-1", role, actor="test") for role in ("reader", "reviewer")}
    store.close()
    return made


def client_for(settings: Settings) -> TestClient:
    def no_hub(repo: str, revision: str) -> str:
        raise AssertionError("attestations never ask the hub")

    return TestClient(create_app(settings, resolve=no_hub))


@pytest.fixture
def signing(tmp_path: Path, keys: Path, vetted: Vetted) -> Iterator[tuple[TestClient, dict[str, str]]]:
    settings = settings_for(tmp_path, keys)
    made = stored(settings, vetted)
    with client_for(settings) as client:
        yield client, made


def test_the_key_is_served_as_pem(signing: tuple[TestClient, dict[str, str]], keys: Path) -> None:
    client, _ = signing
    reply = client.get("/attestations/key")
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/x-pem-file"
    assert reply.content == keys.with_suffix(".pub").read_bytes()


def test_a_commit_s_verdict_attestation_is_served_and_verifies(signing: tuple[TestClient, dict[str, str]],
                                                               vetted: Vetted, keys: Path) -> None:
    client, _ = signing
    sha = vetted.reject.revision or ""
    reply = client.get(f"/attestations/{REJECT_REPO}/{sha[:12]}")  # a short commit names the vetted one
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/json"
    assert reply.headers["x-hfvet-commit"] == sha
    found = verify(reply.content, load_public(keys.with_suffix(".pub").read_bytes()),
                   Expect(repo=REJECT_REPO, revision=sha))
    assert found.verdict == "reject" and reply.headers["x-hfvet-key-id"] == found.key_id


def test_the_stored_envelope_is_served_even_when_the_verdict_was_changed_later(
        signing: tuple[TestClient, dict[str, str]], vetted: Vetted, tmp_path: Path) -> None:
    client, _ = signing
    sha = vetted.reject.revision or ""
    before = client.get(f"/attestations/{REJECT_REPO}/{sha}").content
    store = open_store(settings_for(tmp_path, None))
    with store.session() as session:
        session.execute(update(ReportRow).values(verdict="approve"))
    store.close()
    assert client.get(f"/attestations/{REJECT_REPO}/{sha}").content == before


def test_a_review_is_attested_and_names_the_verdict(signing: tuple[TestClient, dict[str, str]],
                                                    vetted: Vetted, keys: Path) -> None:
    client, made = signing
    sha = vetted.review.revision or ""
    path = f"/attestations/{REVIEW_REPO}/{sha}"
    none = client.get(path, params={"kind": "review"})
    assert none.status_code == 404 and none.json()["error"]["code"] == "no-attestation"
    reviewed = client.post("/reviews", json={"repo": REVIEW_REPO, "revision": sha, "decision": "approve",
                                              "reason": "remote code read"},
                           headers={"Authorization": f"Bearer {made['reviewer']}"})
    assert reviewed.status_code in (200, 201), reviewed.text
    public = load_public(keys.with_suffix(".pub").read_bytes())
    review = verify(client.get(path, params={"kind": "review"}).content, public, Expect(require_approve=True))
    verdict = verify(client.get(path).content, public)
    predicate = review.statement["predicate"]
    assert predicate["reviewer"] == "token:reviewer-1" and predicate["reason"] == "remote code read"
    assert predicate["verdictStatement"]["digest"]["sha256"] == verdict.payload_sha256


def test_not_found_and_bad_input(signing: tuple[TestClient, dict[str, str]], vetted: Vetted) -> None:
    client, _ = signing
    sha = vetted.reject.revision or ""
    for path in (f"/attestations/{REJECT_REPO}/{'0' * 40}", f"/attestations/nobody/never-vetted/{sha}"):
        reply = client.get(path)  # as GET /bom says it: never vetted, not "vetted before the key was configured"
        assert reply.status_code == 404 and reply.json()["error"]["code"] == "commit-not-vetted"
        assert "has never been vetted" in reply.json()["error"]["message"]
        assert "key" not in reply.json()["error"]["message"]
    assert client.get(f"/attestations/{REJECT_REPO}/main").json()["error"]["code"] == "invalid-revision"
    assert client.get(f"/attestations/{REJECT_REPO}/{sha}", params={"kind": "bogus"}).status_code == 422


def test_reads_need_a_token_under_read_auth(tmp_path: Path, keys: Path, vetted: Vetted) -> None:
    settings = settings_for(tmp_path, keys, read_auth=True)
    made = stored(settings, vetted)
    sha = vetted.reject.revision or ""
    with client_for(settings) as client:
        for path in ("/attestations/key", f"/attestations/{REJECT_REPO}/{sha}"):
            assert client.get(path).status_code == 401
            assert client.get(path, headers={"Authorization": f"Bearer {made['reader']}"}).status_code == 200


def test_without_a_key_the_api_says_so(tmp_path: Path, vetted: Vetted) -> None:
    settings = settings_for(tmp_path, None)
    stored(settings, vetted)
    sha = vetted.reject.revision or ""
    with client_for(settings) as client:
        key = client.get("/attestations/key")
        assert key.status_code == 404 and key.json()["error"]["code"] == "no-signing-key"
        envelope = client.get(f"/attestations/{REJECT_REPO}/{sha}")
        assert envelope.status_code == 404 and "HFVET_ATTESTATION_KEY is not set" in envelope.json()["error"]["message"]


def test_a_server_without_the_key_serves_what_was_signed_when_it_had_one(tmp_path: Path, keys: Path,
                                                                        vetted: Vetted) -> None:
    stored(settings_for(tmp_path, keys), vetted)  # signed when stored
    sha = vetted.reject.revision or ""
    with client_for(settings_for(tmp_path, None)) as client:  # the key unset since
        assert client.get("/attestations/key").status_code == 404
        reply = client.get(f"/attestations/{REJECT_REPO}/{sha}")
    assert reply.status_code == 200
    assert verify(reply.content, load_public(keys.with_suffix(".pub").read_bytes())).verdict == "reject"


def test_the_repo_page_shows_whether_the_commit_is_attested(signing: tuple[TestClient, dict[str, str]],
                                                            vetted: Vetted, keys: Path) -> None:
    client, _ = signing
    sha = vetted.reject.revision or ""
    page = client.get(f"/ui/repos/{REJECT_REPO}", params={"revision": sha})
    key_id = client.get(f"/attestations/{REJECT_REPO}/{sha}").headers["x-hfvet-key-id"]
    assert page.status_code == 200 and 'data-testid="attested"' in page.text
    assert key_id[:16] in page.text and f'href="/attestations/{REJECT_REPO}/{sha}"' in page.text


def test_the_repo_page_says_why_nothing_is_attested(tmp_path: Path, vetted: Vetted) -> None:
    settings = settings_for(tmp_path, None)
    stored(settings, vetted)
    with client_for(settings) as client:
        page = client.get(f"/ui/repos/{REJECT_REPO}")
    assert 'data-testid="not-attested"' in page.text and "HFVET_ATTESTATION_KEY is not set" in page.text


def test_a_vet_run_by_the_server_s_queue_is_signed_when_stored(example_hub: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from app.server import create_app as create_server
    from tests.integration.api.inprocess import app_state

    private = create_key(tmp_path / "server-keys").private
    monkeypatch.setenv("HFVET_ATTESTATION_KEY", str(private))
    monkeypatch.setenv("HFVET_JOB_ISOLATION", "thread")
    with TestClient(create_server(Settings())) as client:
        with app_state(client).store.session() as session:
            vetter = {"Authorization": f"Bearer {tokens.create(session, 'v', 'vetter', actor='test')}"}
        done = client.post("/vet", params={"repo": APPROVE_REPO, "wait": 120}, headers=vetter)
        assert done.status_code == 200, done.text
        sha = done.json()["job"]["revision"]
        envelope = client.get(f"/attestations/{APPROVE_REPO}/{sha}")
    assert envelope.status_code == 200
    found = verify(envelope.content, load_public(private.with_suffix(".pub").read_bytes()),
                   Expect(repo=APPROVE_REPO, revision=sha, require_approve=True))
    assert len(found.statement["subject"]) == 11


def test_a_review_carried_over_a_re_vet_is_served_marked_carried_and_linked_on_the_page(
        signing: tuple[TestClient, dict[str, str]], vetted: Vetted, keys: Path, tmp_path: Path) -> None:
    from app.db.attestations import attest_report

    client, made = signing
    sha = vetted.review.revision or ""
    path = f"/attestations/{REVIEW_REPO}/{sha}"
    reviewed = client.post("/reviews", json={"repo": REVIEW_REPO, "revision": sha, "decision": "approve",
                                              "reason": "remote code read"},
                           headers={"Authorization": f"Bearer {made['reviewer']}"})
    assert reviewed.status_code in (200, 201), reviewed.text
    human = client.get(path, params={"kind": "review"}).content
    store = open_store(settings_for(tmp_path, keys), signing=True)
    with store.session() as session:  # a re-vet of the same bytes, stored and signed
        attest_report(session, save_report(session, vetted.review, requested_revision="main", actor="test"),
                      store.signer)
    store.close()
    public = load_public(keys.with_suffix(".pub").read_bytes())
    review = verify(client.get(path, params={"kind": "review"}).content, public, Expect(require_approve=True))
    predicate = review.statement["predicate"]
    assert predicate["carriedBy"] == "hfvet" and predicate["reviewer"] == "token:reviewer-1"
    assert predicate["carriedFrom"]["statement"]["digest"]["sha256"] == verify(human, public).payload_sha256
    assert predicate["verdictStatement"]["digest"]["sha256"] == verify(client.get(path).content, public).payload_sha256
    page = client.get(f"/ui/repos/{REVIEW_REPO}", params={"revision": sha}).text
    assert 'data-testid="review-attestation-link"' in page and f"/attestations/{REVIEW_REPO}/{sha}?kind=review" in page
    assert "verified with the review envelope" in page
    plain = client.get(f"/ui/repos/{REJECT_REPO}", params={"revision": vetted.reject.revision}).text
    assert 'data-testid="attested"' in plain and "review-attestation-link" not in plain
