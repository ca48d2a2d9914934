"""libyaml's loader (the fast one) gives exactly what PyYAML's own gives: data, lines and error lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from app.core.policy import yamlmarks
from app.core.policy.errors import PolicyError

from .helpers import POLICIES

pytestmark = pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML built without libyaml")
LOADERS = (yamlmarks._PyLineLoader, yamlmarks._CLineLoader)


def marked(value: Any) -> Any:
    """The data with every line number the loader recorded, as plain comparable values."""
    if isinstance(value, yamlmarks.LineDict):
        return ("map", value.line, {k: (value.lines[k], marked(v)) for k, v in value.items()})
    if isinstance(value, yamlmarks.LineList):
        return ("seq", value.line, value.lines, [marked(v) for v in value])
    return (type(value).__name__, value)


def test_the_fast_loader_is_the_one_used() -> None:
    assert yamlmarks._LineLoader is yamlmarks._CLineLoader
    assert issubclass(yamlmarks._CLineLoader, yaml.CSafeLoader)


@pytest.mark.parametrize("path", sorted(POLICIES.rglob("*.y*ml")), ids=lambda p: p.name)
def test_both_loaders_read_every_policy_file_alike(path: Path) -> None:
    python, libyaml = (marked(yamlmarks.load_yaml(path, loader)) for loader in LOADERS)
    assert python == libyaml
    assert python[0] == "map"


@pytest.mark.parametrize(("text", "line", "says"), [
    ("a: 1\nb:\n  c: 2\n  c: 3\n", 4, "duplicate key 'c'"),
    ("a: [1, 2\nb: 3\n", None, "invalid YAML"),
    ("a: 1\n  b: 2\n", 2, "invalid YAML"),
    ("? [1, 2]\n: x\n", 1, "unhashable key"),
    ("a: !!python/object:os.system x\n", 1, "invalid YAML"),
])
def test_both_loaders_report_the_same_error_line(text: str, line: int | None, says: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    issues = []
    for loader in LOADERS:
        with pytest.raises(PolicyError) as caught:
            yamlmarks.load_yaml(path, loader)
        [issue] = caught.value.issues
        assert says in issue.message
        issues.append(issue.line)
    assert issues[0] == issues[1]
    if line is not None:
        assert issues[0] == line
