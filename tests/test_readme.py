"""The README stays true: its two commands, CI's command, the generated checks table and every setting."""

from pathlib import Path

from app.cli.checks import BEGIN, END, render_checks_markdown

ROOT = Path(__file__).resolve().parents[1]


def test_readme_starts_with_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    first_block = readme.split("```")[1]
    assert "bash scripts/demo.sh" in first_block
    assert "bash scripts/test.sh" in first_block


def test_ci_runs_the_readme_test_command() -> None:
    assert "bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text()


def test_checks_table_matches_the_scanners_metadata() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index(BEGIN) : readme.index(END) + len(END)]
    assert section == render_checks_markdown(), "run `hfvet checks --markdown` and paste it into README.md"


def test_every_setting_is_named_in_the_readme() -> None:
    from app.settings import Settings

    readme = (ROOT / "README.md").read_text()
    prefix = str(Settings.model_config.get("env_prefix", ""))
    missing = []
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        names = [str(n) for n in getattr(alias, "choices", [])] if alias else [prefix + name]
        if not any(n.upper() in readme for n in names):
            missing.append(names[0].upper())
    assert missing == [], f"document these environment variables in README.md: {missing}"
