"""Every command's --help reads the same way (issue 27 item 9): an Examples block, `ORG/NAME` rather than
`{repo}` in the usage line, no `<bool>` for a flag, a choice shown with its choices; bare `hfvet` is help."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from app.cli.main import COMMANDS, app, load_command
from app.core.principals import ROLES

runner = CliRunner()


def leaf_commands() -> list[tuple[str, ...]]:
    """Every runnable command's words: `scan`, `token create`, `policy diff`..."""
    found: list[tuple[str, ...]] = []
    for name in COMMANDS:
        command = load_command(name)
        subs = getattr(command, "commands", None)
        found += [(name, sub) for sub in subs] if subs else [(name,)]
    return found


def help_of(*words: str) -> str:
    result = runner.invoke(app, [*words, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("words", leaf_commands(), ids=" ".join)
def test_every_command_help_has_examples_and_plain_metavars(words: tuple[str, ...]) -> None:
    text = help_of(*words)
    examples = text.split("Examples:", 1)
    assert len(examples) == 2, f"no Examples block in `hfvet {' '.join(words)} --help`"
    assert f"hfvet {' '.join(words)}" in examples[1]  # an example runs this very command
    usage = next(line for line in text.splitlines() if "Usage:" in line)
    assert "{" not in usage, usage
    assert "<bool>" not in text
    for raw in ("<list[", "<str>", "range>", "x<=", "x>="):  # typer's types, not words
        assert raw not in text, f"`{raw}` in `hfvet {' '.join(words)} --help`"


def test_repo_arguments_read_org_name_and_format_shows_its_choices() -> None:
    for command in ("vet", "gate", "review", "download"):
        assert f"hfvet {command} [OPTIONS] ORG/NAME" in help_of(command)
    assert "<text | json>" in help_of("gate")
    choices = "<text | json | sarif | cyclonedx>"
    assert choices in help_of("vet") and choices in help_of("scan")
    assert "<reader | vetter | reviewer | admin>" in help_of("token", "create")


def test_types_read_as_words() -> None:
    assert "REPORTS..." in help_of("policy", "diff") and "FILES..." in help_of("policy", "check")
    assert "<int> [0-65535]" in help_of("serve") and "<int> [1-64]" in help_of("worker")
    assert "<number> [at least 1]" in help_of("vet")
    assert "<number>  " in help_of("hub", "serve")  # x>=0 tells nothing: no range
    assert "--policy  " in help_of("scan") and "<name|path>" in help_of("scan")


def test_serve_host_says_what_another_address_needs() -> None:
    assert "(default 127.0.0.1; any other address needs a live API token)" in help_of("serve")


@pytest.mark.parametrize("columns", ["60", "80"])
def test_choices_wrap_between_words_on_a_narrow_terminal(columns: str) -> None:
    text = runner.invoke(app, ["token", "create", "--help"], env={"COLUMNS": columns}).output
    for role in ROLES:
        assert role in text, text


def test_the_role_choices_are_the_roles() -> None:
    from app.cli.token import Role

    assert tuple(Role) == ROLES


def test_bare_hfvet_prints_its_help_and_exits_0() -> None:
    result = runner.invoke(app, [])
    assert result.exit_code == 0 and "Usage: hfvet" in result.output and "vet" in result.output


@pytest.mark.parametrize("group", ["token", "policy", "db", "hub"])
def test_a_bare_group_prints_its_help_and_exits_0(group: str) -> None:
    result = runner.invoke(app, [group])
    assert result.exit_code == 0 and f"Usage: hfvet {group}" in result.output, result.output
