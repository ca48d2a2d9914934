"""declarations_of: which reader a file gets, by name and content."""

from __future__ import annotations

import pytest

from app.core.scanners.text_rules.declarations import declarations_of, read_declarations
from tests.unit.core.scanners.declarations.helpers import pairs

REQ = "--extra-index-url https://x.example.invalid/simple\n"


@pytest.mark.parametrize("path", ["requirements.txt", "dev-requirements.txt", "requirements-gpu.in",
                                  "requirements/base.txt", "constraints-cu12.txt", "deps.pip"])
def test_requirements_names(path: str) -> None:
    assert pairs(declarations_of(path, REQ)) == [("index", "https://x.example.invalid/simple")]


@pytest.mark.parametrize("path", ["notes.txt", "README.md", "setup.cfg"])
def test_other_names_are_not_requirements_files(path: str) -> None:
    assert declarations_of(path, REQ) == []


def test_extensionless_uv_scripts_read_their_metadata() -> None:
    text = '#!/usr/bin/env -S uv run --script\n# /// script\n# dependencies = ["vlllm"]\n# ///\n'
    assert pairs(declarations_of("bin/serve", text)) == [("package", "vlllm")]
    assert declarations_of("bin/serve", text.replace("uv run", "python3")) == []


def test_launcher_images_are_read_in_every_file() -> None:
    text = '[project]\nname = "x"\n# srun --container-image=someone/img:1\n'
    assert pairs(declarations_of("pyproject.toml", text)) == [("image", "someone/img:1")]


def test_errors_only_for_files_that_are_declarations_by_name() -> None:
    assert read_declarations("pyproject.toml", "[[[").error
    assert read_declarations("Chart.yaml", "a: [").error
    assert read_declarations("config.yaml", "a: [").error is None
    assert read_declarations("config.toml", "[[[").error is None
