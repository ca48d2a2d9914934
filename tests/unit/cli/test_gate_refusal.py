"""The lines that explain a refusal of `hfvet gate` (app/cli/gate_answer.refusal_lines) read as sentences."""

from __future__ import annotations

from app.cli.gate_answer import refusal_lines

SHA = "808f" + "0" * 36
POLICY = {"name": "default", "sha256": "0" * 64}


def test_a_commit_waiting_for_review_says_so_and_how_to_decide_it() -> None:
    doc = {"repo": "nvidia/Custom-Code", "revision": SHA, "status": "denied", "verdict": "review",
           "policy": POLICY, "reasons": ["custom code: a human reads it"]}
    assert refusal_lines(doc, "nvidia/Custom-Code", None) == [
        f"refused: nvidia/Custom-Code@{SHA} is waiting for review under policy default",
        "  - custom code: a human reads it",
        f"  - approve or reject it: hfvet review nvidia/Custom-Code --revision {SHA} --approve|--reject "
        '--reason "..."',
    ]

    through = refusal_lines(doc, "nvidia/Custom-Code", None, "http://ops:s3cret@hfvet:8000")  # decided there
    assert through[-1].endswith('--reason "..." --server http://ops:***@hfvet:8000')


def test_a_rejected_commit_is_denied() -> None:
    doc = {"repo": "o/n", "revision": SHA, "status": "denied", "verdict": "reject", "policy": POLICY, "reasons": []}
    assert refusal_lines(doc, "o/n", None) == [f"refused: o/n@{SHA} is denied (reject) under policy default"]


def test_a_repo_with_no_vetted_commit_says_no_commit_is_vetted() -> None:
    doc = {"repo": "o/n", "status": "not-vetted", "policy": POLICY, "reasons": ["not vetted: run `hfvet vet o/n`"]}
    assert refusal_lines(doc, "o/n", None) == ["refused: no commit of o/n is vetted under policy default",
                                               "  - not vetted: run `hfvet vet o/n`"]
    asked = doc | {"revision": SHA}
    assert refusal_lines(asked, "o/n", SHA)[0] == f"refused: o/n@{SHA} is not vetted under policy default"
