"""Tensor names and shapes of an NVFP4 (ModelOpt) DeepSeek-style MoE checkpoint.

NVFP4 packs two FP4 values per byte (U8 weight, half the input width) with one FP8 E4M3 scale
per 16 inputs, a per-tensor F32 `weight_scale_2` and an F32 `input_scale`. Attention, norms and
the router stay BF16/F32, as ModelOpt exports them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from app.examples.safetensors_writer import TensorSpec


@dataclass(frozen=True)
class MoeShape:
    hidden: int = 4096
    moe_intermediate: int = 2048
    experts: int = 256
    vocab: int = 129280
    heads: int = 64
    q_lora: int = 1024
    kv_lora: int = 512
    qk_nope: int = 128
    rope: int = 64
    v_head: int = 128
    scale: float = 1.0  # shrinks every tensor's first dimension (bytes), never the counts

    def rows(self, n: int) -> int:
        return max(1, round(n * self.scale))


def nvfp4_linear(s: MoeShape, prefix: str, out_dim: int, in_dim: int) -> list[TensorSpec]:
    rows = s.rows(out_dim)
    return [
        TensorSpec(f"{prefix}.weight", "U8", (rows, in_dim // 2)),
        TensorSpec(f"{prefix}.weight_scale", "F8_E4M3", (rows, in_dim // 16)),
        TensorSpec(f"{prefix}.weight_scale_2", "F32", ()),
        TensorSpec(f"{prefix}.input_scale", "F32", ()),
    ]


def expert(s: MoeShape, prefix: str) -> list[TensorSpec]:
    return [
        *nvfp4_linear(s, f"{prefix}.gate_proj", s.moe_intermediate, s.hidden),
        *nvfp4_linear(s, f"{prefix}.up_proj", s.moe_intermediate, s.hidden),
        *nvfp4_linear(s, f"{prefix}.down_proj", s.hidden, s.moe_intermediate),
    ]


def attention(s: MoeShape, prefix: str) -> list[TensorSpec]:
    bf16 = [
        ("q_a_proj", s.q_lora, s.hidden),
        ("q_b_proj", s.heads * (s.qk_nope + s.rope), s.q_lora),
        ("kv_a_proj_with_mqa", s.kv_lora + s.rope, s.hidden),
        ("kv_b_proj", s.heads * (s.qk_nope + s.v_head), s.kv_lora),
        ("o_proj", s.hidden, s.heads * s.v_head),
    ]
    tensors = [TensorSpec(f"{prefix}.{n}.weight", "BF16", (s.rows(o), i)) for n, o, i in bf16]
    tensors.append(TensorSpec(f"{prefix}.q_a_layernorm.weight", "BF16", (s.q_lora,)))
    tensors.append(TensorSpec(f"{prefix}.kv_a_layernorm.weight", "BF16", (s.kv_lora,)))
    return tensors


def layer(s: MoeShape, index: int) -> list[TensorSpec]:
    p = f"model.layers.{index}"
    tensors = [
        TensorSpec(f"{p}.input_layernorm.weight", "BF16", (s.hidden,)),
        *attention(s, f"{p}.self_attn"),
        TensorSpec(f"{p}.post_attention_layernorm.weight", "BF16", (s.hidden,)),
        TensorSpec(f"{p}.mlp.gate.weight", "BF16", (s.rows(s.experts), s.hidden)),
        TensorSpec(f"{p}.mlp.gate.e_score_correction_bias", "F32", (s.experts,)),
        *expert(s, f"{p}.mlp.shared_experts"),
    ]
    for e in range(s.experts):
        tensors += expert(s, f"{p}.mlp.experts.{e}")
    return tensors


def model_tensors(s: MoeShape, layers: int) -> Iterator[TensorSpec]:
    yield TensorSpec("model.embed_tokens.weight", "BF16", (s.rows(s.vocab), s.hidden))
    for i in range(layers):
        yield from layer(s, i)
    yield TensorSpec("model.norm.weight", "BF16", (s.hidden,))
    yield TensorSpec("lm_head.weight", "BF16", (s.rows(s.vocab), s.hidden))


def split_evenly(items: list[TensorSpec], parts: int) -> list[list[TensorSpec]]:
    """`parts` consecutive chunks whose lengths differ by at most one."""
    size, extra = divmod(len(items), parts)
    chunks, start = [], 0
    for i in range(parts):
        end = start + size + (1 if i < extra else 0)
        chunks.append(items[start:end])
        start = end
    return chunks
