"""Report renderers, by `--format` name."""

from __future__ import annotations

from app.render.cyclonedx import CycloneDxRenderer
from app.render.interface import Renderer
from app.render.json_report import JsonRenderer
from app.render.sarif import SarifRenderer
from app.render.text import TextRenderer

RENDERERS: dict[str, Renderer] = {
    "text": TextRenderer(),
    "json": JsonRenderer(),
    "sarif": SarifRenderer(),
    "cyclonedx": CycloneDxRenderer(),
}

__all__ = ["RENDERERS", "Renderer"]
