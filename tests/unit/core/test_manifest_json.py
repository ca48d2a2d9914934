"""The stored manifest codec (app/core/manifest_json.py), and that it is the one home of that format."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

import pytest

from app.core import manifest_json
from app.core.manifest import ManifestFile
from app.core.manifest_json import ManifestFormatError

APP = Path(__file__).resolve().parents[3] / "app"
FILES = (ManifestFile("config.json", 22, None, "b" * 40, "json"),
         ManifestFile("w/model.safetensors", 80, "a" * 64, "0" * 40, "safetensors"))


def test_a_dumped_manifest_loads_back_as_the_same_files() -> None:
    doc = manifest_json.dump(FILES)
    assert doc[0] == {"path": "config.json", "size": 22, "sha256": None, "blob_id": "b" * 40, "format": "json"}
    assert manifest_json.load(doc) == FILES
    assert manifest_json.declared_bytes(doc) == 102


@pytest.mark.parametrize(("entry", "says"), [
    ({"path": "../x", "size": 1, "blob_id": "b" * 40}, "../x: not a safe relative path"),
    ("not an object", "(empty path): not a safe relative path"),
    ({"path": ".cache/huggingface/x", "size": 1, "blob_id": "b" * 40}, ".cache/huggingface/x: not a safe relative"),
    ({"path": "config.json", "size": 1, "blob_id": "b" * 40}, "config.json: listed twice"),
    ({"path": "x", "size": True, "blob_id": "b" * 40}, "x: the manifest's size 'True' is not a byte count"),
    ({"path": "x", "size": 1}, "x: the manifest records no hash for it"),
    ({"path": "x", "size": 1, "sha256": "z" * 64}, "x: the manifest's sha256 'zzz"),
])
def test_an_entry_that_cannot_be_verified_or_placed_is_refused(entry: object, says: str) -> None:
    with pytest.raises(ManifestFormatError, match=f"^{re.escape(says)}"):
        manifest_json.load([*manifest_json.dump(FILES), entry], reserved=PurePosixPath(".cache/huggingface"))


def test_the_stored_manifest_is_spelled_out_only_in_its_codec() -> None:
    """Writing or reading a manifest entry's keys happens in core/manifest_json.py; services/diff.py reads
    a report's files[] (the §6.2 report format, app.core.report_json), which carries the same hashes."""
    spellers = {str(p.relative_to(APP)) for p in APP.rglob("*.py") if '"blob_id"' in p.read_text(encoding="utf-8")}
    assert spellers == {"core/manifest_json.py", "services/diff.py"}
