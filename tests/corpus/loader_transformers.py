"""transformers surfaces of the loader map (app/core/loaders/map/transformers.yaml). Inert text only.

Read from the transformers 5.23.0 wheel:
- ``dynamic_module_utils.get_class_from_dynamic_module`` splits ``org/name--module.Class`` and
  downloads ``module.py`` from *that* repo, then ``get_class_in_module`` executes it (module body) and
  ``getattr``s the class; ``from_pretrained`` then builds it.
- ``pipelines.pipeline`` resolves ``custom_pipelines.<task>.impl`` the same way.
- ``generation.utils.GenerationMixin.load_custom_generate``: with trust_remote_code, the model's load
  imports ``custom_generate/generate.py`` (module body runs) and binds its ``generate``.
- A card snippet ``AutoModel.from_pretrained("org/x", trust_remote_code=True)`` runs org/x's code with
  the user's trust, whatever this repo's own vet says.
"""

from __future__ import annotations

import json

from tests.corpus.registry import Case, register_all

FAMILY = "loader-transformers"
PAYLOAD = "echo hfvet-test"


def _json(value: object) -> bytes:
    return json.dumps(value, indent=2).encode()


def auto_map_other_repo() -> dict[str, bytes]:
    return {"config.json": _json({"model_type": "tiny", "architectures": ["TinyForCausalLM"],
                                  "auto_map": {"AutoConfig": "someone/tiny-code--configuration_tiny.TinyConfig",
                                               "AutoModelForCausalLM": "someone/tiny-code--modeling_tiny.TinyLM"}})}


def auto_map_vendor_local() -> dict[str, bytes]:
    modeling = ("import torch\nfrom torch import nn\nfrom transformers import PreTrainedModel\n"
                "from .configuration_tiny import TinyConfig\n\n\nclass TinyLM(PreTrainedModel):\n"
                "    config_class = TinyConfig\n\n    def __init__(self, config):\n        super().__init__(config)\n"
                "        self.proj = nn.Linear(config.hidden_size, config.hidden_size)\n        self.post_init()\n\n"
                "    def forward(self, x):\n        return torch.relu(self.proj(x))\n")
    configuration = ("from transformers import PretrainedConfig\n\n\nclass TinyConfig(PretrainedConfig):\n"
                     "    model_type = 'tiny'\n\n    def __init__(self, hidden_size=8, **kwargs):\n"
                     "        self.hidden_size = hidden_size\n        super().__init__(**kwargs)\n")
    return {"config.json": _json({"model_type": "tiny", "hidden_size": 8,
                                  "auto_map": {"AutoConfig": "configuration_tiny.TinyConfig",
                                               "AutoModelForCausalLM": "modeling_tiny.TinyLM"}}),
            "modeling_tiny.py": modeling.encode(), "configuration_tiny.py": configuration.encode()}


def custom_pipeline_other_repo() -> dict[str, bytes]:
    return {"config.json": _json({"model_type": "bert", "custom_pipelines": {
        "pair-classification": {"impl": "someone/pipes--pair_pipe.PairPipeline", "pt": ["AutoModel"]}}})}


def custom_generate_spawns() -> dict[str, bytes]:
    generate = ("import os\n\nos.system(" + repr(PAYLOAD) + ")\n\n\n"
                "def generate(model, input_ids, **kwargs):\n    return model.greedy(input_ids)\n")
    return {"config.json": _json({"model_type": "llama"}), "custom_generate/generate.py": generate.encode()}


