"""Which review applies to each report of a commit, across re-vets. Pure.

A commit may be vetted many times (a vetter's `POST /vet`, a webhook, the re-vet pass); the gate
answers from its newest report. A report's own newest review applies to it. Without one:

- a reject of an earlier report of the same commit carries forward, whatever the re-vet found
  (a re-vet, a vetter's act, never undoes a reviewer's veto);
- an approval of an earlier report carries forward while the re-vet found nothing the reviewer did
  not see: no finding and no unscanned file beyond those of the reviewed report. Otherwise it is
  withdrawn, and the reason names what is new. Whether the approval still covers the re-vet's
  policy verdict is app.core.review.apply_review's rule, applied after this one.

The findings are compared as the §6.2 report stores them; a fingerprint of each report's findings
(stored beside it) settles the common case, identical findings, without reading them.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from app.core.review import Review

Item = tuple[str, ...]  # one finding, or one unscanned file, in a canonical form
_VERSION = "hfvet-findings-v1"  # hashed in: a new canonical form never compares equal to an old one
_NAMED = 5  # new findings named in a reason; the rest are counted


@dataclass(frozen=True)
class CommitReport:
    """One stored report, as the carrying rule reads it."""

    id: int
    sha: str
    fingerprint: str | None  # findings_fingerprint of its document; None: not kept (compare the findings)


def review_items(document: Mapping[str, Any]) -> list[Item]:
    """What a reviewer saw of a §6.2 report document: its findings and unscanned files, sorted.

    Every part of a finding but its position in the list, so that two findings that differ anywhere
    (a new import named only in the message, say) are two. Timing (``stats``) is not part of it.
    """
    items = [_finding(f) for f in document.get("findings") or [] if isinstance(f, Mapping)]
    items += [("unscanned", _text(f.get("path"))) for f in document.get("files") or []
              if isinstance(f, Mapping) and f.get("scanned") is False]
    return sorted(items)


def findings_fingerprint(document: Mapping[str, Any]) -> str:
    """sha256 of review_items: equal for two reports whose findings and unscanned files are equal."""
    canonical = json.dumps([_VERSION, review_items(document)], separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def new_items(seen: Iterable[Item], now: Iterable[Item]) -> list[Item]:
    """The items of ``now`` beyond those of ``seen`` (counted: a second identical finding is new)."""
    return sorted((Counter(now) - Counter(seen)).elements())


def carry_reviews(own: Mapping[int, Review], reports: Sequence[CommitReport],
                  items_of: Callable[[int], list[Item]]) -> dict[int, Review]:
    """Each report (oldest first) -> the review that applies to it, from each report's own newest review.

    ``items_of(report id)`` reads a report's review_items; it is asked only when fingerprints differ.
    A withdrawn approval comes back with ``withdrawn`` set: it does not approve, it says why.
    """
    fingerprints = {r.id: r.fingerprint for r in reports}
    carried: dict[str, Review] = {}  # commit -> the newest review given on one of its reports so far
    effective: dict[int, Review] = {}
    for report in reports:
        review = own.get(report.id)
        if review is not None:
            carried[report.sha] = review
        else:
            review = carried.get(report.sha)
            if review is not None and review.decision == "approve":
                review = _carried_approval(review, report, fingerprints, items_of)
        if review is not None:
            effective[report.id] = review
    return effective


def _carried_approval(review: Review, report: CommitReport, fingerprints: Mapping[int, str | None],
                      items_of: Callable[[int], list[Item]]) -> Review:
    seen = fingerprints.get(review.report_id)
    if seen is not None and seen == report.fingerprint:
        return review
    new = new_items(items_of(review.report_id), items_of(report.id))
    return replace(review, withdrawn=withdrawn_reason(review, new)) if new else review


def withdrawn_reason(review: Review, new: Sequence[Item]) -> str:
    """Why ``review``'s approval does not carry to a re-vet that found ``new``."""
    named = ", ".join(_describe(item) for item in new[:_NAMED])
    more = f", and {len(new) - _NAMED} more" if len(new) > _NAMED else ""
    count = f"{len(new)} new finding{'s' if len(new) != 1 else ''}"
    return (f"the review of report {review.report_id} no longer applies: the re-vet found {count}: {named}{more} "
            f"(the approval by {review.reviewer} ({review.role}) did not see them); it needs a new review")


def _finding(f: Mapping[str, Any]) -> Item:
    parts = ("path", "member", "scanner", "rule", "severity", "message", "evidence", "source")
    return ("finding", *(_text(f.get(part)) for part in parts))


def _describe(item: Item) -> str:
    if item[0] == "unscanned":
        return f"{item[1]} not scanned"
    _, path, member, _scanner, rule, severity, *_ = item
    where = f"{path}:{member}" if member else path
    return f"{rule} ({severity}) in {where}"


def _text(value: object) -> str:
    return "" if value is None else str(value)
