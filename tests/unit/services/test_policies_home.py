"""The active policy is chosen in app/services/policies.py alone, and names are imported from where they are defined."""

from __future__ import annotations

import re
from pathlib import Path

APP = Path(__file__).resolve().parents[3] / "app"
_REEXPORT = re.compile(r"import (\w+) as \1\b")


def test_no_use_case_re_exports_a_name_it_imports() -> None:
    """gating.py once re-exported outcomes.py's names; importers now import them from outcomes.py."""
    services = APP / "services"
    assert not [p.name for p in services.rglob("*.py") if _REEXPORT.search(p.read_text(encoding="utf-8"))]


def test_the_interim_choice_is_written_only_in_services_policies() -> None:
    writers = {str(p.relative_to(APP)) for p in APP.rglob("*.py") if '"interim"' in p.read_text(encoding="utf-8")}
    assert writers == {"services/policies.py"}


def test_a_policy_argument_is_resolved_only_in_services_policies() -> None:
    """`scan --policy strict` and `policy diff default strict` read a name the same way: load_named."""
    callers = {str(p.relative_to(APP)) for p in APP.rglob("*.py")
               if ".resolve_policy(" in p.read_text(encoding="utf-8")}
    assert callers == {"services/policies.py"}
