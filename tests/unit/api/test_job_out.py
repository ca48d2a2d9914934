"""JobOut is VetJob as the API shows it: built in one place (JobOut.of), every field accounted for."""

from __future__ import annotations

from dataclasses import fields
from datetime import UTC, datetime

from app.api.schemas import JobOut
from app.core.jobs import VetJob

SHA = "a" * 40
TRANSLATED = {"sha": "revision", "policy_name": "policy", "policy_sha256": "policy"}
INTERNAL = {"report_id"}  # GET /vet/{id} carries the report itself


def test_every_vet_job_field_is_shown_by_name_translated_or_internal() -> None:
    by_name = {f.name for f in fields(VetJob)} - TRANSLATED.keys() - INTERNAL
    assert by_name == set(JobOut.model_fields) - set(TRANSLATED.values()) - {"links"}


def test_a_job_as_the_api_shows_it() -> None:
    job = VetJob("j1", "org/r", "main", SHA, "default", "p" * 64, "done", "alice", datetime(2026, 1, 1, tzinfo=UTC),
                 None, datetime(2026, 1, 2, tzinfo=UTC), 2, None, 7)
    assert JobOut.of(job).model_dump(mode="json") == {
        "id": "j1", "repo": "org/r", "requested_revision": "main", "revision": SHA,
        "policy": {"name": "default", "sha256": "p" * 64}, "status": "done", "requested_by": "alice",
        "created_at": "2026-01-01T00:00:00Z", "started_at": None, "finished_at": "2026-01-02T00:00:00Z",
        "attempts": 2, "error": None, "links": {"self": "/vet/j1", "gate": f"/gate?repo=org/r&revision={SHA}"},
    }
