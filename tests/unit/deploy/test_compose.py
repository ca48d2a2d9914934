"""docker-compose.yml and the Dockerfile, checked without Docker: the stack's order, its healthchecks,
its secrets, and that every command it runs is a real `hfvet` command with real options."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from app.cli.main import COMMANDS, load_command
from app.db import session
from app.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]
DOCKERFILE = (ROOT / "Dockerfile").read_text()
HFVET_SERVICES = ("migrate", "api", "worker", "hub")


def parses(argv: list[str]) -> None:
    """Parse ``argv`` as `hfvet` would, down to the leaf command (unknown commands or options raise)."""
    name, *rest = argv
    command = load_command(name)
    subcommands = getattr(command, "commands", None)
    if subcommands is not None:  # a group (db, hub): its first argument names the command
        name, *rest = rest
        command = subcommands[name]
    command.make_context(name, rest)  # options and their values, checked as the CLI checks them


def test_the_stack_starts_in_order_postgres_migrate_then_api_and_workers() -> None:
    assert SERVICES["postgres"]["healthcheck"]["test"][0] == "CMD-SHELL"
    assert SERVICES["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert SERVICES["migrate"]["command"] == ["db", "upgrade"] and SERVICES["migrate"]["restart"] == "no"
    for name in ("api", "worker"):
        assert SERVICES[name]["depends_on"] == {"migrate": {"condition": "service_completed_successfully"}}
        assert SERVICES[name]["deploy"]["replicas"] == 2
    assert SERVICES["hub"]["profiles"] == ["demo"]  # only with --profile demo


@pytest.mark.parametrize("service", HFVET_SERVICES)
def test_every_hfvet_service_runs_a_real_command_of_the_image(service: str) -> None:
    command = SERVICES[service]["command"]
    assert command[0] in COMMANDS
    parses(command)


def test_a_command_that_is_not_there_would_be_caught() -> None:
    with pytest.raises(Exception, match="--threads"):  # click's usage error: the check above can fail
        parses(["worker", "--threads", "4"])


def test_the_image_runs_the_installed_hfvet_entry_point() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert 'ENTRYPOINT ["hfvet"]' in DOCKERFILE and "hfvet" in scripts
    assert SERVICES["api"]["image"] == SERVICES["worker"]["image"]  # one image, several roles


def test_the_image_is_multi_stage_slim_non_root_with_a_healthcheck() -> None:
    stages = re.findall(r"^FROM (\S+)", DOCKERFILE, re.M)
    assert len(stages) == 2 and "slim" in re.search(r"ARG PYTHON=(\S+)", DOCKERFILE)[1]  # type: ignore[index]
    final = DOCKERFILE.split("\nFROM ")[-1]
    assert re.search(r"^USER 10001$", final, re.M) and "HEALTHCHECK" in final
    assert not re.search(r"apt-get|gcc|build-essential|pip install", final)  # nothing is built in the final stage
    assert "COPY --from=build /opt/hfvet /opt/hfvet" in final


def test_the_image_ships_the_migrations_where_the_package_looks_for_them() -> None:
    installed = Path("/opt/hfvet/lib/python3.11/site-packages/app/db/session.py")
    expected = installed.parents[2] / session.MIGRATIONS.name  # the rule app.db.session uses
    assert f"COPY migrations {expected}" in DOCKERFILE


def test_secrets_come_from_the_environment_with_no_default() -> None:
    text = (ROOT / "docker-compose.yml").read_text()
    assert "${POSTGRES_PASSWORD:?" in SERVICES["postgres"]["environment"]["POSTGRES_PASSWORD"]
    env = SERVICES["api"]["environment"]
    assert "${POSTGRES_PASSWORD:?" in env["HFVET_DATABASE_URL"]
    assert env["HF_TOKEN"] is None and env["HFVET_WEBHOOK_SECRET"] is None  # passed through, never defaulted
    assert not re.search(r"PASSWORD:-|SECRET:-|TOKEN:-", text)


def test_the_environment_names_real_settings() -> None:
    fields = {f"HFVET_{name.upper()}" for name in Settings.model_fields} | {"HF_ENDPOINT", "HF_TOKEN"}
    for service in HFVET_SERVICES:
        names = set(SERVICES[service]["environment"]) - {"HFVET_HEALTH_URL"}  # read by the image's HEALTHCHECK
        assert names <= fields, f"{service}: {names - fields}"
    assert SERVICES["api"]["environment"]["HFVET_QUEUE"] == "procrastinate"
