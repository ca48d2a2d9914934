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
- ``image_processing_auto._resolve_auto_map_class_ref``: an AutoImageProcessor entry may be a
  ``{backend: ref}`` dict; ``AutoTokenizer.from_pretrained`` takes a bare legacy ``[slow, fast]`` list
  as tokenizer_config.json's whole ``auto_map`` (the fast one first).
- ``get_class_in_module`` returns ``getattr(module, class_name)``: a module-level ``__getattr__``
  supplies a class the module never defines, and runs while the model loads.
- ``_BaseAutoModelClass.from_config`` takes the module of an ``auto_map`` entry without ``--`` from
  ``config.name_or_path``, which a config's own ``_name_or_path`` key overrides
  (``PreTrainedConfig.__post_init__`` sets leftover keys last) -- in a sub-config too.
- ``pipeline(tokenizer=..., processor=..., config=...)`` loads each with the call's trust_remote_code;
  ``generate(custom_generate="org/x", trust_remote_code=True)`` runs org/x's custom_generate/generate.py.
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


def image_processor_backend_map_other_repo() -> dict[str, bytes]:
    return {"config.json": _json({"model_type": "siglip"}),
            "preprocessor_config.json": _json({"image_processor_type": "FastViTImageProcessor", "auto_map": {
                "AutoImageProcessor": {"torchvision": "pixel-tools/fast-vit--image_proc.FastViTImageProcessor",
                                       "pil": "pixel-tools/fast-vit--image_proc.FastViTImageProcessor"}}})}


def tokenizer_legacy_list_other_repo() -> dict[str, bytes]:
    return {"config.json": _json({"model_type": "llama"}),
            "tokenizer_config.json": _json({"tokenizer_class": "FastBPETokenizer",
                                            "auto_map": [None, "tok-helpers/bpe--tokenization_bpe.FastBPETokenizer"]})}


def module_getattr_supplies_class() -> dict[str, bytes]:
    modeling = ("import os\n\nfrom transformers import LlamaForCausalLM\n\n\n"
                "def __getattr__(name):\n    os.system(" + repr(PAYLOAD) + ")\n    return LlamaForCausalLM\n")
    return {"config.json": _json({"model_type": "llama", "auto_map": {
        "AutoModelForCausalLM": "modeling_fast.FastLlamaForCausalLM"}}), "modeling_fast.py": modeling.encode()}


def vendor_multimodal_processor() -> dict[str, bytes]:
    # The Phi-3.5-vision shape: processor and image processor behind auto_map, in the repo.
    processing = ("from transformers.processing_utils import ProcessorMixin\n\n\n"
                  "class Phi3VProcessor(ProcessorMixin):\n"
                  "    attributes = ['image_processor', 'tokenizer']\n"
                  "    image_processor_class = 'Phi3VImageProcessor'\n"
                  "    tokenizer_class = ('LlamaTokenizer', 'LlamaTokenizerFast')\n\n"
                  "    def __call__(self, text=None, images=None, **kwargs):\n"
                  "        pixels = self.image_processor(images) if images is not None else {}\n"
                  "        return {**self.tokenizer(text, **kwargs), **pixels}\n")
    image = ("import numpy as np\nfrom transformers.image_processing_utils import BaseImageProcessor\n\n\n"
             "class Phi3VImageProcessor(BaseImageProcessor):\n    model_input_names = ['pixel_values']\n\n"
             "    def __init__(self, num_crops=4, **kwargs):\n        super().__init__(**kwargs)\n"
             "        self.num_crops = num_crops\n\n    def preprocess(self, images, **kwargs):\n"
             "        return {'pixel_values': np.stack([np.asarray(i, dtype=np.float32) / 255 for i in images])}\n")
    auto = {"AutoProcessor": "processing_phi3_v.Phi3VProcessor",
            "AutoImageProcessor": "image_processing_phi3_v.Phi3VImageProcessor"}
    return {"config.json": _json({"model_type": "phi3_v"}),
            "preprocessor_config.json": _json({"auto_map": auto, "num_crops": 4,
                                               "image_processor_type": "Phi3VImageProcessor",
                                               "processor_class": "Phi3VProcessor"}),
            "processing_phi3_v.py": processing.encode(), "image_processing_phi3_v.py": image.encode()}


