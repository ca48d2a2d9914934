"""Report JSON, the contract of DESIGN §6.2 (written by the core codec)."""

from __future__ import annotations

from app.core.report import Report


class JsonRenderer:
    def render(self, report: Report, *, show_info: bool = False) -> str:
        from app.core import report_json  # its pydantic models are built on import: only for --format json

        return report_json.dumps(report) + "\n"  # info findings are always part of the contract
