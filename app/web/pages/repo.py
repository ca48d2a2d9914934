"""GET /ui/repos/{org}/{name}: one repo's identity, revisions, files, findings and reports."""

from __future__ import annotations

from collections import defaultdict
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from starlette.responses import Response

from app.render import RENDERERS
from app.services.attestations import repo_attestations, review_attested_commits
from app.services.lineage import recorded_lineage
from app.services.listing import RepoHistory, repo_history
from app.services.outcomes import is_local_scan
from app.services.pulls import repo_pulls
from app.services.review_queue import repo_audit
from app.web import inputs
from app.web.formatting import SEVERITIES, severity_counts
from app.web.page import Page, PageError, PageRoute, page

router = APIRouter(route_class=PageRoute)
DOWNLOADS = {"json": ("json", "application/json"), "sarif": ("sarif", "application/sarif+json")}


def history_of(current: Page, org: str, name: str) -> RepoHistory:
    repo = inputs.repo_id(f"{org}/{name}")
    history = repo_history(current.app.store, current.app.policy, repo)
    if history is None or not history.commits:
        raise PageError(404, "Not vetted", f"{repo} has never been vetted here. A vetter can vet it from the "
                                           f"Vet page, or run `hfvet vet {repo}`.")
    return history


@router.get("/ui/repos/{org}/{name}", name="repo")
def repo_page(current: Annotated[Page, Depends(page)], org: str, name: str, revision: str = "",
              severity: str = "") -> Response:
    if severity and severity not in SEVERITIES:
        raise PageError(422, "Bad filter", f"severity must be one of {', '.join(SEVERITIES)}.")
    history = history_of(current, org, name)
    sha = inputs.commit(current.app.store, history.repo.repo_id, revision) if revision else history.commits[0][0]
    chosen = next((decisions for commit, decisions in history.commits if commit == sha), None)
    if chosen is None:
        raise PageError(404, "Revision not vetted", f"{history.repo.repo_id}@{sha} has not been vetted.")
    decision = chosen[0]
    document = decision.report.document
    findings = document.get("findings") or []
    shown = [f for f in findings if not severity or f.get("severity") == severity]
    return current.render(
        "repo.html", history=history, sha=sha, decision=decision, revisions=_revision_rows(history),
        files=document.get("files") or [], stats=document.get("stats") or {},
        findings=_by_file(shown), audit=repo_audit(current.app.store, history.repo.repo_id),
        pulls=repo_pulls(current.app.store, history.repo.repo_id),
        reports=chosen, only=severity, severities=severity_counts(findings), total=len(findings),
        shown=len(shown),
        on_hub=not is_local_scan(decision.report),
        attestations=repo_attestations(current.app.store, history.repo.repo_id),
        review_attested=review_attested_commits(current.app.store, history.repo.repo_id),
        lineage=recorded_lineage(document),
    )


@router.get("/ui/repos/{org}/{name}/reports/{report_id}.{kind}", name="report-download")
def download(current: Annotated[Page, Depends(page)], org: str, name: str, report_id: int, kind: str) -> Response:
    if kind not in DOWNLOADS:
        raise PageError(404, "No such format", "Reports download as .json or .sarif.")
    history = history_of(current, org, name)
    found = next((d for _, ds in history.commits for d in ds if d.report.id == report_id), None)
    if found is None:
        raise PageError(404, "No such report", f"{history.repo.repo_id} has no report {report_id}.")
    renderer, media = DOWNLOADS[kind]
    body = RENDERERS[renderer].render(found.report.load(), show_info=True)
    filename = f"{history.repo.repo_id.replace('/', '--')}-{found.report.sha[:12]}-{report_id}.{kind}"
    return current.finish(Response(body, media_type=media,
                                   headers={"Content-Disposition": f'attachment; filename="{filename}"'}))


def _revision_rows(history: RepoHistory) -> list[dict[str, Any]]:
    """Each vetted commit, newest first, with the branch names it was vetted as; a branch seen at a newer
    commit has moved on from the older ones."""
    newest_for: dict[str, str] = {}  # branch name -> the newest commit vetted as that name
    for sha, decisions in history.commits:
        for d in decisions:
            name = d.report.requested_revision
            if name and name != sha:
                newest_for.setdefault(name, sha)
    rows = []
    for sha, decisions in history.commits:
        names = sorted({d.report.requested_revision for d in decisions
                        if d.report.requested_revision and d.report.requested_revision != sha})
        rows.append({"sha": sha, "decision": decisions[0], "reports": len(decisions),
                     "names": [(n, newest_for[n] if newest_for[n] != sha else None) for n in names]})
    return rows


def _by_file(findings: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Findings grouped by file, the worst file first, and within a file the worst finding first."""
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for f in findings:
        grouped[str(f.get("path"))].append(f)
    for items in grouped.values():
        items.sort(key=lambda f: (rank.get(str(f.get("severity")), 9), str(f.get("rule"))))
    return sorted(grouped.items(), key=lambda kv: (rank.get(str(kv[1][0].get("severity")), 9), kv[0]))