def custom_pipeline_vendor_local() -> dict[str, bytes]:
    pipe = ("from transformers import Pipeline\n\n\nclass PairPipeline(Pipeline):\n"
            "    def _sanitize_parameters(self, **kwargs):\n        return {}, {}, {}\n\n"
            "    def preprocess(self, text, second_text=None):\n"
            "        return self.tokenizer(text, text_pair=second_text, return_tensors=self.framework)\n\n"
            "    def _forward(self, model_inputs):\n        return self.model(**model_inputs)\n\n"
            "    def postprocess(self, model_outputs):\n        return model_outputs.logits.softmax(-1)[0].tolist()\n")
    return {"config.json": _json({"model_type": "bert", "custom_pipelines": {
        "pair-classification": {"impl": "pair_pipe.PairPipeline", "pt": ["AutoModelForSequenceClassification"]}}}),
        "pair_pipe.py": pipe.encode()}


def custom_generate_vendor_sampler() -> dict[str, bytes]:
    generate = ("import torch\n\n\ndef generate(model, input_ids, max_new_tokens=16, **kwargs):\n"
                "    for _ in range(max_new_tokens):\n        logits = model(input_ids).logits[:, -1]\n"
                "        input_ids = torch.cat([input_ids, logits.argmax(-1, keepdim=True)], dim=-1)\n"
                "    return input_ids\n")
    return {"config.json": _json({"model_type": "llama"}), "custom_generate/generate.py": generate.encode()}


def card_trusts_other_repo() -> dict[str, bytes]:
    card = ("# Tiny quant\n\n```python\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n"
            "tok = AutoTokenizer.from_pretrained(\"quant-helpers/tok-patch\", trust_remote_code=True)\n"
            "model = AutoModelForCausalLM.from_pretrained(\"this/model\")\n```\n")
    return {"README.md": card.encode(), "config.json": _json({"model_type": "llama"})}


def card_vendor_own_repo() -> dict[str, bytes]:
    card = ("# Nemotron Nano\n\n```python\nfrom transformers import AutoModelForCausalLM\n"
            "model = AutoModelForCausalLM.from_pretrained(\"nvidia/Llama-3.1-Nemotron-Nano-8B-v1\", "
            "trust_remote_code=True)\n```\n")
    return {"README.md": card.encode(), "config.json": _json({"model_type": "llama"})}


register_all([
    Case(FAMILY, "auto-map-other-repo", "hostile", auto_map_other_repo, rule="third-party-unvetted-code-reference",
         why="get_class_from_dynamic_module fetches modeling_tiny.py from someone/tiny-code, vetted nowhere"),
    Case(FAMILY, "custom-pipeline-other-repo", "hostile", custom_pipeline_other_repo,
         rule="third-party-unvetted-code-reference",
         why="pipeline() imports PairPipeline from someone/pipes with the user's trust_remote_code"),
    Case(FAMILY, "custom-generate-spawns", "hostile", custom_generate_spawns, rule="remote-code-dangerous",
         why="load_custom_generate imports custom_generate/generate.py while the model loads: os.system runs"),
    Case(FAMILY, "card-trusts-other-repo", "hostile", card_trusts_other_repo,
         rule="third-party-unvetted-code-reference",
         why="the card's snippet loads quant-helpers/tok-patch with trust_remote_code: its code runs unvetted"),
    Case(FAMILY, "auto-map-vendor-local", "benign", auto_map_vendor_local, vendor="review",
         reason="remote-code-auto-map",
         why="a vendor's own modeling code behind auto_map: plain torch, reviewed like all auto_map code"),
    Case(FAMILY, "custom-pipeline-vendor-local", "benign", custom_pipeline_vendor_local, vendor="review",
         reason="remote-code-auto-map",
         why="the documented custom pipeline shape (transformers docs, add_new_pipeline): plain tokenizer/model calls"),
    Case(FAMILY, "custom-generate-vendor-sampler", "benign", custom_generate_vendor_sampler, vendor="review",
         reason="remote-code-auto-map",
         why="a greedy custom_generate loop in plain torch: code the load runs, so a human looks"),
    Case(FAMILY, "card-vendor-own-repo", "benign", card_vendor_own_repo, vendor="approve",
         why="a vendor card loading the vendor's own repo with trust_remote_code: same org, judged by its own vet"),
])
