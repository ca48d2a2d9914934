"""onnxruntime surfaces (app/core/loaders/map/onnxruntime.yaml). Inert text only.

Read from the onnxruntime 1.31.1 wheel: ``SessionOptions.register_custom_ops_library(path)`` dlopens a
shared library into the session (as ``tools/convert_onnx_models_to_ort.py`` _create_session_options does);
nothing else in a repo makes InferenceSession load native code by itself.
"""

from __future__ import annotations

from tests.corpus.registry import Case, register_all

FAMILY = "loader-onnxruntime"
ELF = b"\x7fELF\x02\x01\x01" + bytes(57)


def custom_ops_library_shipped() -> dict[str, bytes]:
    card = ("# Fast tokenizer graph\n\n```python\nimport onnxruntime as ort\nso = ort.SessionOptions()\n"
            "so.register_custom_ops_library(\"./libfastops.so\")\n"
            "sess = ort.InferenceSession(\"model.onnx\", so)\n```\n")
    return {"README.md": card.encode(), "libfastops.so": ELF}


def extensions_library_path() -> dict[str, bytes]:
    # onnxruntime-extensions' documented use: the library path comes from the installed package.
    card = ("```python\nimport onnxruntime as ort\nfrom onnxruntime_extensions import get_library_path\n\n"
            "so = ort.SessionOptions()\nso.register_custom_ops_library(get_library_path())\n"
            "sess = ort.InferenceSession(\"tokenizer.onnx\", so, providers=[\"CPUExecutionProvider\"])\n```\n")
    return {"README.md": card.encode()}


register_all([
    Case(FAMILY, "custom-ops-library-shipped", "hostile", custom_ops_library_shipped, rule="executable-binary",
         why="the card's session dlopens the repo's libfastops.so: native code the repo ships"),
    Case(FAMILY, "extensions-library-path", "benign", extensions_library_path, vendor="approve",
         why="onnxruntime-extensions' library comes from the installed package, not from the repo"),
])
