"""The listing queries on SQLite and on the real PostgreSQL: newest report per repo, org filters, keyset pages."""

from __future__ import annotations

from app.db.repos import OrgFilter, repo_facts, repo_page
from app.db.session import Store, upgrade
from tests.integration.api.stored import policy, report, save

A, B = "a" * 40, "b" * 40


def test_a_page_carries_each_repos_newest_report_and_commit_count(store_url: str) -> None:
    upgrade(store_url)
    store = Store(store_url)
    default = policy("default")
    save(store, report("nvidia/one", A, under=default))
    save(store, report("nvidia/one", B, b"EVIL", under=default))
    newest = save(store, report("nvidia/one", A, under=default))  # a re-vet of the first commit, decided last
    save(store, report("acme/two", A, under=default))
    save(store, report("zeta/three", B, b"EVIL"))
    with store.session() as session:
        everything = repo_page(session, OrgFilter(), after=None, offset=0, limit=10)
        vendors = repo_page(session, OrgFilter(among=["NVIDIA"]), after=None, offset=0, limit=10)
        others = repo_page(session, OrgFilter(not_among=["nvidia"]), after=None, offset=0, limit=10)
        after = repo_page(session, OrgFilter(), after="acme/two", offset=0, limit=1)
        skipped = repo_page(session, OrgFilter(equals="Zeta"), after=None, offset=1, limit=10)
        facts = repo_facts(session, "acme/two")
        missing = repo_facts(session, "acme/none")
    store.close()
    by_repo = {s.repo.repo_id: s for s in everything}
    assert set(by_repo) == {"nvidia/one", "acme/two", "zeta/three"}
    one = by_repo["nvidia/one"]
    assert one.revisions == 2 and one.newest is not None and (one.newest.id, one.newest.sha) == (newest, A)
    assert by_repo["zeta/three"].newest is not None and by_repo["zeta/three"].newest.verdict == "reject"
    assert [s.repo.repo_id for s in vendors] == ["nvidia/one"]
    assert {s.repo.repo_id for s in others} == {"acme/two", "zeta/three"}
    assert len(after) == 1 and after[0].repo.repo_id != "acme/two"
    assert skipped == []
    assert facts is not None and facts.org == "acme" and facts.first_seen.tzinfo is not None
    assert missing is None


def test_a_lean_read_of_a_repos_reports_keeps_what_the_gate_reads_and_reads_the_rest_whole(store_url: str) -> None:
    """The gate reads every report of a repo; under the active policy it decodes no findings of one naming no repo."""
    from dataclasses import replace

    from app.core.repo_refs import RepoReference
    from app.db.repository import LeanReport, reports_for

    upgrade(store_url)
    store = Store(store_url)
    default = policy("default")
    plain = save(store, report("nvidia/one", A, under=default))
    other_policy = save(store, report("nvidia/one", B, b"EVIL"))  # interim verdict: re-decided from its findings
    referencing = replace(report("nvidia/one", A, under=default),
                          references=(RepoReference("meta/base", None, "adapter_config.json", "adapter base model"),))
    with_refs = save(store, referencing)
    with store.session() as session:
        whole = reports_for(session, "nvidia/one")
        lean = reports_for(session, "nvidia/one", lean_under=default.sha256)
    store.close()
    assert [r.id for r in lean] == [r.id for r in whole] == [plain, other_policy, with_refs]  # same order
    by_id = {r.id: r for r in lean}
    assert isinstance(by_id[plain], LeanReport) and not hasattr(by_id[plain], "document")  # no findings decoded
    assert by_id[plain].reasons == whole[0].reasons
    assert by_id[plain].endpoint == whole[0].endpoint
    assert by_id[other_policy].document == whole[1].document  # read whole: another policy re-decides it
    assert by_id[with_refs].document == whole[2].document  # read whole: its references may turn its verdict
    assert [(r.verdict, r.sha, r.decided_at) for r in lean] == [(r.verdict, r.sha, r.decided_at) for r in whole]
