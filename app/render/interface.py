"""The Renderer seam: one report in, one document out. A new output format is one module and one line."""

from __future__ import annotations

from typing import Protocol

from app.core.report import Report


class Renderer(Protocol):
    def render(self, report: Report, *, show_info: bool = False) -> str:
        """The whole document, ending in a newline."""
        ...
