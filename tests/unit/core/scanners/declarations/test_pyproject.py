"""pyproject.toml reader. Semantics from PEP 621/518/735 and the tools' docs: uv
(docs.astral.sh/uv/concepts/indexes: `[[tool.uv.index]]`, `default = true` replaces PyPI,
`explicit = true` only for pinned packages; concepts/projects/dependencies: `[tool.uv.sources]`
git/url/path/index/workspace), Poetry (dependency-specification: git/url/path/source tables;
repositories: source priority primary/supplemental/explicit) and PDM (config: `[[tool.pdm.source]]`)."""

from __future__ import annotations

import operator
from typing import SupportsIndex

from app.core.scanners.text_rules.declarations import pyproject
from app.core.scanners.text_rules.declarations.common import MAX_MISSES
from tests.unit.core.scanners.declarations.helpers import pairs

PROJECT = '''[project]
name = "demo"
dependencies = [
  "vllm>=0.9",
  "kern @ https://example.invalid/kern-1.0-cp311-linux_x86_64.whl",
  "fork @ git+https://github.com/someone/vllm@main ; python_version >= '3.10'",
]

[project.optional-dependencies]
gpu = ["flash-attn>=2.7"]

[build-system]
requires = ["setuptools>=68", "helper @ https://build.example.invalid/helper.tar.gz"]

[dependency-groups]
dev = ["pytest", {include-group = "lint"}]
lint = ["ruff"]
'''


def test_pep621_build_system_and_dependency_groups() -> None:
    found = pyproject.read(PROJECT)
    assert pairs(found) == [
        ("package", "vllm>=0.9"), ("url", "https://example.invalid/kern-1.0-cp311-linux_x86_64.whl"),
        ("git", "git+https://github.com/someone/vllm@main"), ("package", "flash-attn>=2.7"),
        ("package", "setuptools>=68"), ("url", "https://build.example.invalid/helper.tar.gz"),
        ("package", "pytest"), ("package", "ruff")]
    build = found[5]
    assert build.via == "[build-system] requires" and build.where == "line 13"


UV = '''[project]
name = "demo"
dependencies = ["torch", "sgl", "local"]

[tool.uv]
index-url = "https://mirror.example.invalid/simple"
extra-index-url = ["https://extra.example.invalid/simple"]
find-links = ["https://links.example.invalid/wheels.html"]
override-dependencies = ["numpy @ https://example.invalid/numpy-9-cp311-linux_x86_64.whl"]

[tool.uv.sources]
torch = [
  { index = "fast", marker = "sys_platform == 'linux'" },
  { index = "undeclared" },
]
sgl = { git = "https://github.com/someone/sglang", rev = "abc" }
kern = { url = "https://example.invalid/kern.tar.gz" }
local = { path = "./local" }
member = { workspace = true }

[[tool.uv.index]]
name = "fast"
url = "https://pypi.example.invalid/simple"
explicit = true

[[tool.uv.index]]
name = "only"
url = "https://only.example.invalid/simple"
default = true

[tool.uv.pip]
extra-index-url = ["https://pip.example.invalid/simple"]
'''


def test_uv_sources_indexes_and_settings() -> None:
    found = pyproject.read(UV)
    indexes = {(d.value, d.extra) for d in found if d.kind == "index"}
    assert indexes == {
        ("https://pypi.example.invalid/simple", True),  # explicit: beside PyPI, for torch only
        ("https://only.example.invalid/simple", False),  # default = true replaces PyPI
        ("https://mirror.example.invalid/simple", False), ("https://extra.example.invalid/simple", True),
        ("https://links.example.invalid/wheels.html", True), ("https://pip.example.invalid/simple", True)}
    code = [p for p in pairs(found) if p[0] in ("git", "url")]
    assert code == [("url", "https://example.invalid/numpy-9-cp311-linux_x86_64.whl"),
                    ("git", "https://github.com/someone/sglang"), ("url", "https://example.invalid/kern.tar.gz")]
    pinned = [d for d in found if d.via == "[tool.uv.sources] torch index fast"]
    assert len(pinned) == 1 and pinned[0].value == "https://pypi.example.invalid/simple"
    git = next(d for d in found if d.kind == "git")
    assert git.where == "line 16" and "rev" in git.text


