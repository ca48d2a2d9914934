"""SGLang surfaces (app/core/loaders/map/sglang.yaml). Inert text only.

Read from the sglang 0.5.23 wheel: ``srt/configs/model_config.py`` ModelConfig.from_server_args builds the
draft worker's config (``model_path=speculative_draft_model_path``) with ``trust_remote_code=cfg.trust_remote_code``;
``srt/managers/tokenizer_manager.py`` loads ``tokenizer_path`` with the same flag; ``srt/entrypoints/engine.py``
Engine(**kwargs) builds ServerArgs from keywords; ``srt/utils/server_args_config_parser.py`` merges a
``--config`` YAML's keys as flags.
"""

from __future__ import annotations

import json

from tests.corpus.registry import Case, register_all

FAMILY = "loader-sglang"
CONFIG = json.dumps({"model_type": "llama"}).encode()


def draft_other_repo_trusted() -> dict[str, bytes]:
    card = ("# Serving\n\n```bash\npython -m sglang.launch_server --model-path some-user/repo --trust-remote-code \\\n"
            "  --speculative-algorithm EAGLE --speculative-draft-model-path fast-drafts/tiny-eagle \\\n"
            "  --speculative-num-steps 3\n```\n")
    return {"README.md": card.encode(), "config.json": CONFIG}


def launch_vendor_own_draft() -> dict[str, bytes]:
    card = ("# Serving with SGLang\n\n```bash\npython3 -m sglang.launch_server --model-path nvidia/repo "
            "--trust-remote-code --speculative-algorithm EAGLE3 \\\n"
            "  --speculative-draft-model-path nvidia/Llama-3.1-8B-Instruct-Eagle3 --tp 1\n```\n")
    return {"README.md": card.encode(), "config.json": CONFIG}


def engine_tokenizer_other_repo() -> dict[str, bytes]:
    script = ("import sglang as sgl\n\nllm = sgl.Engine(model_path=\"some-user/repo\",\n"
              "                 tokenizer_path=\"quant-helpers/tok-patch\", trust_remote_code=True)\n")
    return {"run_sglang.py": script.encode(), "config.json": CONFIG}


def engine_vendor_own_repo() -> dict[str, bytes]:
    card = ("```python\nimport sglang as sgl\nllm = sgl.Engine(model_path=\"Qwen/Qwen3-8B\")\n"
            "print(llm.generate(\"hi\", {\"max_new_tokens\": 8}))\n```\n")
    return {"README.md": card.encode(), "config.json": CONFIG}


def config_yaml_tokenizer_other_repo() -> dict[str, bytes]:
    recipe = ("model-path: some-user/repo\ntokenizer-path: quant-helpers/tok-patch\n"
              "trust-remote-code: true\ntp-size: 2\n")
    return {"sglang_config.yaml": recipe.encode(), "config.json": CONFIG}


def config_yaml_vendor() -> dict[str, bytes]:
    recipe = ("model_path: nvidia/DeepSeek-R1-0528-FP4\ntrust_remote_code: true\ntp_size: 8\n"
              "speculative_algorithm: NEXTN\nspeculative_draft_model_path: nvidia/DeepSeek-R1-0528-FP4-NextN\n")
    return {"sglang-serve.yaml": recipe.encode(), "config.json": CONFIG}


register_all([
    Case(FAMILY, "draft-other-repo-trusted", "hostile", draft_other_repo_trusted,
         rule="third-party-unvetted-code-reference",
         why="the draft worker's ModelConfig gets --trust-remote-code: fast-drafts/tiny-eagle's code runs"),
    Case(FAMILY, "engine-tokenizer-other-repo", "hostile", engine_tokenizer_other_repo,
         rule="third-party-unvetted-code-reference",
         why="Engine(tokenizer_path=..., trust_remote_code=True): get_tokenizer runs that repo's tokenizer code"),
    Case(FAMILY, "config-yaml-tokenizer-other-repo", "hostile", config_yaml_tokenizer_other_repo,
         rule="third-party-unvetted-code-reference",
         why="--config merges tokenizer-path and trust-remote-code as flags: the tokenizer repo's code runs"),
    Case(FAMILY, "launch-vendor-own-draft", "benign", launch_vendor_own_draft, vendor="approve",
         why="a vendor card: its own model and its own Eagle3 draft head"),
    Case(FAMILY, "engine-vendor-own-repo", "benign", engine_vendor_own_repo, vendor="approve",
         why="sgl.Engine on a vendor model without trust_remote_code"),
    Case(FAMILY, "config-yaml-vendor", "benign", config_yaml_vendor, vendor="approve",
         why="a vendor serve recipe: its own FP4 model and NextN draft, underscored keys as SGLang accepts them"),
])
