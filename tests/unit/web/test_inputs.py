"""The dashboard accepts the ids the API accepts for the same action (both translate app.core.ids' refusal)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.api import validation
from app.api.errors import ApiError
from app.web import inputs
from app.web.page import PageError

REPOS = ["nvidia/model", "_org/x", "org/x-", "org/-x", "a--b/c", "org/x.git", "a/b/c", "nvidia", "café/x"]
REVISIONS = ["main", "v1.0", "my_branch", "refs/pr/1", "-x", "a//b", "x/", ".x", "a..b", "a b"]
ORGS = ["nvidia", "_org", "org-", "a--b", "a/b", "café"]


def taken(check: Callable[[str], object], value: str) -> bool:
    try:
        check(value)
    except (ApiError, PageError):
        return False
    return True


@pytest.mark.parametrize(("web", "api", "value"), [
    *((inputs.repo_id, validation.repo_id, v) for v in REPOS),
    *((inputs.revision, validation.revision, v) for v in REVISIONS),
    *((inputs.org, validation.org, v) for v in ORGS),
])
def test_the_dashboard_and_the_api_take_the_same_ids(web: Callable[[str], object], api: Callable[[str], str],
                                                     value: str) -> None:
    assert taken(web, value) is taken(api, value)


def test_the_dashboard_trims_a_form_and_defaults_the_revision() -> None:
    assert inputs.repo_id(" nvidia/model ") == "nvidia/model"
    assert inputs.revision("  ") == "main"
    assert inputs.org(" ") is None
