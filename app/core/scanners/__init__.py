"""Every scanner hfvet runs, as an explicit tuple (grep-able, no import magic)."""

from __future__ import annotations

from app.core.scanners.base import Scanner
from app.core.scanners.binary_scanner import BinaryScanner
from app.core.scanners.keras_scanner import KerasScanner
from app.core.scanners.links_scanner import LinksScanner
from app.core.scanners.modelscan_scanner import ModelscanScanner
from app.core.scanners.pickle_scanner import PickleScanner
from app.core.scanners.picklescan_scanner import PicklescanScanner
from app.core.scanners.remote_code_scanner import RemoteCodeScanner
from app.core.scanners.repo_refs_scanner import RepoReferenceScanner
from app.core.scanners.safetensors_scanner import SafetensorsScanner
from app.core.scanners.savedmodel_scanner import SavedModelScanner
from app.core.scanners.staging_scanner import StagingScanner
from app.core.scanners.template_scanner import TemplateScanner
from app.core.scanners.unknown_scanner import UnknownContentScanner
from app.core.scanners.yara_scanner import YaraScanner


def all_scanners() -> tuple[Scanner, ...]:
    """Fresh instances, in report order: hfvet's own engines first, then corroborating peers."""
    return (
        PickleScanner(),
        SafetensorsScanner(),
        TemplateScanner(),
        RemoteCodeScanner(),
        RepoReferenceScanner(),
        LinksScanner(),
        StagingScanner(),
        BinaryScanner(),
        KerasScanner(),
        SavedModelScanner(),
        YaraScanner(),
        UnknownContentScanner(),
        PicklescanScanner(),
        ModelscanScanner(),
    )
