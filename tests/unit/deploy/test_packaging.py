"""pyproject.toml in the form the pinned build backend takes without warnings."""

import tomllib
from pathlib import Path

PYPROJECT = tomllib.loads((Path(__file__).resolve().parents[3] / "pyproject.toml").read_text())


def test_the_license_is_an_spdx_string_and_the_backend_knows_that_form() -> None:
    # setuptools warns at every build on the old `{ text = ... }` table; the string form needs >=77
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    assert "setuptools>=77" in PYPROJECT["build-system"]["requires"]
