"""Parse trees on disk come back exactly as celpy's parser makes them; any bad file means a fresh parse."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import lark
import pytest
import yaml

from app.core import sealed_cache
from app.core.policy import cel, parse_cache
from app.core.policy.cel import CelCompileError, canonical_cel

from .helpers import POLICIES, REPO_ROOT

# Beyond the policies: the rest of the CEL syntax (literals, macros, maps, escapes, several lines).
EXTRA = [
    'x == 1u || y == -2.5e3 || z == b"\\x00" || w == null || v == r"\\d" || u == """multi\nline"""',
    '{"a": [1, 2, 3][0]}["a"] == 1 ? size("\\u00e9") > 0 : !false',
    "findings.all(f, f.severity != 'critical') && findings.map(f, f.rule).exists_one(r, r == 'x')",
    "has(repo.tier)\n  && repo.id.matches('^a/')\n  && int(max_rank) % 2 == 0 && -(-1) in [1]",
    "type(x) == string && dyn(1) == 1 && timestamp('2024-01-01T00:00:00Z') < now",
]


def policy_expressions() -> list[str]:
    """Every `when` under policies/ (the policies and the ones the fixture cases bring), as loading sees it."""
    found: set[str] = set()
    for path in sorted(POLICIES.rglob("*.y*ml")):
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        rules = document.get("rules") if isinstance(document, dict) else None
        found |= {canonical_cel(rule["when"]) for rule in rules or [] if isinstance(rule, dict) and "when" in rule}
    return sorted(found)


def fresh(expr: str) -> Any:
    return cel._environment().compile(expr)


def shape(node: Any) -> Any:
    """Everything downstream can read of a tree: classes, labels, every meta and token field."""
    if isinstance(node, lark.Token):
        return ("token", type(node), {name: getattr(node, name) for name in lark.Token.__slots__})
    assert isinstance(node, lark.Tree)
    return ("tree", type(node), shape(node.data), vars(node.meta), [shape(child) for child in node.children])


@pytest.fixture
def parses() -> list[str]:
    return []


@pytest.fixture
def counting(parses: list[str]) -> Any:
    def parse(expr: str) -> Any:
        parses.append(expr)
        return fresh(expr)

    return parse


def cache_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.json"))


def test_the_policies_have_expressions_to_check() -> None:
    assert len(policy_expressions()) >= 20
    assert any("\n" not in e and "exists(" in e for e in policy_expressions())


@pytest.mark.parametrize("expr", policy_expressions() + EXTRA)
def test_a_cached_tree_is_identical_to_a_fresh_parse(expr: str, tmp_path: Path, counting: Any,
                                                     parses: list[str]) -> None:
    saved = parse_cache.cached_tree(expr, counting, tmp_path)
    restored = parse_cache.cached_tree(expr, counting, tmp_path)
    assert parses == [expr]  # the second came from the file
    assert restored is not saved
    assert shape(restored) == shape(fresh(expr))
    assert restored == fresh(expr)  # lark's own comparison too


def test_compile_cel_gives_fast_path_and_celpy_the_cached_tree(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    expr = 'findings.exists(f, f.severity == "critical") || repo.id.matches("^evil/")'
    cel.compile_cel.cache_clear()
    cel.compile_cel(expr)
    cel.compile_cel.cache_clear()  # a new process, as far as this cache goes
    program = cel.compile_cel(expr)
    cel.compile_cel.cache_clear()
    assert len(cache_files(parse_cache.cache_dir())) == 1
    assert shape(program.tree) == shape(fresh(expr))
    assert program.runner.ast is program.tree
    activation = cel.Activation({"findings": [{"severity": "low"}], "repo": {"id": "evil/x"}})
    assert program.fast is None  # `matches` is outside the fast subset: celpy evaluates the cached tree
    assert cel.run_bool(program, activation) is True


def test_another_expression_is_another_file(tmp_path: Path, counting: Any, parses: list[str]) -> None:
    parse_cache.cached_tree("a == 1", counting, tmp_path)
    parse_cache.cached_tree("a == 2", counting, tmp_path)
    parse_cache.cached_tree("a == 1", counting, tmp_path)
    assert parses == ["a == 1", "a == 2"]
    assert len(cache_files(tmp_path)) == 2


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "seal-only"])
def test_a_corrupt_file_is_parsed_again_and_rewritten(damage: str, tmp_path: Path, counting: Any,
                                                      parses: list[str]) -> None:
    expr = "size(findings) > 2 && repo.tier == 'trusted'"
    parse_cache.cached_tree(expr, counting, tmp_path)
    [saved] = cache_files(tmp_path)
    good = saved.read_bytes()
    middle = len(good) // 2
    saved.write_bytes({"flip": good[:middle] + bytes([good[middle] ^ 1]) + good[middle + 1:],
                       "truncate": good[:-7], "empty": b"", "seal-only": good[:32]}[damage])
    tree = parse_cache.cached_tree(expr, counting, tmp_path)
    assert parses == [expr, expr]
    assert shape(tree) == shape(fresh(expr))
    assert saved.read_bytes() == good


def test_a_file_sealed_for_another_expression_is_not_used(tmp_path: Path, counting: Any,
                                                          parses: list[str]) -> None:
    parse_cache.cached_tree("repo.tier == 'trusted'", counting, tmp_path)
    [other] = cache_files(tmp_path)
    mine = tmp_path / f"{parse_cache.expression_key('false')[:40]}.json"
    other.rename(mine)  # a well-sealed file, under the name of another key
    assert shape(parse_cache.cached_tree("false", counting, tmp_path)) == shape(fresh("false"))
    assert parses == ["repo.tier == 'trusted'", "false"]


@pytest.mark.parametrize("payload", [
    ["tree"], ["token", "IDENT", "x"], {"tree": []}, ["tree", "expr", None, [["token", "IDENT", 1, *[None] * 6]]],
    ["tree", "expr", {"line": "1"}, []], ["tree", "expr", None, [["module", "os", "system", *[None] * 6]]],
    "not a tree",
])
def test_a_sealed_payload_that_is_not_a_tree_is_parsed_again(payload: Any, tmp_path: Path, counting: Any,
                                                             parses: list[str]) -> None:
    """Written by a foreign or future hfvet with the right seal: still only a tree of known shape is used."""
    key = parse_cache.expression_key("true")
    body = json.dumps(payload).encode()
    (tmp_path / f"{key[:40]}.json").write_bytes(sealed_cache.seal(key, body) + body)
    assert shape(parse_cache.cached_tree("true", counting, tmp_path)) == shape(fresh("true"))
    assert parses == ["true"]


def test_an_unwritable_cache_still_gives_the_tree(tmp_path: Path, counting: Any, parses: list[str]) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    for _ in range(2):
        assert shape(parse_cache.cached_tree("x > 1", counting, blocker / "cache")) == shape(fresh("x > 1"))
    assert parses == ["x > 1", "x > 1"]


def test_syntax_errors_are_reported_and_not_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cel.compile_cel.cache_clear()
    with pytest.raises(CelCompileError, match="line 1, column 6"):
        cel.compile_cel("a == (")
    assert not list(tmp_path.rglob("*.json"))


def test_the_key_names_the_lark_version(monkeypatch: pytest.MonkeyPatch) -> None:
    before = parse_cache.expression_key("x")
    parse_cache.parser_identity.cache_clear()
    monkeypatch.setattr(lark, "__version__", "0.0.0-other")
    try:
        assert parse_cache.expression_key("x") != before
    finally:
        monkeypatch.undo()
        parse_cache.parser_identity.cache_clear()
    assert parse_cache.expression_key("x") == before != parse_cache.expression_key("x ")


def test_the_cache_lives_under_xdg_cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert parse_cache.cache_dir() == tmp_path / "hfvet" / "cel-trees"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert parse_cache.cache_dir() == tmp_path / ".cache" / "hfvet" / "cel-trees"


WARM_LOAD = """
import sys
from app.core.policy import cel, load_policy
load_policy(sys.argv[1])
print(sorted(m for m in ("celpy", "lark") if m in sys.modules))
program = cel.compile_cel('repo.id.matches("^a/")')  # outside the fast subset: celpy is needed now
print(cel.run_bool(program, cel.Activation({"repo": {"id": "a/b"}})), "celpy" in sys.modules)
"""


def test_a_warm_cache_loads_a_policy_without_celpy(tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT)}

    def run() -> list[str]:
        result = subprocess.run([sys.executable, "-c", WARM_LOAD, str(POLICIES / "default.yaml")], env=env,
                                cwd=REPO_ROOT, capture_output=True, text=True, timeout=120, check=True)
        return result.stdout.splitlines()

    assert run()[0] == "['celpy', 'lark']"  # cold: parsed, so celpy built its parser
    assert run() == ["['lark']", "True True"]  # warm: no celpy until a rule falls back to it
