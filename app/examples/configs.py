"""JSON files of the example repos: model configs, quantization configs, tokenizers."""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]

# DeepSeek's special tokens use FULLWIDTH VERTICAL LINE and LOWER ONE EIGHTH BLOCK characters.
_BAR, _SPACE = "\uff5c", "\u2581"
DS_BOS = f"<{_BAR}begin{_SPACE}of{_SPACE}sentence{_BAR}>"
DS_EOS = f"<{_BAR}end{_SPACE}of{_SPACE}sentence{_BAR}>"
DS_USER = f"<{_BAR}User{_BAR}>"
DS_ASSISTANT = f"<{_BAR}Assistant{_BAR}>"

DEEPSEEK_CHAT_TEMPLATE = (
    "{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}"
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['role'] == 'system' %}{{ message['content'] + '\\n\\n' }}"
    f"{{% elif message['role'] == 'user' %}}{{{{ '{DS_USER}' + message['content'] }}}}"
    f"{{% elif message['role'] == 'assistant' %}}{{{{ '{DS_ASSISTANT}' + message['content'] + eos_token }}}}"
    "{% endif %}{% endfor %}"
    f"{{% if add_generation_prompt %}}{{{{ '{DS_ASSISTANT}' }}}}{{% endif %}}"
)

LLAMA_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim"
    " + '<|eot_id|>' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}"
)

NVFP4_QUANT = {
    "quant_method": "modelopt",
    "quant_algo": "NVFP4",
    "kv_cache_quant_algo": "FP8",
    "group_size": 16,
    "exclude_modules": ["lm_head", "model.layers.*.self_attn*", "model.layers.*.mlp.gate"],
}


def deepseek_v4_config(*, layers: int = 43, experts: int = 256, auto_map: dict[str, str] | None = None,
                       quantization: JSON | None = None) -> JSON:
    config: JSON = {
        "architectures": ["DeepseekV4ForCausalLM"],
        "model_type": "deepseek_v4",
        "hidden_size": 4096,
        "intermediate_size": 12288,
        "moe_intermediate_size": 2048,
        "num_hidden_layers": layers,
        "num_attention_heads": 64,
        "num_key_value_heads": 64,
        "n_routed_experts": experts,
        "n_shared_experts": 1,
        "num_experts_per_tok": 8,
        "first_k_dense_replace": 1,
        "moe_layer_freq": 1,
        "routed_scaling_factor": 2.5,
        "scoring_func": "sigmoid",
        "topk_method": "noaux_tc",
        "n_group": 8,
        "topk_group": 4,
        "q_lora_rank": 1024,
        "kv_lora_rank": 512,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
        "num_nextn_predict_layers": 1,
        "max_position_embeddings": 1048576,
        "rope_theta": 10000,
        "rms_norm_eps": 1e-06,
        "vocab_size": 129280,
        "bos_token_id": 0,
        "eos_token_id": 1,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.57.0",
        "quantization_config": quantization if quantization is not None else dict(NVFP4_QUANT),
    }
    if auto_map:
        config["auto_map"] = auto_map
    return config


def generation_config() -> JSON:
    return {"bos_token_id": 0, "eos_token_id": 1, "do_sample": True, "temperature": 0.6, "top_p": 0.95,
            "transformers_version": "4.57.0"}


def hf_quant_config() -> JSON:
    return {
        "producer": {"name": "modelopt", "version": "0.39.0"},
        "quantization": {k: v for k, v in NVFP4_QUANT.items() if k != "quant_method"},
    }


def tokenizer_json(special: list[str]) -> JSON:
    """A tiny byte-level BPE tokenizer: a real tokenizer.json shape, ten-odd tokens."""
    vocab = {tok: i for i, tok in enumerate([*special, "a", "b", "c", "ab", "bc", "abc", "Ġ", "Ġa"])}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": tok, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True}
            for i, tok in enumerate(special)
        ],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                          "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "vocab": vocab, "merges": [["a", "b"], ["b", "c"], ["ab", "c"], ["Ġ", "a"]]},
    }


DEEPSEEK_SPECIAL = [DS_BOS, DS_EOS, DS_USER, DS_ASSISTANT]
LLAMA_SPECIAL = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
                 "<|eot_id|>"]


def deepseek_tokenizer_config() -> JSON:
    return {
        "add_bos_token": True,
        "add_eos_token": False,
        "bos_token": DEEPSEEK_SPECIAL[0],
        "eos_token": DEEPSEEK_SPECIAL[1],
        "clean_up_tokenization_spaces": False,
        "model_max_length": 1048576,
        "tokenizer_class": "LlamaTokenizerFast",
        "chat_template": DEEPSEEK_CHAT_TEMPLATE,
    }


def llama_config() -> JSON:
    return {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
        "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
        "rope_theta": 500000.0, "rms_norm_eps": 1e-05, "bos_token_id": 128000, "eos_token_id": 128009,
        "torch_dtype": "float32", "transformers_version": "4.43.0",
    }


def llama_tokenizer_config() -> JSON:
    return {"bos_token": LLAMA_SPECIAL[0], "eos_token": LLAMA_SPECIAL[4], "model_max_length": 131072,
            "tokenizer_class": "PreTrainedTokenizerFast", "chat_template": LLAMA_CHAT_TEMPLATE}


def nemotron_config() -> JSON:
    return {
        "architectures": ["NemotronMiniForCausalLM"],
        "model_type": "nemotron_mini",
        "auto_map": {
            "AutoConfig": "configuration_nemotron_mini.NemotronMiniConfig",
            "AutoModelForCausalLM": "modeling_nemotron_mini.NemotronMiniForCausalLM",
        },
        "hidden_size": 64, "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
        "vocab_size": 32, "max_position_embeddings": 4096, "rms_norm_eps": 1e-05,
        "torch_dtype": "bfloat16", "transformers_version": "4.57.0",
    }
