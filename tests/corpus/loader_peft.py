"""PEFT surfaces of the loader map (app/core/loaders/map/peft.yaml). Inert JSON only.

peft 0.21.2 ``auto._BaseAutoPeftModel.from_pretrained`` loads the adapter's
``base_model_name_or_path`` (at its ``revision``) with the caller's kwargs, trust_remote_code
included; transformers 5.23.0's adapter path does the same at the default branch. So whatever code the
base ships behind auto_map runs with the user's trust.
"""

from __future__ import annotations

import json

from tests.corpus.registry import Case, register_all

FAMILY = "loader-peft"


def _json(value: object) -> bytes:
    return json.dumps(value, indent=2).encode()


def adapter_on_third_party_base() -> dict[str, bytes]:
    config = {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": 16, "lora_alpha": 32,
              "target_modules": ["q_proj", "v_proj"], "base_model_name_or_path": "fastlm-labs/fastlm-7b-remote"}
    return {"adapter_config.json": _json(config)}


def adapter_on_vendor_base() -> dict[str, bytes]:
    # The shape PEFT's save_pretrained writes for a LoRA on a vendor instruct model.
    config = {"alpha_pattern": {}, "auto_mapping": None, "base_model_name_or_path": "meta-llama/Llama-3.1-8B-Instruct",
              "bias": "none", "fan_in_fan_out": False, "inference_mode": True, "init_lora_weights": True,
              "lora_alpha": 16, "lora_dropout": 0.05, "modules_to_save": ["lm_head"], "peft_type": "LORA", "r": 8,
              "revision": None, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"], "task_type": "CAUSAL_LM"}
    return {"adapter_config.json": _json(config)}


register_all([
    Case(FAMILY, "adapter-on-third-party-base", "hostile", adapter_on_third_party_base,
         rule="third-party-unvetted-code-reference",
         why="AutoPeftModelForCausalLM.from_pretrained loads fastlm-labs/fastlm-7b-remote first with the user's "
             "trust_remote_code: its auto_map code runs, vetted nowhere"),
    Case(FAMILY, "adapter-on-vendor-base", "benign", adapter_on_vendor_base, vendor="review",
         reason="referenced-repo-elsewhere",
         why="a LoRA on meta-llama/Llama-3.1-8B-Instruct with modules_to_save: the base is another org's, vetted "
             "on its own"),
])
