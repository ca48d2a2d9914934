"""The repo page's ML-BOM (CycloneDX) link per vetted commit, and its download: real vets of the example repos."""

from __future__ import annotations

import json
import re

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from fastapi.testclient import TestClient

from tests.integration.vetted import APPROVE_REPO, REJECT_REPO, REVIEW_REPO
from tests.integration.web.conftest import World

LINK = re.compile(r'href="([^"]+)"[^>]*data-testid="bom-link"')


@pytest.mark.parametrize(("repo", "key", "verdict"), [(APPROVE_REPO, "approve", "approve"),
                                                      (REJECT_REPO, "reject", "reject"),
                                                      (REVIEW_REPO, "review", "review")])
def test_each_vetted_commit_links_its_bom_which_is_valid_cyclonedx(client: TestClient, world: World, repo: str,
                                                                  key: str, verdict: str) -> None:
    sha = world.shas[key]
    link = LINK.search(client.get(f"/ui/repos/{repo}", params={"revision": sha}).text)
    assert link and link.group(1) == f"/ui/repos/{repo}/bom/{sha}.cdx.json"
    download = client.get(link.group(1))
    assert download.status_code == 200 and "attachment" in download.headers["content-disposition"]
    assert download.headers["content-type"] == "application/vnd.cyclonedx+json; version=1.6"
    error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(download.text)
    assert error is None, str(error)[:2000]
    doc = json.loads(download.text)
    assert {p["name"]: p["value"] for p in doc["metadata"]["properties"]}["hfvet:verdict"] == verdict
    [model] = [c for c in doc["components"] if c["type"] == "machine-learning-model" and "components" in c]
    assert model["version"] == sha and model["externalReferences"][0]["url"].startswith(world.hub_url)
    hashed = [f for f in model["components"] if "hashes" in f]
    assert hashed or verdict != "approve"  # the approved vendor repo ships LFS weights, known by sha256
    assert download.content == client.get(f"/bom/{repo}/{sha}").content  # the API's bytes


def test_an_unvetted_commit_has_no_bom(client: TestClient) -> None:
    answer = client.get(f"/ui/repos/{APPROVE_REPO}/bom/{'e' * 40}.cdx.json")
    assert answer.status_code == 404 and "never been vetted" in answer.text
