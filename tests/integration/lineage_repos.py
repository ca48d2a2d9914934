"""Fixture-hub repos for the lineage tests: a vendor base, a mirror, a quant of the base, and false claims."""

from __future__ import annotations

import shutil
from pathlib import Path

from app.examples import build_example, configs
from app.examples.files import hub_meta, write_hub_meta, write_json, write_text
from app.examples.safetensors_writer import TensorSpec, write_sharded

BASE = "deepseek-ai/DeepSeek-V4-Flash"
VENDOR_QUANT = "nvidia/DeepSeek-V4-Flash-NVFP4"  # an example repo (app/examples), vendor-official
VENDOR_LITE = "nvidia/DeepSeek-V4-Flash-NVFP4-Lite"  # the vendor's own repo sharing most of VENDOR_QUANT's bytes
MIRROR = "mirrorco/DeepSeek-V4-Flash-NVFP4"  # its bytes plus one added file
QUANT = "quantco/DeepSeek-V4-Flash-FP8"  # the base cast to FP8: same names and shapes, same tokenizer
IMPOSTOR = "impostor/DeepSeek-V4-Flash-Tuned"  # claims the base, shares nothing with it
ORPHAN = "orphanco/Mystery-Base-Quant"  # claims a base never vetted here
NAMES = ("model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight", "model.layers.0.mlp.gate_proj.weight",
         "model.norm.weight", "lm_head.weight")
SHAPES = ((32, 16), (16, 16), (24, 16), (16,), (32, 16))
META = {"created": "2026-05-01T00:00:00.000Z", "modified": "2026-05-02T00:00:00.000Z", "downloads": 1, "likes": 0}


def _tensors(dtype: str, names: tuple[str, ...] = NAMES) -> list[TensorSpec]:
    return [TensorSpec(name, dtype, shape) for name, shape in zip(names, SHAPES, strict=True)]


def _identity_files(repo: Path) -> None:
    write_json(repo, "tokenizer.json", configs.tokenizer_json(configs.DEEPSEEK_SPECIAL))
    write_json(repo, "tokenizer_config.json", configs.deepseek_tokenizer_config())
    write_json(repo, "generation_config.json", configs.generation_config())


def _meta(repo: Path, repo_id: str, card: dict[str, object]) -> None:
    write_hub_meta(repo, hub_meta(repo_id, tags=["safetensors"], card=card, **META))  # type: ignore[arg-type]


def build_base(root: Path) -> None:
    repo = root / BASE
    write_sharded(repo, [_tensors("BF16")[:3], _tensors("BF16")[3:]], {"format": "pt"})
    write_json(repo, "config.json", configs.deepseek_v4_config())
    _identity_files(repo)
    write_text(repo, "README.md", "# DeepSeek-V4-Flash\n")
    _meta(repo, BASE, {"license": "mit"})


def build_quant(root: Path) -> None:
    """The base in FP8, sharded differently, with its own config and two new files."""
    repo = root / QUANT
    write_sharded(repo, [_tensors("F8_E4M3")], {"format": "pt"})
    write_json(repo, "config.json", configs.deepseek_v4_config(quantization={"quant_method": "fp8"}))
    _identity_files(repo)
    write_json(repo, "hf_quant_config.json", configs.hf_quant_config())
    write_text(repo, "README.md", "# FP8 quant of DeepSeek-V4-Flash\n")
    _meta(repo, QUANT, {"license": "mit", "base_model": BASE})


def build_impostor(root: Path) -> None:
    repo = root / IMPOSTOR
    names = tuple(n.replace("model.", "transformer.") for n in NAMES)
    write_sharded(repo, [_tensors("F16", names)], {"format": "pt"})
    write_json(repo, "config.json", configs.llama_config())
    write_json(repo, "tokenizer.json", configs.tokenizer_json(configs.LLAMA_SPECIAL))
    write_json(repo, "tokenizer_config.json", configs.llama_tokenizer_config())
    write_text(repo, "README.md", "# Fine-tuned from DeepSeek-V4-Flash, honest\n")
    _meta(repo, IMPOSTOR, {"license": "mit", "base_model": BASE})


def build_orphan(root: Path) -> None:
    repo = root / ORPHAN
    write_sharded(repo, [_tensors("F8_E4M3")], {"format": "pt"})
    _identity_files(repo)
    write_text(repo, "README.md", "# A quant of a base nobody vetted\n")
    _meta(repo, ORPHAN, {"license": "mit", "base_model": ["someone/Unvetted-Base", "other/Base"]})


def build_mirror(root: Path) -> None:
    """A byte-for-byte copy of the vendor's NVFP4 repo under a third-party org, plus a notes file."""
    build_example(root, VENDOR_QUANT)
    target = root / MIRROR
    shutil.copytree(root / VENDOR_QUANT, target)
    write_text(target, "MIRROR.md", "Mirrored for our air-gapped cluster.\n")
    meta = hub_meta(MIRROR, tags=["safetensors"], card={"license": "mit"}, **META)  # type: ignore[arg-type]
    write_hub_meta(target, meta)


def build_vendor_lite(root: Path) -> None:
    """Another repo of the vendor's org: VENDOR_QUANT's bytes with its own card (built after build_mirror)."""
    target = root / VENDOR_LITE
    shutil.copytree(root / VENDOR_QUANT, target)
    write_text(target, "README.md", "# DeepSeek-V4-Flash NVFP4, the lighter card\n")
    write_hub_meta(target, hub_meta(VENDOR_LITE, tags=["safetensors"], card={"license": "mit"}, **META))  # type: ignore[arg-type]


def build_all(root: Path) -> None:
    for build in (build_base, build_quant, build_impostor, build_orphan, build_mirror, build_vendor_lite):
        build(root)
