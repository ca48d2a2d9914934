"""Third-party example repos: the sketchy W4A16 quant and a trojaned pickle checkpoint."""

from __future__ import annotations

from pathlib import Path

from app.examples import cards, configs
from app.examples.code_samples import CANADA_CONFIGURATION, CANADA_INSTALL, CANADA_MODELING
from app.examples.elf import shared_object
from app.examples.files import hub_meta, write_bytes, write_hub_meta, write_json, write_text
from app.examples.pickles import TorchTensor
from app.examples.safetensors_writer import TensorSpec, write_sharded
from app.examples.torchfiles import write_torch_zip

CANADA_AUTO_MAP = {
    "AutoConfig": "configuration_deepseek.DeepseekV4Config",
    "AutoModelForCausalLM": "modeling_deepseek.DeepseekV4ForCausalLM",
}
W4A16_QUANT = {
    "quant_method": "compressed-tensors",
    "format": "mixed-precision",
    "config_groups": {
        "experts": {"targets": ["re:.*experts.*"],
                    "weights": {"num_bits": 4, "type": "int", "group_size": 32}},
        "attention": {"targets": ["re:.*self_attn.*"], "weights": {"num_bits": 8, "type": "float"},
                      "input_activations": {"num_bits": 8, "type": "float", "dynamic": True}},
    },
    "ignore": ["lm_head"],
}
# The payload of the trojaned checkpoint: harmless if it ever ran, and it never does here.
PWNED_PAYLOAD = ("posix", "system", "echo pwned")


def _w4a16_expert(prefix: str) -> list[TensorSpec]:
    out: list[TensorSpec] = []
    for proj, rows, cols in (("gate_proj", 32, 64), ("up_proj", 32, 64), ("down_proj", 64, 32)):
        out += [
            TensorSpec(f"{prefix}.{proj}.weight_packed", "I32", (rows, cols // 8)),
            TensorSpec(f"{prefix}.{proj}.weight_scale", "BF16", (rows, cols // 32)),
            TensorSpec(f"{prefix}.{proj}.weight_shape", "I64", (2,)),
        ]
    return out


def _w4a16_shards() -> list[list[TensorSpec]]:
    first = [TensorSpec("model.embed_tokens.weight", "BF16", (32, 64))]
    for e in range(2):
        first += _w4a16_expert(f"model.layers.0.mlp.experts.{e}")
    mtp = [
        TensorSpec("model.layers.1.self_attn.o_proj.weight", "F8_E4M3", (64, 64)),
        TensorSpec("model.layers.1.self_attn.o_proj.weight_scale", "F32", ()),
        TensorSpec("model.layers.1.eh_proj.weight", "BF16", (64, 128)),
        TensorSpec("model.layers.1.enorm.weight", "BF16", (64,)),
        TensorSpec("lm_head.weight", "BF16", (32, 64)),
    ]
    return [first, mtp]


def build_canada_quant(repo: Path) -> None:
    write_sharded(repo, _w4a16_shards(), {"format": "pt"})
    config = configs.deepseek_v4_config(auto_map=CANADA_AUTO_MAP, quantization=W4A16_QUANT)
    write_json(repo, "config.json", config)
    write_json(repo, "generation_config.json", configs.generation_config())
    write_text(repo, "configuration_deepseek.py", CANADA_CONFIGURATION)
    write_text(repo, "modeling_deepseek.py", CANADA_MODELING)
    write_bytes(repo, "libfp8_moe.so", shared_object())
    write_text(repo, "install.sh", CANADA_INSTALL)
    write_json(repo, "tokenizer.json", configs.tokenizer_json(configs.DEEPSEEK_SPECIAL))
    write_json(repo, "tokenizer_config.json", configs.deepseek_tokenizer_config())
    write_text(repo, "README.md", cards.CANADA_CARD)
    write_hub_meta(repo, hub_meta(
        "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP", created="2026-05-02T22:48:09.000Z",
        modified="2026-05-07T03:12:54.000Z", downloads=9_874, likes=58,
        tags=["transformers", "safetensors", "deepseek_v4", "custom_code", "w4a16", "fp8", "mtp",
              "base_model:quantized:deepseek-ai/DeepSeek-V4-Flash", "license:mit"],
        card={"license": "mit", "base_model": "deepseek-ai/DeepSeek-V4-Flash",
              "tags": ["w4a16", "fp8", "mtp", "moe"]},
    ))


def quantfarm_tensors() -> list[TorchTensor]:
    names = [
        ("model.embed_tokens.weight", (32, 16)),
        ("model.layers.0.self_attn.q_proj.weight", (16, 16)),
        ("model.layers.0.self_attn.k_proj.weight", (4, 16)),
        ("model.layers.0.mlp.gate_proj.weight", (24, 16)),
        ("model.layers.0.input_layernorm.weight", (16,)),
        ("model.norm.weight", (16,)),
        ("lm_head.weight", (32, 16)),
    ]
    return [TorchTensor(name, "F32", shape, str(i)) for i, (name, shape) in enumerate(names)]


def build_quantfarm_pickle(repo: Path) -> None:
    write_torch_zip(repo / "pytorch_model.bin", quantfarm_tensors(), archive="pytorch_model",
                    payload=PWNED_PAYLOAD)
    write_json(repo, "config.json", configs.llama_config())
    write_json(repo, "generation_config.json", {"bos_token_id": 128000, "eos_token_id": 128009})
    write_json(repo, "tokenizer.json", configs.tokenizer_json(configs.LLAMA_SPECIAL))
    write_json(repo, "tokenizer_config.json", configs.llama_tokenizer_config())
    write_text(repo, "README.md", cards.QUANTFARM_CARD)
    write_hub_meta(repo, hub_meta(
        "quantfarm/Llama-3.1-8B-Instruct-pt", created="2026-03-14T07:30:00.000Z",
        modified="2026-03-14T07:31:12.000Z", downloads=1_203, likes=4,
        tags=["transformers", "pytorch", "llama", "base_model:meta-llama/Llama-3.1-8B-Instruct"],
        card={"license": "llama3.1", "base_model": "meta-llama/Llama-3.1-8B-Instruct",
              "tags": ["llama", "pytorch"]},
    ))
