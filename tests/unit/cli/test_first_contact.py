"""A newcomer's path onward (issue 27 items 3 and 9): `--version`, what `serve` says at start, a port in
use as one line naming it, and `hub serve` on loopback unless told otherwise."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

import app.hubfixture as hubfixture
from app import __version__
from app.cli.main import app
from app.cli.serve import startup_lines
from app.core.scanners import all_scanners
from app.services.policies import active_policy
from app.settings import Settings

runner = CliRunner()


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        yield sock.getsockname()[1]


def test_version_names_hfvet_the_active_policy_and_every_engine() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    policy = active_policy(Settings())
    assert result.stdout.splitlines()[0] == f"hfvet {__version__}"
    assert f"policy {policy.name} sha256:{policy.sha256}" in result.stdout
    for scanner in all_scanners():
        assert f"  {scanner.name} {scanner.version()}" in result.stdout.splitlines()


def test_serve_says_which_hub_store_and_dashboard_it_uses_with_the_password_masked() -> None:
    settings = Settings().model_copy(update={
        "hf_endpoint": "http://mirror.example:8090",
        "database_url": SecretStr("postgresql+psycopg://hfvet:s3cret@db/hfvet")})
    lines = "\n".join(startup_lines(settings, "0.0.0.0", 8123))  # noqa: S104 - only printed
    assert "hub http://mirror.example:8090 (HF_ENDPOINT)" in lines
    assert "postgresql+psycopg://hfvet:***@db/hfvet" in lines and "s3cret" not in lines
    assert "http://127.0.0.1:8123/ui/" in lines
    assert "attestations: none signed (HFVET_ATTESTATION_KEY unset" in lines
    assert "policy" not in lines  # named only when given
    named = "\n".join(startup_lines(settings, "127.0.0.1", 8123, policy="default (sha256 0123456789ab)"))
    assert "hfvet serve: policy default (sha256 0123456789ab) (HFVET_POLICY; GET /policy)" in named
    signing = "\n".join(startup_lines(settings, "127.0.0.1", 8123, signs="ab" * 32))
    assert "attestations signed with key abababababababab (HFVET_ATTESTATION_KEY" in signing


@pytest.mark.parametrize("command", [["serve"], ["hub", "serve", "--root", "."]], ids=" ".join)
def test_a_port_in_use_is_one_line_naming_it_and_the_flag(command: list[str], taken_port: int) -> None:
    result = runner.invoke(app, [*command, "--port", str(taken_port)])
    assert result.exit_code == 2, result.output
    assert f"port {taken_port} on 127.0.0.1 is already in use" in result.stderr and "--port" in result.stderr
    assert "Traceback" not in result.output


def test_a_hub_port_in_use_names_the_hub_port_flag(taken_port: int) -> None:
    result = runner.invoke(app, ["serve", "--port", "0", "--hub-port", str(taken_port)])
    assert result.exit_code == 2, result.output
    assert f"port {taken_port} on 127.0.0.1 is already in use" in result.stderr and "--hub-port" in result.stderr


def test_serve_names_the_hub_endpoint_on_its_own_port_too_and_its_settings(tmp_path: Path) -> None:
    settings = Settings().model_copy(update={"hub_cache_dir": tmp_path, "read_auth": True})
    lines = startup_lines(settings, "127.0.0.1", 8123, hub_port=8124)
    assert lines[-2].startswith("hfvet serve: Hub endpoint HF_ENDPOINT=http://127.0.0.1:8123/hub or "
                                "HF_ENDPOINT=http://127.0.0.1:8124")
    assert "reads need a token (HFVET_READ_AUTH)" in lines[-1] and f"blob cache {tmp_path}" in lines[-1]
    assert "moved branch: newest-approved" in lines[-1] and "unvetted: refused" in lines[-1]


def test_an_unusable_blob_cache_folder_is_one_line_and_exit_2(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("HFVET_DATABASE_URL", f"sqlite:///{tmp_path / 'store.db'}")
    monkeypatch.setenv("HFVET_HUB_CACHE_DIR", str(blocker / "cache"))
    result = runner.invoke(app, ["serve", "--port", "0"])
    assert result.exit_code == 2, result.output
    assert f"HFVET_HUB_CACHE_DIR: cannot use {blocker / 'cache'}" in result.stderr
    assert "Traceback" not in result.output


def test_the_same_port_twice_is_refused_before_binding() -> None:
    result = runner.invoke(app, ["serve", "--port", "18555", "--hub-port", "18555"])
    assert result.exit_code == 2 and "--hub-port 18555 is --port too" in result.stderr, result.output


def test_hub_serve_on_a_port_in_use_writes_no_examples(taken_port: int, tmp_path: Path) -> None:
    root = tmp_path / "hub"
    result = runner.invoke(app, ["hub", "serve", "--root", str(root), "--examples", "--port", str(taken_port)])
    assert result.exit_code == 2 and "already in use" in result.stderr, result.output
    assert not root.exists()


def test_hub_serve_binds_loopback_by_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    def fake_serve(root: Path, host: str, port: int, **kwargs: Any) -> None:
        seen.update(host=host, bound=kwargs["sock"].getsockname()[0])
        kwargs["sock"].close()

    monkeypatch.setattr(hubfixture, "serve", fake_serve)
    result = runner.invoke(app, ["hub", "serve", "--root", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert seen == {"host": "127.0.0.1", "bound": "127.0.0.1"}
