"""GET /ui/repos/{org}/{name}/diff: what changed for trust between two vetted commits."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from starlette.responses import Response

from app.services.diff import diff_revisions, hub_text_reader, newest_decision
from app.services.diff_base import base_diff
from app.services.listing import RepoHistory
from app.web import inputs
from app.web.page import Page, PageError, PageRoute, page
from app.web.pages.repo import history_of

router = APIRouter(route_class=PageRoute)


@router.get("/ui/repos/{org}/{name}/diff", name="diff")
def diff_page(current: Annotated[Page, Depends(page)], org: str, name: str,
              before: Annotated[str, Query(alias="from")] = "",
              after: Annotated[str, Query(alias="to")] = "", base: bool = False) -> Response:
    history = history_of(current, org, name)
    commits = [sha for sha, _ in history.commits]  # newest first
    if base:
        return _against_base(current, history, commits, after)
    if len(commits) < 2 and not (before and after):
        return current.render("diff.html", history=history, diff=None, commits=commits, before="", after="")
    old = inputs.commit(current.app.store, history.repo.repo_id, before) if before else commits[1]
    new = inputs.commit(current.app.store, history.repo.repo_id, after) if after else commits[0]
    try:
        diff = diff_revisions(history, old, new, hub_text_reader(current.app.settings))
    except KeyError as exc:
        raise PageError(404, "Revision not vetted", f"{history.repo.repo_id}@{exc.args[0]} has not been vetted, "
                                                    "so there is nothing to compare.") from exc
    return current.render("diff.html", history=history, diff=diff, commits=commits, before=old, after=new)


def _against_base(current: Page, history: RepoHistory, commits: list[str], after: str) -> Response:
    """?base=1[&to=SHA]: the commit (the newest by default) against its claimed base's approved commit."""
    sha = inputs.commit(current.app.store, history.repo.repo_id, after) if after else commits[0]
    decision = newest_decision(history, sha)
    if decision is None:
        raise PageError(404, "Revision not vetted", f"{history.repo.repo_id}@{sha} has not been vetted.")
    view = base_diff(current.app.store, current.app.policy, history.repo.repo_id, sha, decision.report.document)
    return current.render("diff.html", history=history, diff=None, commits=commits, before="", after=sha,
                          base_view=view)
