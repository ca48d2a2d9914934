"""What a gate answer means for a deploy script: its exit code, what is printed, and the lines that
explain a refusal.

Free of typer and rich: `hfvet gate --server` (app/cli/gate_fast.py) runs on it alone; the full
command line (app/cli/gate.py) prints through the same ``print_answer``, its refusal styled.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from app.cli import exit_codes
from app.core.ids import is_commit
from app.redact import mask_url

# The answer's status code as a sentence says it ("is not vetted", not "is not-vetted").
_STATUS_PHRASE = {"not-vetted": "is not vetted", "moved": "has moved past the newest approved commit",
                  "denied": "is denied"}
_EXIT = {"not-vetted": exit_codes.EXIT_NOT_VETTED, "moved": exit_codes.EXIT_MOVED, "denied": exit_codes.EXIT_FAILED}


def exit_for(doc: dict[str, Any]) -> int:
    """Approved only when the answer says so in every way; anything odd from a server is an error."""
    status = doc.get("status")
    if status == "approved":
        ok = doc.get("approved") is True and is_commit(str(doc.get("revision")))
        return exit_codes.EXIT_OK if ok else exit_codes.EXIT_ERROR
    return _EXIT.get(str(status), exit_codes.EXIT_ERROR)


def refusal_lines(doc: dict[str, Any], repo: str, revision: str | None, server: str | None = None) -> list[str]:
    """``refused: ORG/NAME@REV is STATUS (VERDICT) under policy P``, then one ``  - reason`` each.

    A commit waiting for review says so and ends with the `hfvet review` that decides it; a repo
    asked without a revision that has no vetted commit says ``no commit of ORG/NAME is vetted``. Asked of a
    ``server``, the `hfvet review` names it too: the decision is made there, not in a local store.
    """
    name, sha = doc.get("repo") or repo, doc.get("revision") or revision
    policy = (doc.get("policy") or {}).get("name", "?")
    status, verdict = str(doc.get("status")), doc.get("verdict")
    reasons = [f"  - {reason}" for reason in doc.get("reasons") or []]
    if status == "not-vetted" and not sha:
        return [f"refused: no commit of {name} is vetted under policy {policy}", *reasons]
    if status == "denied" and verdict == "review":
        return [f"refused: {name}@{sha} is waiting for review under policy {policy}", *reasons,
                f'  - approve or reject it: hfvet review {name} --revision {sha} --approve|--reject --reason "..."'
                + (f" --server {mask_url(server)}" if server else "")]
    said = f"{_STATUS_PHRASE.get(status, f'is {status}')}" + (f" ({verdict})" if verdict is not None else "")
    return [f"refused: {name}@{sha or '(newest approved)'} {said} under policy {policy}", *reasons]


def print_answer(doc: dict[str, Any], fmt: str, repo: str, revision: str | None,
                 explain: Callable[[list[str]], None] | None = None, server: str | None = None) -> int:
    """Print what `hfvet gate` prints for ``doc`` and return its exit code: the JSON (``fmt`` json) or the
    approved sha on stdout; for a refusal, ``refusal_lines`` through ``explain`` (default: plain, on stderr)."""
    code = exit_for(doc)
    print_warnings(doc)
    if fmt == "json":
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
    elif code == exit_codes.EXIT_OK:
        sys.stdout.write(doc["revision"] + "\n")
    if code != exit_codes.EXIT_OK:
        (explain or _plain)(refusal_lines(doc, repo, revision, server))
    return code


def print_warnings(doc: dict[str, Any]) -> None:
    """The answer's warnings (a branch that moved on to a rejected commit), one ``warning:`` line each on
    stderr: a deploy script reads stdout alone."""
    warnings = doc.get("warnings")
    for warning in warnings if isinstance(warnings, list) else []:
        sys.stderr.write(f"warning: {warning}\n")


def _plain(lines: list[str]) -> None:
    sys.stderr.write("".join(line + "\n" for line in lines))
