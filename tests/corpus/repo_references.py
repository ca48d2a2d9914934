"""Repos that make their loader fetch other repos (issue 12 item 3). Inert JSON and text only.

- PEFT ``PeftModel.from_pretrained`` reads ``adapter_config.json`` and loads
  ``base_model_name_or_path`` at ``revision`` (unset: the default branch, whatever it holds then).
- transformers' ``get_class_from_dynamic_module`` splits an ``auto_map`` value
  ``org/name--module.Class`` and downloads ``module.py`` from *that* repo, so
  ``trust_remote_code=True`` here runs code vetted nowhere. Tokenizer configs map to a
  ``[slow, fast]`` pair, processors and feature extractors use the same form.
- Cards tell users ``AutoModel.from_pretrained("org/name", revision=...)`` and list ``base_model``.
"""

from __future__ import annotations

import json

from tests.corpus.registry import Case, register_all

FAMILY = "repo-references"
RULE = "repo-reference"


def _json(value: object) -> bytes:
    return json.dumps(value, indent=2).encode()


def auto_map_elsewhere() -> dict[str, bytes]:
    return {
        "config.json": _json({"architectures": ["TinyForCausalLM"], "model_type": "tiny",
                              "auto_map": {"AutoConfig": "someone/tiny-code--configuration_tiny.TinyConfig",
                                           "AutoModelForCausalLM": "someone/tiny-code--modeling_tiny.TinyLM"},
                              "text_config": {"_name_or_path": "someone/text-tower"}}),
        "tokenizer_config.json": _json({"auto_map": {"AutoTokenizer": ["someone/tok--tok.Slow",
                                                                       "someone/tok--tok.Fast"]}}),
    }


def adapter_unpinned() -> dict[str, bytes]:
    return {"adapter_config.json": _json({"peft_type": "LORA", "r": 8, "target_modules": ["q_proj", "v_proj"],
                                          "base_model_name_or_path": "someone/base-7b"})}


def card_and_script() -> dict[str, bytes]:
    card = ("---\nlicense: apache-2.0\nbase_model:\n- someone/base-7b\n---\n# Use\n```python\n"
            "model = AutoModel.from_pretrained(\"someone/base-7b\", revision=\"v1.0\", trust_remote_code=True)\n```\n")
    script = ("from huggingface_hub import hf_hub_download\n"
              "path = hf_hub_download(repo_id=\"someone/helpers\", filename=\"ops.py\")\n")
    return {"README.md": card.encode(), "run.py": script.encode()}


def vendor_adapter() -> dict[str, bytes]:
    return {"adapter_config.json": _json({"peft_type": "LORA", "r": 16,
                                          "base_model_name_or_path": "nvidia/Llama-3.1-8B-Instruct",
                                          "revision": "0e9e39f249a16976918f6564b8830bc894c89659"})}


register_all([
    Case(FAMILY, "auto-map-in-another-repo", "hostile", auto_map_elsewhere, rule=RULE,
         why="trust_remote_code fetches modeling/tokenizer code from someone/tiny-code and someone/tok"),
    Case(FAMILY, "adapter-unpinned-base", "hostile", adapter_unpinned, rule=RULE,
         why="PEFT loads someone/base-7b at whatever its default branch holds at load time"),
    Case(FAMILY, "card-from-pretrained-and-hub-download", "hostile", card_and_script, rule=RULE,
         why="users paste the card's from_pretrained; the script downloads code from another repo"),
    Case(FAMILY, "benign-vendor-adapter-pinned", "benign", vendor_adapter, vendor="approve",
         why="an adapter on the vendor's own base model, pinned to a commit: listed, not a finding to act on"),
])