POETRY = '''[tool.poetry.dependencies]
python = "^3.11"
transfomers = "^4.50"
torch = ">=2.7"
vllm = { git = "https://github.com/someone/vllm.git", branch = "dsv4" }
kern = { url = "https://example.invalid/kern-1.0.tar.gz" }
mine = { path = "../mine" }
private = { version = "1.0", source = "corp" }
multi = [
  { version = "1.0", markers = "sys_platform == 'linux'" },
  { git = "https://gitlab.com/someone/multi.git", markers = "sys_platform == 'darwin'" },
]

[tool.poetry.group.dev.dependencies]
pytset = "*"

[[tool.poetry.source]]
name = "corp"
url = "https://corp.example.invalid/simple"
priority = "supplemental"

[[tool.poetry.source]]
name = "main"
url = "https://main.example.invalid/simple"
'''


def test_poetry_dependencies_and_sources() -> None:
    found = pyproject.read(POETRY)
    assert ("package", "python") not in pairs(found)  # the interpreter, not a package
    assert {p for p in pairs(found) if p[0] != "index"} == {
        ("package", "transfomers"), ("package", "torch>=2.7"), ("git", "https://github.com/someone/vllm.git"),
        ("url", "https://example.invalid/kern-1.0.tar.gz"), ("package", "private"), ("package", "multi"),
        ("git", "https://gitlab.com/someone/multi.git"), ("package", "pytset")}
    indexes = {(d.value, d.extra, d.via) for d in found if d.kind == "index"}
    assert ("https://main.example.invalid/simple", False, "[[tool.poetry.source]] main primary") in indexes
    assert ("https://corp.example.invalid/simple", True, "[[tool.poetry.source]] corp supplemental") in indexes
    assert ("https://corp.example.invalid/simple", True, "[tool.poetry.dependencies] private source corp") in indexes


def test_pdm_and_hatch() -> None:
    text = ('[[tool.pdm.source]]\nname = "pypi"\nurl = "https://mirror.example.invalid/simple"\n\n'
            '[[tool.pdm.source]]\nname = "wheels"\nurl = "https://w.example.invalid/"\ntype = "find_links"\n\n'
            '[tool.pdm.dev-dependencies]\ntest = ["-e git+https://github.com/someone/tool.git#egg=tool"]\n\n'
            '[tool.hatch.envs.default]\ndependencies = ["vlllm"]\n')
    found = pyproject.read(text)
    assert [(d.kind, d.value, d.extra) for d in found] == [
        ("index", "https://mirror.example.invalid/simple", False), ("index", "https://w.example.invalid/", True),
        ("git", "git+https://github.com/someone/tool.git#egg=tool", False), ("package", "vlllm", False)]


def test_malformed_toml_reads_nothing_and_says_why() -> None:
    found = pyproject.read('[project]\ndependencies = ["vllm"\n[[tool.uv.index]]\nurl = "https://x.invalid"\n')
    assert list(found) == [] and found.error and "TOML" in found.error


def test_wrong_shapes_are_ignored_not_raised() -> None:
    text = ('project = 3\n[tool]\nuv = "x"\npoetry = []\n[build-system]\nrequires = "setuptools"\n'
            '[dependency-groups]\ndev = 5\n')
    found = pyproject.read(text)
    assert list(found) == [] and found.error is None


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    found = pyproject.read("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert list(found) == [] and found.error


class SearchedText(str):
    """A file's text counting the characters its ``find`` calls pass over: what finding the lines of the
    values costs (tomllib keeps no positions, so each value's line is searched for)."""

    searched = 0

    def find(self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None) -> int:
        hit = super().find(sub, start, end)
        begin = 0 if start is None else operator.index(start)
        self.searched += (hit + len(sub) if hit >= 0 else len(self)) - begin
        return hit


def test_many_values_are_read_in_about_one_pass() -> None:
    # Lines are found by searching forward from the previous value; a quadratic search took minutes here.
    values = "".join(f'  "pkg{i}>=1.0",\n' for i in range(150_000))
    text = SearchedText("[project]\ndependencies = [\n" + values + "]\n")
    found = pyproject.read(text)
    assert text.searched <= len(text)  # from the top each time: ~38 M characters
    assert len(found) == 2000 and found[-1].where == "line 2002"


def test_values_not_written_verbatim_fall_back_without_rescanning() -> None:
    # TOML escapes: "\u0076llm" is "vllm", never found verbatim; after a few misses no more full scans.
    text = SearchedText("[project]\ndependencies = [\n" + '  "\\u0076llm",\n' * 3000 + "]\n" + "# pad\n" * 200_000)
    found = pyproject.read(text)
    assert text.searched <= (2 * MAX_MISSES + 1) * len(text)  # two passes per miss, MAX_MISSES misses; not 3,000
    assert found[0].value == "vllm" and found[0].where == "line 1"
