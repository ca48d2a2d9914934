"""Paths a model file names for its runtime to open (ONNX external data, CoreML linked models).

A runtime joins the name to the model's folder and opens it. The name is attacker data: one
that leaves the folder (``..``, an absolute path, a drive letter, a UNC share, a URL a loader
may fetch) makes the runtime read a file the repo never shipped (``/etc/passwd``, a key, a
device), into tensors the model can return. onnx's checker refuses such names since onnx 1.16
(``resolve_external_data_location``: CVE-2024-27318, CVE-2024-5187); older onnx, onnxruntime
before its own check, and other frontends read them. ``*/_ORT_MEM_ADDR_/*`` is onnxruntime's
marker for "the offset is a pointer into this process" (``kTensorProtoMemoryAddressTag``,
followed by OpenVINO's ONNX frontend too): from a file, a read of any address.
Backslashes count as separators (Windows runtimes split on them).
"""

from __future__ import annotations

import posixpath
import re

ORT_MEMORY_TAG = "*/_ORT_MEM_ADDR_/*"
_DRIVE = re.compile(r"^[A-Za-z]:")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:/")


def escape_reason(location: str) -> str | None:
    """Why ``location`` reaches outside the model's folder, or None when it stays inside."""
    if location == ORT_MEMORY_TAG:
        return "onnxruntime's in-memory marker: the offset is read as a memory address"
    if "\0" in location:
        return "a NUL byte (the name the runtime opens is cut there)"
    slashed = location.replace("\\", "/")
    if _URL.match(slashed):
        return "a URL"
    if slashed.startswith("/"):
        return "an absolute path" if not slashed.startswith("//") else "a network (UNC) path"
    if _DRIVE.match(slashed):
        return "a drive-letter path"
    if ".." in slashed.split("/"):
        return "a '..' component (it climbs out of the model's folder)"
    return None


def resolve(model_path: str, location: str) -> str:
    """The repo path ``location`` names, relative to the folder of ``model_path``."""
    folder = posixpath.dirname(model_path)
    return posixpath.normpath(posixpath.join(folder, location.replace("\\", "/")))
