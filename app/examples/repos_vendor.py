"""Vendor-shaped example repos: the clean NVFP4 quant, its lookalike copy, and a vendor repo
whose model needs remote code."""

from __future__ import annotations

from pathlib import Path

from app.examples import cards, configs
from app.examples.code_samples import NEMOTRON_CONFIGURATION, NEMOTRON_MODELING
from app.examples.files import hub_meta, write_hub_meta, write_json, write_text
from app.examples.nvfp4 import MoeShape, model_tensors, split_evenly
from app.examples.safetensors_writer import TensorSpec, write_sharded

# Real tensor names and dtypes, toy dimensions: a few KB per shard.
TINY_MOE = MoeShape(hidden=64, moe_intermediate=32, experts=2, vocab=32, heads=2, q_lora=32,
                    kv_lora=16, qk_nope=8, rope=8, v_head=8)
ST_METADATA = {"format": "pt"}
DEEPSEEK_TAGS = ["transformers", "safetensors", "deepseek_v4", "text-generation", "nvfp4", "modelopt",
                 "base_model:quantized:deepseek-ai/DeepSeek-V4-Flash", "license:mit"]
DEEPSEEK_CARD_DATA = {"license": "mit", "base_model": "deepseek-ai/DeepSeek-V4-Flash",
                      "library_name": "transformers", "pipeline_tag": "text-generation",
                      "tags": ["deepseek_v4", "nvfp4", "modelopt", "quantized"]}


def _deepseek_nvfp4(repo: Path, repo_id: str, *, created: str, modified: str, downloads: int,
                    likes: int) -> None:
    """The vendor's NVFP4 repo: the same files under any id, only the hub facts differ."""
    write_sharded(repo, split_evenly(list(model_tensors(TINY_MOE, layers=2)), 3), ST_METADATA)
    write_json(repo, "config.json", configs.deepseek_v4_config())
    write_json(repo, "generation_config.json", configs.generation_config())
    write_json(repo, "hf_quant_config.json", configs.hf_quant_config())
    write_json(repo, "tokenizer.json", configs.tokenizer_json(configs.DEEPSEEK_SPECIAL))
    write_json(repo, "tokenizer_config.json", configs.deepseek_tokenizer_config())
    write_text(repo, "README.md", cards.NVIDIA_CARD)
    write_text(repo, "LICENSE", cards.MIT_LICENSE)
    write_hub_meta(repo, hub_meta(
        repo_id, created=created, modified=modified, downloads=downloads, likes=likes,
        tags=DEEPSEEK_TAGS, card=DEEPSEEK_CARD_DATA, library_name="transformers",
    ))


def build_nvidia_nvfp4(repo: Path) -> None:
    _deepseek_nvfp4(repo, "nvidia/DeepSeek-V4-Flash-NVFP4", created="2026-04-28T16:02:11.000Z",
                    modified="2026-05-06T09:41:37.000Z", downloads=184_220, likes=312)


def build_nvldia_lookalike(repo: Path) -> None:
    """A byte-for-byte copy of the vendor repo under an org one letter away from `nvidia`."""
    _deepseek_nvfp4(repo, "nvldia/DeepSeek-V4-Flash-NVFP4", created="2026-05-09T02:17:45.000Z",
                    modified="2026-05-09T02:31:02.000Z", downloads=41, likes=0)


def build_nemotron_custom_code(repo: Path) -> None:
    shards = [[
        TensorSpec("model.embed_tokens.weight", "BF16", (32, 64)),
        TensorSpec("model.layers.0.attn.qkv.weight", "BF16", (192, 64)),
        TensorSpec("model.layers.0.attn.o_proj.weight", "BF16", (64, 64)),
        TensorSpec("model.norm.weight", "BF16", (64,)),
        TensorSpec("lm_head.weight", "BF16", (32, 64)),
    ]]
    write_sharded(repo, shards, ST_METADATA)
    write_json(repo, "config.json", configs.nemotron_config())
    write_text(repo, "configuration_nemotron_mini.py", NEMOTRON_CONFIGURATION)
    write_text(repo, "modeling_nemotron_mini.py", NEMOTRON_MODELING)
    write_json(repo, "tokenizer.json", configs.tokenizer_json(["<s>", "</s>"]))
    write_text(repo, "README.md", cards.NEMOTRON_CARD)
    write_hub_meta(repo, hub_meta(
        "nvidia/Nemotron-Mini-Custom-Code", created="2026-02-11T12:00:00.000Z",
        modified="2026-03-02T08:15:00.000Z", downloads=2_310, likes=17,
        tags=["transformers", "safetensors", "nemotron", "custom_code"],
        card={"license": "other", "license_name": "nvidia-open-model-license",
              "library_name": "transformers", "tags": ["nemotron", "custom_code"]},
    ))
