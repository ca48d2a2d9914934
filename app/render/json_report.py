"""Report JSON, the contract of DESIGN §6.2."""

from __future__ import annotations

import json

from app.core.report import Report


def render_json(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, sort_keys=False)
