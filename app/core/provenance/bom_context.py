"""What a CycloneDX ML-BOM needs beside the report: when it was decided, which stored report, the policy's rules.

Kept apart from the builder so the faces and services can make one without importing cyclonedx.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

DEFAULT_HUB = "https://huggingface.co"
# The namespace of every serial number hfvet derives: one stored report, one serial, whoever asks.
_SERIAL_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "urn:hfvet:cyclonedx-bom")


@dataclass(frozen=True)
class PolicyRule:
    """One rule of the policy that decided, as the BOM's standard lists it."""

    id: str
    description: str
    when: str
    decision: str


@dataclass(frozen=True)
class BomContext:
    timestamp: datetime  # the verdict's decided_at for a stored report: same report, same bytes
    serial: uuid.UUID
    hfvet_version: str
    report_id: int | None = None  # the stored report it describes; None for an unstored scan
    tier: str | None = None  # the publisher's tier under the policy that decided, when that policy is at hand
    rules: tuple[PolicyRule, ...] = ()  # that policy's rules; empty when it is not at hand


def stored_serial(repo: str | None, revision: str | None, report_id: int) -> uuid.UUID:
    """The serial number of the BOM of one stored report: stable, so the same report gives the same document."""
    return uuid.uuid5(_SERIAL_NAMESPACE, f"{repo}@{revision}#report-{report_id}")