def name_or_path_redirects_code() -> dict[str, bytes]:
    # No modeling_fastllama.py here: from_config fetches it from speedy-llm/fastllama-kernels.
    return {"config.json": _json({"model_type": "llama", "_name_or_path": "speedy-llm/fastllama-kernels",
                                  "auto_map": {"AutoModelForCausalLM": "modeling_fastllama.FastLlamaForCausalLM"}})}


def sub_config_name_or_path_code() -> dict[str, bytes]:
    configuration = ("from transformers import PretrainedConfig\n\n\nclass VLMConfig(PretrainedConfig):\n"
                     "    model_type = 'vlm-chat'\n")
    modeling = ("from transformers import AutoModelForCausalLM, PreTrainedModel\n\n\n"
                "class VLMChatModel(PreTrainedModel):\n    def __init__(self, config):\n"
                "        super().__init__(config)\n        self.language_model = AutoModelForCausalLM.from_config(\n"
                "            config.llm_config, trust_remote_code=True)\n")
    return {"config.json": _json({"model_type": "vlm-chat", "auto_map": {
        "AutoConfig": "configuration_vlm.VLMConfig", "AutoModel": "modeling_vlm.VLMChatModel"},
        "llm_config": {"model_type": "fastlm", "_name_or_path": "speedy-llm/fastlm-1b",
                       "auto_map": {"AutoModelForCausalLM": "modeling_fastlm.FastLMForCausalLM"}}}),
        "configuration_vlm.py": configuration.encode(), "modeling_vlm.py": modeling.encode()}


def name_or_path_vendor_base() -> dict[str, bytes]:
    # A fine-tune that keeps the chatglm3 config as saved: `_name_or_path` is the vendor's base.
    configuration = ("from transformers import PretrainedConfig\n\n\nclass ChatGLMConfig(PretrainedConfig):\n"
                     "    model_type = 'chatglm'\n")
    modeling = ("from torch import nn\nfrom transformers import PreTrainedModel\n\n\n"
                "class ChatGLMForConditionalGeneration(PreTrainedModel):\n"
                "    def __init__(self, config):\n        super().__init__(config)\n"
                "        self.lm_head = nn.Linear(8, 8)\n")
    return {"config.json": _json({"_name_or_path": "THUDM/chatglm3-6b", "model_type": "chatglm",
                                  "auto_map": {"AutoConfig": "configuration_chatglm.ChatGLMConfig",
                                               "AutoModel": "modeling_chatglm.ChatGLMForConditionalGeneration"}}),
            "configuration_chatglm.py": configuration.encode(), "modeling_chatglm.py": modeling.encode()}


def pipeline_tokenizer_other_repo() -> dict[str, bytes]:
    card = ("# Tiny chat\n\n```python\nfrom transformers import pipeline\n"
            "pipe = pipeline(\"text-generation\", model=\"some-user/tiny-chat\",\n"
            "                tokenizer=\"tok-helpers/fast-bpe\", trust_remote_code=True)\n```\n")
    return {"README.md": card.encode(), "config.json": _json({"model_type": "llama"})}


def pipeline_vendor_components() -> dict[str, bytes]:
    card = ("# Parakeet\n\n```python\nfrom transformers import pipeline\n"
            "asr = pipeline(\"automatic-speech-recognition\", model=\"nvidia/parakeet-ctc-1.1b\",\n"
            "               feature_extractor=\"nvidia/parakeet-ctc-1.1b\", tokenizer=\"nvidia/parakeet-ctc-1.1b\")\n"
            "```\n")
    return {"README.md": card.encode(), "config.json": _json({"model_type": "parakeet_ctc"})}


def card_custom_generate_other_repo() -> dict[str, bytes]:
    card = ("# Fast decoding\n\n```python\nout = model.generate(**inputs, max_new_tokens=64,\n"
            "                     custom_generate=\"decode-lab/lookahead\", trust_remote_code=True)\n```\n")
    return {"README.md": card.encode(), "config.json": _json({"model_type": "llama"})}


def card_custom_generate_vendor() -> dict[str, bytes]:
    card = ("# Nemotron decoding recipe\n\n```python\nout = model.generate(**inputs,\n"
            "    custom_generate=\"nvidia/nemotron-speculative-decoding\", trust_remote_code=True)\n```\n")
    return {"README.md": card.encode(), "config.json": _json({"model_type": "nemotron"})}


