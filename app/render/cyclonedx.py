"""CycloneDX 1.6 ML-BOM output (`--format cyclonedx`) of a report just made.

A report not yet read back from the store has no decided_at nor id: this document is stamped now
with a fresh serial number. `hfvet bom` and `GET /bom/...` give the stable one of a stored report.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from app import __version__
from app.core.report import Report


class CycloneDxRenderer:
    def render(self, report: Report, *, show_info: bool = False) -> str:
        from app.core.provenance.bom import bom_json  # cyclonedx loads only for this format
        from app.core.provenance.bom_context import BomContext

        now = datetime.now(UTC).replace(microsecond=0)
        return bom_json(report, BomContext(timestamp=now, serial=uuid.uuid4(), hfvet_version=__version__))
