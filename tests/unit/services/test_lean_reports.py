"""A lean read says so in its type: it carries what the gate's outcome reads, and no document to mistake."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.core.policy import load_policy
from app.db.repository import LeanReport, StoredReport
from app.services.outcomes import outcome
from app.settings import Settings

DEFAULT = load_policy(Settings().resolve_policy(Path("default")))
AT = datetime(2026, 1, 1, tzinfo=UTC)
SHA = "a" * 40
DOCUMENT = {"reasons": [{"rule": "vendor-org", "decision": "approve", "message": "a vendor's repo"}],
            "identity": {"endpoint": "https://huggingface.co"}, "findings": [], "files": []}


def whole() -> StoredReport:
    return StoredReport(1, "org/repo", SHA, "approve", DEFAULT.name, DEFAULT.sha256, AT, DOCUMENT)


def lean() -> LeanReport:
    report = whole()
    return LeanReport(1, "org/repo", SHA, "approve", DEFAULT.name, DEFAULT.sha256, AT, report.reasons,
                      report.endpoint)


def test_a_lean_report_has_the_typed_fields_of_a_whole_one_and_no_document() -> None:
    assert (lean().reasons, lean().endpoint, lean().references) == (whole().reasons, whole().endpoint, ())
    assert whole().reasons == ("vendor-org: a vendor's repo",)
    assert not hasattr(lean(), "document") and not hasattr(lean(), "load")


def test_under_its_own_policy_a_lean_report_has_the_whole_ones_outcome() -> None:
    assert outcome(lean(), DEFAULT) == outcome(whole(), DEFAULT)


def test_a_lean_report_is_never_re_decided_from_findings_it_does_not_have() -> None:
    with pytest.raises(TypeError, match="read lean"):
        outcome(replace(lean(), policy_sha256="another policy"), DEFAULT)
