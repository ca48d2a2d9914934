"""The gate's fast twins share their rules, each written once (docs/gate.md#fast-twins): a grep proves it."""

from __future__ import annotations

import re
from pathlib import Path

APP = Path(__file__).resolve().parents[3] / "app"


def _writers(pattern: str) -> list[str]:
    found = re.compile(pattern)
    return sorted(str(p.relative_to(APP)) for p in APP.rglob("*.py") if found.search(p.read_text()))


def test_an_answer_is_printed_in_one_place() -> None:
    assert _writers(r"json\.dumps\(doc, indent=2\)") == ["cli/gate_answer.py"]


def test_the_remote_gate_settings_are_read_from_the_environment_in_one_place() -> None:
    assert _writers(r"HFVET_(SERVER|TOKEN)\"\)|envvar=\"HFVET_(SERVER|TOKEN)|environ\.get\(\"HFVET_") == []
    assert _writers(r"os\.environ\.get\(ENV_PREFIX") == ["setting_checks.py"]


def test_the_restamp_rule_is_written_once() -> None:
    assert _writers(r"isdisjoint\(.*depends_on") == ["services/gating.py"]


def test_every_fast_twin_is_named_after_its_slow_module_and_names_it() -> None:
    for twin in ("cli/gate_fast.py", "api/routes/gate_fast.py"):
        slow = twin.replace("_fast.py", ".py")
        assert (APP / slow).exists()
        assert (APP / twin).read_text().startswith('"""The fast twin of '), twin
        assert f"app/{slow}" in (APP / twin).read_text()
