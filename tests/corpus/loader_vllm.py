"""vLLM surfaces (app/core/loaders/map/vllm.yaml). Inert text only.

Read from the vllm 0.33.0 wheel: ``config/model.py`` ModelConfig.__post_init__ loads the model,
``--tokenizer`` and ``--hf-config-path`` repos with the one ``trust_remote_code``;
``config/speculative.py`` SpeculativeConfig.__post_init__ gives the draft model the target's
``trust_remote_code``; ``utils/argparse_utils.py`` load_config_file turns a ``--config`` YAML's keys into
flags; ``plugins/__init__.py`` load_plugins_by_group loads and calls every ``vllm.general_plugins``
entry point of an installed package in every process.
"""

from __future__ import annotations

import json

from tests.corpus.registry import Case, register_all

FAMILY = "loader-vllm"
PAYLOAD = "echo hfvet-test"
CONFIG = json.dumps({"model_type": "llama"}).encode()


def serve_tokenizer_other_repo() -> dict[str, bytes]:
    card = ("# Tiny chat (AWQ)\n\n```bash\nvllm serve some-user/repo \\\n  --tokenizer quant-helpers/tok-patch \\\n"
            "  --trust-remote-code --max-model-len 4096\n```\n")
    return {"README.md": card.encode(), "config.json": CONFIG}


def serve_vendor_own_repo() -> dict[str, bytes]:
    card = ("# Nemotron Nano\n\n## Serve with vLLM\n\n```bash\nvllm serve nvidia/Llama-3.1-Nemotron-Nano-8B-v1 "
            "--trust-remote-code --served-model-name meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 1\n```\n"
            "\nA local copy works too: `vllm serve ./checkpoint --tokenizer ./checkpoint`.\n")
    return {"README.md": card.encode(), "config.json": CONFIG}


def speculative_draft_other_repo() -> dict[str, bytes]:
    script = ("#!/bin/sh\nvllm serve some-user/repo --trust-remote-code \\\n"
              "  --speculative-config '{\"model\": \"fast-drafts/tiny-eagle\", \"num_speculative_tokens\": 5}'\n")
    return {"serve.sh": script.encode(), "config.json": CONFIG}


def speculative_vendor_eagle3() -> dict[str, bytes]:
    card = ("# Llama 3.3 70B Eagle3 head\n\n```bash\nvllm serve meta-llama/Llama-3.3-70B-Instruct \\\n"
            "  --speculative-config '{\"method\": \"eagle3\", \"model\": \"nvidia/Llama-3.3-70B-Instruct-Eagle3\", "
            "\"num_speculative_tokens\": 3}'\n```\n\n```python\nfrom vllm import LLM\n"
            "llm = LLM(model=\"meta-llama/Llama-3.3-70B-Instruct\",\n"
            "          speculative_config={\"method\": \"eagle3\",\n"
            "                              \"model\": \"nvidia/Llama-3.3-70B-Instruct-Eagle3\",\n"
            "                              \"num_speculative_tokens\": 3})\n```\n")
    return {"README.md": card.encode(), "config.json": CONFIG}


def llm_call_trusts_other_tokenizer() -> dict[str, bytes]:
    script = ("from vllm import LLM, SamplingParams\n\n"
              "llm = LLM(model=\"some-user/repo\", tokenizer=\"quant-helpers/tok-patch\",\n"
              "          trust_remote_code=True)\nprint(llm.generate(\"hi\", SamplingParams(max_tokens=8)))\n")
    return {"run_vllm.py": script.encode(), "config.json": CONFIG}


def llm_call_vendor_own_repo() -> dict[str, bytes]:
    card = ("# Model card\n\n```python\nfrom vllm import LLM\n"
            "llm = LLM(model=\"nvidia/NVIDIA-Nemotron-Nano-9B-v2\", trust_remote_code=True, max_model_len=8192)\n```\n")
    return {"README.md": card.encode(), "config.json": CONFIG}


def config_yaml_draft_other_repo() -> dict[str, bytes]:
    recipe = ("model: some-user/repo\ntrust-remote-code: true\ntensor-parallel-size: 2\nspeculative-config:\n"
              "  model: fast-drafts/tiny-eagle\n  num_speculative_tokens: 4\n")
    return {"vllm_config.yaml": recipe.encode(), "config.json": CONFIG}


