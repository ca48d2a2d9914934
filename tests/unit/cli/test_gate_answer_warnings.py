"""`hfvet gate` (local, --server and its fast twin all print through gate_answer.print_answer) says an answer's
warnings on stderr and keeps stdout the sha alone."""

from __future__ import annotations

import pytest

from app.cli.gate_answer import print_answer

SHA = "a" * 40


def approved(**extra: object) -> dict[str, object]:
    doc: dict[str, object] = {"repo": "o/n", "approved": True, "status": "approved", "revision": SHA}
    return doc | extra


def test_warnings_go_to_stderr_and_the_sha_alone_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert print_answer(approved(warnings=["main moved to b..., which is rejected"]), "text", "o/n", None) == 0
    out, err = capsys.readouterr()
    assert out == SHA + "\n"
    assert err == "warning: main moved to b..., which is rejected\n"


def test_a_warnings_field_that_is_not_a_list_is_ignored(capsys: pytest.CaptureFixture[str]) -> None:
    assert print_answer(approved(warnings="not a list"), "text", "o/n", None) == 0
    assert capsys.readouterr() == (SHA + "\n", "")
