"""Output meant for CI logs keeps every id and URL whole when stdout is not a terminal (issue 27 item 2):
rich cuts a non-terminal Console at 80 columns unless it is made by app/cli/console.py."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli.main import app
from app.examples import build_examples
from app.hubfixture import FixtureHub

CANADA = "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP"
URL = re.compile(r"https?://[^\s\"'`)<>]+")


@pytest.fixture(autouse=True)
def no_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # a CI log: no terminal, no COLUMNS


@pytest.fixture(scope="module")
def hub_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("hub")
    build_examples(root)
    with FixtureHub(root) as hub:
        yield hub.url


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def test_vet_text_keeps_the_repo_id_and_every_url_whole(hub_url: str) -> None:
    env = {"HF_ENDPOINT": hub_url}
    code, out, _ = run("vet", CANADA, "--no-store", "--format", "json", env=env)
    doc = json.loads(out)
    urls = {url.rstrip(".,;:") for f in doc["findings"] for url in URL.findall(f"{f['message']} {f.get('evidence')}")}
    assert urls, "the example should carry URLs to check"
    code, text, _ = run("vet", CANADA, "--no-store", env=env)
    assert code == 1, text
    assert f"{CANADA} @ {doc['revision']}" in text.splitlines()[0]
    missing = [url for url in urls if url not in text]
    assert not missing, missing


def test_token_list_keeps_a_long_name_whole(tmp_path: Path) -> None:
    name = "ci-" + "deploy-pipeline-of-nvidia-DeepSeek-V4-Flash-NVFP4-" * 2
    env = {"HFVET_DATABASE_URL": f"sqlite:///{tmp_path / 'store.db'}"}
    assert run("token", "create", "--role", "vetter", "--name", name, env=env)[0] == 0
    code, out, _ = run("token", "list", env=env)
    assert code == 0 and any(name in line for line in out.splitlines()), out


def test_an_error_on_stderr_is_one_whole_line(tmp_path: Path) -> None:
    missing = tmp_path / ("a-very-long-folder-name-for-a-snapshot-" * 4) / "model.safetensors"
    code, _, err = run("scan", str(missing))
    assert code == 2 and any(str(missing) in line for line in err.splitlines()), err
