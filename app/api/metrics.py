"""Prometheus metrics where they matter: vets by outcome, vet duration, gate answers by status.

They live in prometheus-client's default registry, which GET /metrics exposes.
"""

from __future__ import annotations

import time

from prometheus_client import Counter, Histogram

from app.core.jobs import VetJob
from app.core.report import Report
from app.jobs.inprocess import VetFn

VETS = Counter("hfvet_vets", "Vets finished, by job status (done, failed) and verdict (none when failed).",
               ["status", "verdict"])
VET_SECONDS = Histogram("hfvet_vet_duration_seconds", "Wall time of one vet, from start to report or failure.",
                        buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600))
GATE_ANSWERS = Counter("hfvet_gate_answers", "GET /gate answers by status (approved, denied, not-vetted, moved).",
                       ["status"])


def observed(vet: VetFn) -> VetFn:
    """``vet`` that also counts its outcome and times itself."""

    def run(job: VetJob) -> Report:
        start = time.perf_counter()
        try:
            report = vet(job)
        except BaseException:
            VETS.labels(status="failed", verdict="none").inc()
            raise
        finally:
            VET_SECONDS.observe(time.perf_counter() - start)
        VETS.labels(status="done", verdict=report.verdict.value).inc()
        return report

    return run


_GATE_BY_STATUS: dict[str, Counter] = {}  # labels() takes a lock and builds a key: once per status


def gate_answered(status: str) -> None:
    counter = _GATE_BY_STATUS.get(status)
    if counter is None:
        counter = _GATE_BY_STATUS.setdefault(status, GATE_ANSWERS.labels(status=status))
    counter.inc()
