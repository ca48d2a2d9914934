"""Short commit ids and mistyped repo ids, resolved against the store: the one home of both rules.

A commit id as people paste it (a 7-40 hex prefix: the demo and the dashboard show 12) names the
one vetted commit of that repo it starts with; a prefix several vetted commits share is refused with
them listed. Where the caller talks to the hub anyway (the gate), a prefix the store does not know
is asked of the hub; what the hub names it (a commit starting with it) is used, anything else (a
branch that happens to look like hex) is left as it was. ``similar_repos`` gives the did-you-mean of
a "not vetted" answer (the gate's and a review's), never naming a repo the policy's look-alike check
flags. Short ids are used by the gate (CLI, API), reviews (CLI, API, dashboard), `hfvet vet`, downloads
and the dashboard's repo and diff pages.
"""

from __future__ import annotations

import difflib

from app.core.ids import is_commit, is_short_sha
from app.core.policy import LoadedPolicy
from app.core.policy.identity import repo_lookalike_of
from app.db.commits import has_reports, vetted_commits, vetted_repo_ids
from app.db.session import Store
from app.errors import InputError
from app.services.outcomes import Resolver

MAX_CANDIDATES = 10  # of an ambiguous prefix, listed in the refusal
MAX_KNOWN = 20_000  # repo ids a did-you-mean compares against (difflib is linear in them)
CLOSE = 0.8  # difflib ratio: lower, and a shared org (`nvidia/`) alone makes two ids "close"


class AmbiguousCommit(InputError):
    """A short commit id several vetted commits of the repo start with: the API's `ambiguous-revision`."""

    def __init__(self, repo: str, prefix: str, candidates: list[str]) -> None:
        more = " (and more)" if len(candidates) > MAX_CANDIDATES else ""
        shown = candidates[:MAX_CANDIDATES]
        super().__init__(f"{prefix} is ambiguous in {repo}: {len(shown)}{more} vetted commits start with it "
                         f"({', '.join(shown)}); give more of the sha")
        self.candidates = shown


class NotACommit(InputError):
    """A revision where only a commit will do (a review): the API's `invalid-revision`."""


def expand_commit(store: Store, repo: str, revision: str | None, hub: Resolver | None = None) -> str | None:
    """``revision`` with a short commit id replaced by the full sha it names; anything else unchanged.

    The store's vetted commits of ``repo`` first (one match: it; several: ``AmbiguousCommit``); with
    ``hub``, a prefix the store does not know is asked there (its errors, e.g. revision-not-found, go up).
    """
    if revision is None or is_commit(revision) or not is_short_sha(revision):
        return revision
    with store.session() as session:
        found = vetted_commits(session, repo, revision, MAX_CANDIDATES + 1)
    if len(found) == 1:
        return found[0]
    if found:
        raise AmbiguousCommit(repo, revision, found)
    if hub is None:
        return revision
    sha = hub(repo, revision)
    return sha if sha.startswith(revision) else revision  # else a branch or tag named like hex


def vetted_commit(store: Store, repo: str, revision: str) -> str:
    """The full sha of a commit asked as a full or short sha (not yet vetted: returned as given, for the
    caller's own "not vetted"); a branch, tag or anything else is ``NotACommit``."""
    if not is_short_sha(revision):
        raise NotACommit(f"revision must be a commit: its 40-hex sha, or the first 7 or more hex digits of it, "
                         f"not {revision[:100]!r} (`hfvet gate {repo} --revision BRANCH` names a branch's commit)")
    return expand_commit(store, repo, revision) or revision


def similar_repos(store: Store, repo: str, policy: LoadedPolicy, limit: int = 3) -> list[str]:
    """Vetted repo ids close to ``repo`` (case-insensitively), closest first; none when ``repo`` itself is vetted.

    A repo whose org or name ``policy`` judges a look-alike (`lookalike-org`) is never named: a typo of
    `nvidia/X` must not point at the `nvldia/X` the store holds because someone vetted (and denied) it.
    """
    with store.session() as session:
        if has_reports(session, repo):
            return []
        known = vetted_repo_ids(session, MAX_KNOWN)
    folded = {r.lower(): r for r in known}
    close = difflib.get_close_matches(repo.lower(), _within_reach(repo.lower(), list(folded)), n=max(len(folded), 1),
                                      cutoff=CLOSE)
    tiers, identities = policy.model.tiers, policy.model.identities
    return [folded[m] for m in close if repo_lookalike_of(folded[m], tiers, identities) is None][:limit]


def _within_reach(wanted: str, known: list[str]) -> list[str]:  # a list: given a dict, rapidfuzz matches its values
    """The ids difflib could find close, found in C: its ratio counts matched characters that form a common
    subsequence, so it is never above rapidfuzz's (2 * longest common subsequence / total length).

    Only the survivors go through difflib, so the answer is difflib's; against 20,000 ids this keeps a
    "not vetted" gate answer for an unknown repo from costing ~100 ms of CPU on the server.
    """
    from rapidfuzz import fuzz, process  # on use: a "not vetted" answer about an unknown repo

    return [match for match, _, _ in process.extract(wanted, known, scorer=fuzz.ratio, limit=None,
                                                     score_cutoff=CLOSE * 100 - 1e-6)]
