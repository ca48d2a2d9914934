"""Every scanner hfvet runs, as an explicit list (grep-able, no import magic).

The scanner modules are imported by ``all_scanners()``, not by this package: every module under
``app.core.scanners`` (``base`` for the pipeline, a policy's facts) would otherwise load all of
them. Each scanner module imports its heavy libraries (py7zr, jinja2, gguf, modelscan's scanners)
only when a file of their format appears, so building the list stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.core.scanners.base import Scanner

# (module under app.core.scanners, class), in report order: hfvet's own engines first, then peers.
SCANNERS = (
    ("pickle_scanner", "PickleScanner"),
    ("safetensors_scanner", "SafetensorsScanner"),
    ("template_scanner", "TemplateScanner"),
    ("remote_code_scanner", "RemoteCodeScanner"),
    ("repo_refs_scanner", "RepoReferenceScanner"),
    ("load_closure_scanner", "LoadClosureScanner"),
    ("links_scanner", "LinksScanner"),
    ("staging_scanner", "StagingScanner"),
    ("binary_scanner", "BinaryScanner"),
    ("keras_scanner", "KerasScanner"),
    ("savedmodel_scanner", "SavedModelScanner"),
    ("onnx_scanner", "OnnxScanner"),
    ("tflite_scanner", "TfliteScanner"),
    ("coreml_scanner", "CoremlScanner"),
    ("openvino_scanner", "OpenvinoScanner"),
    ("tf_checkpoint_scanner", "TfCheckpointScanner"),
    ("paddle_scanner", "PaddleScanner"),
    ("raw_data_scanner", "RawDataScanner"),
    ("yara_scanner", "YaraScanner"),
    ("unknown_scanner", "UnknownContentScanner"),
    ("picklescan_scanner", "PicklescanScanner"),
    ("modelscan_scanner", "ModelscanScanner"),
)


def all_scanners() -> tuple[Scanner, ...]:
    """Fresh instances, in report order."""
    classes = [getattr(importlib.import_module(f"{__name__}.{module}"), name) for module, name in SCANNERS]
    return tuple(cls() for cls in classes)
