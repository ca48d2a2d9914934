"""The repo page shows the vendor signature check its report recorded (app/web/templates/_signature.html)."""

from __future__ import annotations

from dataclasses import replace

from fastapi.testclient import TestClient

from app.core.signature import SignatureCheck, Signer
from app.db.session import Store
from app.server import create_app
from app.settings import Settings
from tests.integration.api.stored import no_hub, policy, report, save

REPO = "nvidia/model"
SIGNED, OLDER = "c" * 40, "d" * 40
CHECK = SignatureCheck(state="invalid", signer=Signer("key", "sha256:abc"), method="files",
                       problem="1 file(s) differ from what was signed (e.g. model.safetensors)",
                       mismatched=("model.safetensors",), signed_files=3)


def test_the_repo_page_shows_the_signature_and_its_problem(store: Store) -> None:
    save(store, replace(report(REPO, SIGNED, under=policy("default")), signature=CHECK))
    save(store, report(REPO, OLDER, under=policy("default")))  # a report from before signatures: no section
    app = create_app(Settings(database_url=store.url, policy="default"), resolve=no_hub)
    with TestClient(app, base_url="https://testserver") as client:
        signed = client.get(f"/ui/repos/{REPO}?revision={SIGNED}").text
        older = client.get(f"/ui/repos/{REPO}?revision={OLDER}").text
    assert 'data-testid="signature" data-state="invalid"' in signed
    assert "sha256:abc" in signed and "differ from what was signed" in signed
    assert "<code>model.safetensors</code>" in signed
    assert 'data-testid="signature"' not in older


def test_an_invalid_signature_by_the_policys_key_is_not_called_verified(store: Store) -> None:
    by_listed_key = replace(CHECK, signer=Signer("key", "sha256:abc", "key sha256:abc"))
    save(store, replace(report(REPO, SIGNED, under=policy("default")), signature=by_listed_key))
    app = create_app(Settings(database_url=store.url, policy="default"), resolve=no_hub)
    with TestClient(app, base_url="https://testserver") as client:
        page = client.get(f"/ui/repos/{REPO}?revision={SIGNED}").text
    assert "verified with the policy" not in page
    assert "signed with the policy's key sha256:abc, but the files are not as signed" in page


def test_a_signature_no_entry_covers_names_the_policys_key_without_calling_the_files_not_as_signed(
        store: Store) -> None:
    attributed = SignatureCheck(state="unverified", signer=Signer("key", "sha256:abc", "key sha256:abc"),
                                method="files", problem="signed by the key the policy lists for orgs [nvidia]",
                                unsigned=("fast_kernels.py",), signed_files=3)
    save(store, replace(report("quantmirror/model", SIGNED, under=policy("default")), signature=attributed))
    app = create_app(Settings(database_url=store.url, policy="default"), resolve=no_hub)
    with TestClient(app, base_url="https://testserver") as client:
        page = client.get(f"/ui/repos/quantmirror/model?revision={SIGNED}").text
    assert "signed with the policy's key sha256:abc; no <code>signatures</code> entry covers this repo" in page
    assert "files are not as signed" not in page and "<code>fast_kernels.py</code>" in page
