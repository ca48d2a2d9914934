"""A bad `signatures` entry says what it must be, not a regex or a library's error (issue 29)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from app.core.policy import load_policy
from app.core.policy.errors import PolicyError
from tests.signing_support import key_pair
from tests.unit.core.policy.helpers import MINIMAL, write


def _load(tmp_path: Path, entry: dict[str, object]) -> str:
    doc = yaml.safe_load(MINIMAL)
    doc["signatures"] = [entry]
    with pytest.raises(PolicyError) as raised:
        load_policy(write(tmp_path, yaml.safe_dump(doc)))
    return str(raised.value)


@pytest.mark.parametrize("name", ["", "model.sig ", " model.sig", "a\\b.sig"])
def test_a_file_name_that_cannot_be_the_signature_says_what_a_file_name_must_be(tmp_path: Path, name: str) -> None:
    error = _load(tmp_path, {"orgs": ["nvidia"], "file": name,
                             "signed_by": [{"key": key_pair(tmp_path, "k").public_pem}]})
    assert "`file` must name the signature file as in the repo, e.g. `model.sig`" in error
    assert f"(got {name!r})" in error and "pattern" not in error


def test_a_key_given_as_a_path_says_an_inline_pem_is_expected(tmp_path: Path) -> None:
    error = _load(tmp_path, {"orgs": ["nvidia"], "signed_by": [{"key": "/etc/keys/vendor.pub"}]})
    assert "`key` must be the public key's PEM inline" in error and "not a path" in error
    assert "MalformedFraming" not in error and "'/etc/keys/vendor.pub'" in error
