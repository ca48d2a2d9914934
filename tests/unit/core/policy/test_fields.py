"""app/core/policy/fields.py: misspelt fields in `when` are load errors, with the closest known name."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.policy import PolicyError, load_policy
from app.core.policy.activation import VARIABLES
from app.core.policy.fields import unknown_fields, variable_shapes
from tests.unit.core.policy.helpers import MINIMAL, POLICIES, write


def messages(expr: str, lists: tuple[str, ...] = ()) -> list[str]:
    return [u.message().split(";")[0] for u in unknown_fields(expr, lists)]


@pytest.mark.parametrize(("expr", "expected"), [
    ('repo.teir == "third-party"', "unknown field 'teir' of repo (did you mean 'tier'?)"),
    ('findings.exists(f, f.severty == "high")', "unknown field 'severty' of f (did you mean 'severity'?)"),
    ("files.all(f, f.scaned)", "unknown field 'scaned' of f (did you mean 'scanned'?)"),
    ("waived.exists_one(w, w.rul == 'x')", "unknown field 'rul' of w (did you mean 'rule'?)"),
    ("referenced_repos.exists(r, !r.aproved)", "unknown field 'aproved' of r (did you mean 'approved'?)"),
    ('closure.exists(c, c.gat == "always")', "unknown field 'gat' of c (did you mean 'gate'?)"),
    ("counts.hihg > 0", "unknown field 'hihg' of counts (did you mean 'high'?)"),
    ("max_rank >= severity.critcal", "unknown field 'critcal' of severity (did you mean 'critical'?)"),
    ("has(repo.lookalke)", "unknown field 'lookalke' of repo (did you mean 'lookalike'?)"),  # always false
    ('files[0].pth == ""', "unknown field 'pth' of files[...] (did you mean 'path'?)"),
    ("findings.filter(x, x.rank > 1).exists(y, y.sevrity == 'high')",
     "unknown field 'sevrity' of y (did you mean 'severity'?)"),
    ("repo.zzz", "unknown field 'zzz' of repo"),  # nothing close: no suggestion
])
def test_a_misspelt_field_is_named_with_a_suggestion(expr: str, expected: str) -> None:
    assert messages(expr) == [expected]


def test_the_policys_own_list_names_are_the_fields_of_lists() -> None:
    misspelt = messages('"x" in lists.trused', ("trusted",))
    assert misspelt == ["unknown field 'trused' of lists (did you mean 'trusted'?)"]
    assert messages('"x" in lists.trusted', ("trusted",)) == []


@pytest.mark.parametrize("expr", [
    "has(repo.facts.gated) && repo.facts.cardData.license == 'mit'",  # hub metadata: open
    "findings.map(f, f.path).exists(p, p.x)",  # map() results are not followed
    "lists.exists(k, k.y)",  # a map iterates its keys
    "findings.exists(f, f.source_owner != null && f.vendor_source && f.kind == 'execution')",
    "max_severity == 'none' && formats.exists(x, x in code_formats)",
])
def test_what_cannot_be_known_or_is_right_is_not_judged(expr: str) -> None:
    assert messages(expr) == []


def test_every_list_of_maps_variable_has_its_item_fields_known() -> None:
    """The probe puts one item in every list: else a typo inside its macro would pass unseen."""
    shapes = dict(variable_shapes(()))
    for variable in VARIABLES:
        if variable.type == "list(map)":
            item = shapes[variable.name].item
            assert item is not None and item.fields, variable.name


def test_the_shipped_policies_use_only_known_fields() -> None:
    for path in POLICIES.glob("*.yaml"):
        load_policy(path)


def test_loading_names_file_line_rule_and_field(tmp_path: Path) -> None:
    bad = write(tmp_path, MINIMAL.replace("repo.tier ==", "repo.teir =="))
    with pytest.raises(PolicyError) as err:
        load_policy(bad)
    (issue,) = err.value.issues
    assert (issue.file, issue.line) == (str(bad), 12)
    assert issue.message.startswith("rule 'vendor-clean': unknown field 'teir' of repo (did you mean 'tier'?); "
                                    "it has: facts, id, lookalike")