def attn_kernel_other_repo() -> dict[str, bytes]:
    return {"config.json": _json({"model_type": "llama", "attn_implementation": "quant-helper/flash-attn-fork:fwd"})}


def attn_kernel_community() -> dict[str, bytes]:
    return {"config.json": _json({"model_type": "llama", "text_config": {
        "attn_implementation": "kernels-community/flash-attn2"}})}


register_all([
    Case(FAMILY, "image-processor-backend-map-other-repo", "hostile", image_processor_backend_map_other_repo,
         rule="third-party-unvetted-code-reference",
         why="AutoImageProcessor's {backend: ref} entry (_resolve_auto_map_class_ref) fetches image_proc.py from "
             "pixel-tools/fast-vit"),
    Case(FAMILY, "tokenizer-legacy-list-other-repo", "hostile", tokenizer_legacy_list_other_repo,
         rule="third-party-unvetted-code-reference",
         why="AutoTokenizer takes a bare [slow, fast] auto_map list, fast first: tokenization_bpe.py from "
             "tok-helpers/bpe"),
    Case(FAMILY, "module-getattr-supplies-class", "hostile", module_getattr_supplies_class,
         rule="remote-code-dangerous",
         why="get_class_in_module's getattr(module, 'FastLlamaForCausalLM') calls the module's __getattr__: os.system"),
    Case(FAMILY, "name-or-path-redirects-code", "hostile", name_or_path_redirects_code,
         rule="third-party-unvetted-code-reference",
         why="config.json's _name_or_path becomes config.name_or_path; from_config fetches modeling_fastllama.py "
             "from speedy-llm/fastllama-kernels"),
    Case(FAMILY, "sub-config-name-or-path-code", "hostile", sub_config_name_or_path_code,
         rule="third-party-unvetted-code-reference",
         why="the model builds AutoModelForCausalLM.from_config(config.llm_config, trust_remote_code=True): the "
             "sub-config's _name_or_path supplies modeling_fastlm.py from speedy-llm/fastlm-1b"),
    Case(FAMILY, "pipeline-tokenizer-other-repo", "hostile", pipeline_tokenizer_other_repo,
         rule="third-party-unvetted-code-reference",
         why="pipeline() loads tokenizer=tok-helpers/fast-bpe with the call's trust_remote_code"),
    Case(FAMILY, "card-custom-generate-other-repo", "hostile", card_custom_generate_other_repo,
         rule="third-party-unvetted-code-reference",
         why="generate(custom_generate=...) imports decode-lab/lookahead's custom_generate/generate.py and runs it"),
    Case(FAMILY, "vendor-multimodal-processor", "benign", vendor_multimodal_processor, vendor="review",
         reason="remote-code-auto-map",
         why="the Phi-3.5-vision shape: AutoProcessor and AutoImageProcessor behind auto_map, numpy preprocessing"),
    Case(FAMILY, "name-or-path-vendor-base", "benign", name_or_path_vendor_base, vendor="review",
         reason="remote-code-auto-map",
         why="a chatglm3 config as saved: _name_or_path names the vendor's base, whose code its own vet judges"),
    Case(FAMILY, "pipeline-vendor-components", "benign", pipeline_vendor_components, vendor="approve",
         why="a vendor card naming its own repo as model, feature extractor and tokenizer, no trust_remote_code"),
    Case(FAMILY, "card-custom-generate-vendor", "benign", card_custom_generate_vendor, vendor="approve",
         why="a vendor card running its own org's custom_generate recipe: same org, judged by that repo's vet"),
])


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
    Case(FAMILY, "attn-kernel-other-repo", "hostile", attn_kernel_other_repo,
         rule="third-party-unvetted-code-reference",
         why="modeling_utils._check_and_adjust_attn_implementation: is_kernel('quant-helper/flash-attn-fork:fwd') "
             "-> load_and_register_attn_kernel -> kernels.get_kernel imports that repo's native build"),
    Case(FAMILY, "attn-kernel-community", "benign", attn_kernel_community, vendor="review",
         reason="referenced-repo-elsewhere",
         why="Hugging Face's own kernels-community flash-attention build: native code from another org's repo, "
             "so it is reviewed until that repo is approved"),
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
