"""Report JSON, the contract of DESIGN §6.2 (written by the core codec)."""

from __future__ import annotations

from app.core import report_json
from app.core.report import Report


class JsonRenderer:
    def render(self, report: Report, *, show_info: bool = False) -> str:
        return report_json.dumps(report) + "\n"  # info findings are always part of the contract
