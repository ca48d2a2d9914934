"""PEP 723 reader, from the specification (packaging.python.org inline-script-metadata): the
reference regex, one `#` and one space removed per line, a second `script` block is an error,
an unclosed block is ignored, and `[tool.uv]` is read as in pyproject (uv's scripts guide)."""

from __future__ import annotations

from app.core.scanners.text_rules.declarations import inline_script
from tests.unit.core.scanners.declarations.helpers import pairs

SCRIPT = '''#!/usr/bin/env -S uv run --script
# /// script
# requires-python = ">=3.11"
# dependencies = [
#   "vllm @ git+https://github.com/someone/vllm@dsv4",
#   "transfomers",
# ]
#
# [tool.uv]
# extra-index-url = ["https://pypi.example.invalid/simple"]
#
# [tool.uv.sources]
# kern = { url = "https://example.invalid/kern.whl" }
# ///
print("hfvet-test")
'''


def test_dependencies_and_uv_settings_of_a_script() -> None:
    found = inline_script.read(SCRIPT)
    assert pairs(found) == [("git", "git+https://github.com/someone/vllm@dsv4"), ("package", "transfomers"),
                            ("index", "https://pypi.example.invalid/simple"), ("url", "https://example.invalid/kern.whl")]
    assert found[0].where == "line 5" and found[0].via == "script dependencies" and found.error is None


def test_crlf_scripts_are_read_like_python_reads_them() -> None:
    found = inline_script.read(SCRIPT.replace("\n", "\r\n"))
    assert len(found) == 4


def test_unclosed_block_and_other_types_are_ignored() -> None:
    unclosed = '# /// script\n# dependencies = ["evil"]\nprint(1)\n'
    other = '# /// pyproject\n# dependencies = ["evil"]\n# ///\n'
    assert list(inline_script.read(unclosed)) == [] and list(inline_script.read(other)) == []


def test_an_indented_block_is_no_block() -> None:
    # The regex anchors `# ///` at the start of a line: a block inside a docstring indented is not one.
    assert list(inline_script.read('def f():\n    # /// script\n    # dependencies = ["x"]\n    # ///\n')) == []


def test_two_script_blocks_are_an_error_and_both_are_read() -> None:
    text = '# /// script\n# dependencies = ["aaa-one"]\n# ///\n\n# /// script\n# dependencies = ["bbb-two"]\n# ///\n'
    found = inline_script.read(text)
    assert pairs(found) == [("package", "aaa-one"), ("package", "bbb-two")] and found.error


def test_invalid_toml_in_the_block_is_an_error() -> None:
    found = inline_script.read('# /// script\n# dependencies = [\n# ///\n')
    assert list(found) == [] and found.error and "TOML" in found.error


def test_uv_shebang_detection() -> None:
    assert inline_script.is_uv_script("#!/usr/bin/env -S uv run --script\n")
    assert not inline_script.is_uv_script("#!/bin/sh\nuv run x\n")
