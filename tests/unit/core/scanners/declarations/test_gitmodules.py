"""`.gitmodules` reader, from git-config(1) "CONFIGURATION FILE" (sections, quoted subsections,
case-insensitive keys, quotes and comments in values, backslash continuation) and
gitsubmodules(7) (a url starting ./ or ../ is relative to the superproject's remote)."""

from __future__ import annotations

from app.core.scanners.text_rules.declarations import gitmodules
from tests.unit.core.scanners.declarations.helpers import pairs


def test_submodule_urls() -> None:
    text = ('[submodule "vllm"]\n\tpath = third_party/vllm\n\turl = https://github.com/someone/vllm.git\n'
            '[submodule "kern"]\n\tpath = kern\n\tURL = "git@gitlab.com:someone/kern.git" ; pinned\n'
            '[submodule "sib"]\n\turl = ../sibling.git\n[submodule "rel"]\n\turl = ./rel\n')
    found = gitmodules.read(text)
    assert pairs(found) == [("git", "https://github.com/someone/vllm.git"), ("git", "git@gitlab.com:someone/kern.git")]
    assert found[0].where == "line 3" and found[0].via == ".gitmodules submodule url"


def test_urls_outside_submodule_sections_are_not_submodules() -> None:
    assert list(gitmodules.read('[remote "origin"]\n\turl = https://github.com/someone/x\n')) == []


def test_old_section_syntax_comments_and_continuations() -> None:
    text = "# url = https://ignored.invalid/x\n[submodule.old]\nurl = https://git.example.invalid/\\\nsomeone/old.git\n"
    assert pairs(gitmodules.read(text)) == [("git", "https://git.example.invalid/someone/old.git")]


def test_garbage_never_raises() -> None:
    assert list(gitmodules.read('[submodule "x\nurl = "unclosed\n\\\n[[[\n= =\n\x00')) == []