def config_yaml_vendor_recipe() -> dict[str, bytes]:
    # The shape of vLLM's own load_config_file docstring example (a vendor Eagle3 head), plus a local tokenizer.
    recipe = ("model: nvidia/gpt-oss-120b-Eagle3-v2\nport: 8000\ntensor-parallel-size: 4\n"
              "trust-remote-code: true\ntokenizer: ./tokenizer\nspeculative-config:\n"
              "  model: nvidia/gpt-oss-120b-Eagle3-v2\n  num_speculative_tokens: 3\n")
    return {"configs/vllm-serve.yaml": recipe.encode(), "tokenizer/tokenizer.json": b"{}", "config.json": CONFIG}


def general_plugin_spawns() -> dict[str, bytes]:
    pyproject = ("[project]\nname = \"tiny-vllm-plugin\"\nversion = \"0.1\"\n\n"
                 "[project.entry-points.\"vllm.general_plugins\"]\ntiny = \"tiny_plugin:register\"\n")
    plugin = ("import subprocess\n\n\ndef register():\n    subprocess.run([\"sh\", \"-c\", " + repr(PAYLOAD) + "])\n")
    return {"pyproject.toml": pyproject.encode(), "tiny_plugin.py": plugin.encode(), "config.json": CONFIG}


def vendor_model_plugin() -> dict[str, bytes]:
    # vLLM's documented out-of-tree model plugin: register() adds an architecture to the ModelRegistry.
    setup = ("from setuptools import setup\n\nsetup(name=\"vllm_add_dummy_model\", version=\"0.1\", "
             "packages=[\"vllm_add_dummy_model\"],\n      entry_points={\"vllm.general_plugins\": "
             "[\"register_dummy_model = vllm_add_dummy_model:register\"]})\n")
    init = ("from vllm import ModelRegistry\n\n\ndef register():\n"
            "    if \"MyLlava\" not in ModelRegistry.get_supported_archs():\n"
            "        ModelRegistry.register_model(\"MyLlava\", \"vllm_add_dummy_model.my_llava:MyLlava\")\n")
    return {"setup.py": setup.encode(), "vllm_add_dummy_model/__init__.py": init.encode(), "config.json": CONFIG}


register_all([
    Case(FAMILY, "serve-tokenizer-other-repo", "hostile", serve_tokenizer_other_repo,
         rule="third-party-unvetted-code-reference",
         why="ModelConfig gives --tokenizer the command's trust_remote_code: quant-helpers/tok-patch's code runs"),
    Case(FAMILY, "speculative-draft-other-repo", "hostile", speculative_draft_other_repo,
         rule="third-party-unvetted-code-reference",
         why="SpeculativeConfig builds the draft's ModelConfig with the target's trust_remote_code"),
    Case(FAMILY, "llm-call-trusts-other-tokenizer", "hostile", llm_call_trusts_other_tokenizer,
         rule="third-party-unvetted-code-reference",
         why="LLM(tokenizer=..., trust_remote_code=True): EngineArgs loads that tokenizer repo's code"),
    Case(FAMILY, "config-yaml-draft-other-repo", "hostile", config_yaml_draft_other_repo,
         rule="third-party-unvetted-code-reference",
         why="load_config_file turns trust-remote-code and speculative-config into flags: the draft runs trusted"),
    Case(FAMILY, "general-plugin-spawns", "hostile", general_plugin_spawns, rule="remote-code-dangerous",
         why="installed, load_general_plugins calls tiny_plugin.register in every vLLM process: it spawns a shell"),
    Case(FAMILY, "serve-vendor-own-repo", "benign", serve_vendor_own_repo, vendor="approve",
         why="a vendor card serving its own repo; --served-model-name is a label (nothing fetched), ./ is local"),
    Case(FAMILY, "speculative-vendor-eagle3", "benign", speculative_vendor_eagle3, vendor="approve",
         why="the Eagle3 card shape: a vendor draft head for a vendor base model, no trust_remote_code"),
    Case(FAMILY, "llm-call-vendor-own-repo", "benign", llm_call_vendor_own_repo, vendor="approve",
         why="LLM() on the vendor's own repo with trust_remote_code: judged by that repo's own vet"),
    Case(FAMILY, "config-yaml-vendor-recipe", "benign", config_yaml_vendor_recipe, vendor="approve",
         why="a vendor serve recipe: same-org model and draft, a local tokenizer folder"),
    Case(FAMILY, "vendor-model-plugin", "benign", vendor_model_plugin, vendor="review", reason="remote-code-auto-map",
         why="vLLM's documented out-of-tree model plugin (register() adds a ModelRegistry entry): code an "
             "install runs, reviewed like auto_map code"),
])
