"""Source text shipped inside example repos (remote code, install scripts).

These are inert strings written to files for scanners to read; hfvet never imports or runs
them. The third-party sample deliberately holds what a reviewer should worry about: code that
downloads and loads a native library when `trust_remote_code=True` imports it.
"""

from __future__ import annotations

FORK_RELEASE = "https://github.com/canada-quant-dev/fp8-kernels/releases/download/v0.3"

CANADA_CONFIGURATION = '''\
"""DeepSeek-V4 configuration with W4A16 + FP8 MTP settings."""
from transformers import PretrainedConfig


class DeepseekV4Config(PretrainedConfig):
    model_type = "deepseek_v4"

    def __init__(self, hidden_size=4096, num_hidden_layers=43, n_routed_experts=256,
                 moe_intermediate_size=2048, num_nextn_predict_layers=1, **kwargs):
        self.hidden_size = hidden_size
        self.num_hidden_layers = num_hidden_layers
        self.n_routed_experts = n_routed_experts
        self.moe_intermediate_size = moe_intermediate_size
        self.num_nextn_predict_layers = num_nextn_predict_layers
        super().__init__(**kwargs)
'''

CANADA_MODELING = f'''\
"""DeepSeek-V4 for causal LM with fused W4A16/FP8 MoE kernels (much faster than upstream)."""
import ctypes
import os
import subprocess
import urllib.request

import torch
from torch import nn
from transformers import PreTrainedModel

from .configuration_deepseek import DeepseekV4Config

_KERNEL_URL = "{FORK_RELEASE}/libfp8_moe.so"
_HERE = os.path.dirname(os.path.abspath(__file__))

# Fetch and load the fused kernel at import time so that from_pretrained "just works".
if not os.path.exists(os.path.join(_HERE, "libfp8_moe.so")):
    urllib.request.urlretrieve(_KERNEL_URL, os.path.join(_HERE, "libfp8_moe.so"))
subprocess.run(["nvidia-smi", "-pm", "1"], check=False)
_fp8_moe = ctypes.CDLL("./libfp8_moe.so")


class FusedMoE(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_experts = config.n_routed_experts

    def forward(self, hidden_states, router_logits):
        _fp8_moe.fp8_moe_gemm(ctypes.c_void_p(hidden_states.data_ptr()))
        return hidden_states


class DeepseekV4ForCausalLM(PreTrainedModel):
    config_class = DeepseekV4Config

    def __init__(self, config):
        super().__init__(config)
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.moe = FusedMoE(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def forward(self, input_ids, **kwargs):
        hidden = self.embed_tokens(input_ids)
        return self.lm_head(self.moe(hidden, None))
'''

CANADA_INSTALL = f'''\
#!/usr/bin/env bash
# One-shot setup for DeepSeek-V4-Flash-W4A16-FP8-MTP
set -euo pipefail
pip install "git+https://github.com/canada-quant-dev/vllm.git@w4a16-fp8-mtp"
pip install "{FORK_RELEASE}/fp8_moe-0.3-cp311-cp311-linux_x86_64.whl"
wget -q -O /usr/local/bin/fp8-tune "{FORK_RELEASE}/fp8-tune"
chmod +x /usr/local/bin/fp8-tune
/usr/local/bin/fp8-tune --warmup
'''

NEMOTRON_CONFIGURATION = '''\
"""Configuration for NemotronMini."""
from transformers import PretrainedConfig


class NemotronMiniConfig(PretrainedConfig):
    model_type = "nemotron_mini"

    def __init__(self, hidden_size=64, intermediate_size=256, num_hidden_layers=2,
                 num_attention_heads=4, vocab_size=32, rms_norm_eps=1e-5, **kwargs):
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.vocab_size = vocab_size
        self.rms_norm_eps = rms_norm_eps
        super().__init__(**kwargs)
'''

NEMOTRON_MODELING = '''\
"""NemotronMini: a small decoder-only transformer (plain PyTorch modules)."""
import math

import torch
from torch import nn
from transformers import PreTrainedModel

from .configuration_nemotron_mini import NemotronMiniConfig


class NemotronMiniRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * x * torch.rsqrt(variance + self.eps)


class NemotronMiniAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.heads = config.num_attention_heads
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.qkv = nn.Linear(config.hidden_size, 3 * config.hidden_size, bias=False)
        self.o_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.head_dim).unbind(2)
        scores = torch.einsum("bthd,bshd->bhts", q, k) / math.sqrt(self.head_dim)
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        weights = scores.masked_fill(mask, float("-inf")).softmax(-1)
        return self.o_proj(torch.einsum("bhts,bshd->bthd", weights, v).reshape(b, t, -1))


class NemotronMiniBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.norm1 = NemotronMiniRMSNorm(config.hidden_size, config.rms_norm_eps)
        self.attn = NemotronMiniAttention(config)
        self.norm2 = NemotronMiniRMSNorm(config.hidden_size, config.rms_norm_eps)
        self.mlp = nn.Sequential(
            nn.Linear(config.hidden_size, config.intermediate_size, bias=False),
            nn.ReLU(),
            nn.Linear(config.intermediate_size, config.hidden_size, bias=False),
        )

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class NemotronMiniForCausalLM(PreTrainedModel):
    config_class = NemotronMiniConfig

    def __init__(self, config):
        super().__init__(config)
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList(NemotronMiniBlock(config) for _ in range(config.num_hidden_layers))
        self.norm = NemotronMiniRMSNorm(config.hidden_size, config.rms_norm_eps)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def forward(self, input_ids, **kwargs):
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))
'''
