"""sentence-transformers surfaces of the loader map (map/sentence_transformers.yaml). Inert text only.

sentence-transformers 6.2.0 ``util.misc.import_module_class``: a modules.json (or Router
router_config.json) ``type`` outside ``sentence_transformers.*`` needs trust_remote_code and goes
through transformers' ``get_class_from_dynamic_module`` (``module.Class`` from the repo root,
``org/name--module.Class`` from that repo), else ``import_from_string``; ``BaseModel._load_sbert_model``
then calls ``Class.load(...)``. ``Transformer.__init__`` loads ``tokenizer_name_or_path`` from
sentence_bert_config.json with AutoProcessor and the user's trust_remote_code.
"""

from __future__ import annotations

import json

from tests.corpus.registry import Case, register_all

FAMILY = "loader-sentence_transformers"
PAYLOAD = "echo hfvet-test"
POOLING = {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}


def _json(value: object) -> bytes:
    return json.dumps(value, indent=2).encode()


def module_type_load_spawns() -> dict[str, bytes]:
    module = ("import subprocess\n\nfrom torch import nn\n\n\nclass Encoder(nn.Module):\n"
              "    @classmethod\n    def load(cls, model_name_or_path, **kwargs):\n"
              "        subprocess.run(['sh', '-c', " + repr(PAYLOAD) + "])\n        return cls()\n")
    modules = [{"idx": 0, "name": "0", "path": "", "type": "custom_encoder.Encoder"}, POOLING]
    return {"modules.json": _json(modules), "custom_encoder.py": module.encode()}


def module_type_other_repo() -> dict[str, bytes]:
    modules = [{"idx": 0, "name": "0", "path": "", "type": "st-helpers/late-chunking--chunker.LateChunker"}, POOLING]
    return {"modules.json": _json(modules)}


def vendor_custom_st_module() -> dict[str, bytes]:
    # The jina-embeddings-v3 shape: a custom Transformer module at the root, library pooling after it.
    module = ("from typing import Any\n\nimport torch\nfrom torch import nn\nfrom transformers import AutoModel\n\n\n"
              "class Transformer(nn.Module):\n    def __init__(self, model_name_or_path: str, **kwargs: Any) -> None:\n"
              "        super().__init__()\n        self.auto_model = AutoModel.from_pretrained(model_name_or_path)\n\n"
              "    def forward(self, features: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:\n"
              "        ids, mask = features['input_ids'], features['attention_mask']\n"
              "        out = self.auto_model(input_ids=ids, attention_mask=mask)\n"
              "        features['token_embeddings'] = out[0]\n        return features\n")
    modules = [{"idx": 0, "name": "0", "path": "", "type": "custom_st.Transformer"}, POOLING,
               {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]
    return {"modules.json": _json(modules), "custom_st.py": module.encode(),
            "1_Pooling/config.json": _json({"word_embedding_dimension": 1024, "pooling_mode_mean_tokens": True})}


def router_type_other_repo() -> dict[str, bytes]:
    router = {"types": {"query_0_Transformer": "sentence_transformers.models.Transformer",
                        "document_0_Sparse": "sparse-tools/splade-head--splade.SpladeHead"},
              "structure": {"query": ["query_0_Transformer"], "document": ["document_0_Sparse"]},
              "parameters": {"default_route": "document", "allow_empty_key": True}}
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Router"}]
    return {"modules.json": _json(modules), "router_config.json": _json(router)}


def vendor_router_query_document() -> dict[str, bytes]:
    router = {"types": {"query_0_StaticEmbedding": "sentence_transformers.models.StaticEmbedding",
                        "document_0_Transformer": "sentence_transformers.models.Transformer",
                        "document_1_Pooling": "sentence_transformers.models.Pooling"},
              "structure": {"query": ["query_0_StaticEmbedding"],
                            "document": ["document_0_Transformer", "document_1_Pooling"]},
              "parameters": {"default_route": "document", "allow_empty_key": True}}
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Router"}]
    return {"modules.json": _json(modules), "router_config.json": _json(router)}


def tokenizer_other_repo() -> dict[str, bytes]:
    config = {"max_seq_length": 512, "do_lower_case": False, "tokenizer_name_or_path": "tok-helpers/multilingual-bpe"}
    return {"modules.json": _json([{"idx": 0, "name": "0", "path": "",
                                    "type": "sentence_transformers.models.Transformer"}, POOLING]),
            "sentence_bert_config.json": _json(config)}


def vendor_tokenizer_same_org() -> dict[str, bytes]:
    config = {"max_seq_length": 8192, "do_lower_case": False, "tokenizer_name_or_path": "nvidia/NV-Embed-v2"}
    return {"modules.json": _json([{"idx": 0, "name": "0", "path": "",
                                    "type": "sentence_transformers.models.Transformer"}, POOLING]),
            "sentence_bert_config.json": _json(config)}


register_all([
    Case(FAMILY, "module-type-load-spawns", "hostile", module_type_load_spawns, rule="remote-code-dangerous",
         why="_load_sbert_model calls custom_encoder.Encoder.load(...) while building the model: it spawns a shell"),
    Case(FAMILY, "module-type-other-repo", "hostile", module_type_other_repo,
         rule="third-party-unvetted-code-reference",
         why="import_module_class hands org/name--module.Class to get_class_from_dynamic_module: chunker.py from "
             "st-helpers/late-chunking runs"),
    Case(FAMILY, "router-type-other-repo", "hostile", router_type_other_repo,
         rule="third-party-unvetted-code-reference",
         why="Router.load resolves each route's type with import_module_class: splade.py from "
             "sparse-tools/splade-head"),
    Case(FAMILY, "tokenizer-other-repo", "hostile", tokenizer_other_repo, rule="third-party-unvetted-code-reference",
         why="Transformer.__init__ loads tok-helpers/multilingual-bpe with AutoProcessor and the user's "
             "trust_remote_code"),
    Case(FAMILY, "vendor-custom-st-module", "benign", vendor_custom_st_module, vendor="review",
         reason="remote-code-auto-map",
         why="the jina-embeddings-v3 shape: custom_st.Transformer wrapping AutoModel, then library Pooling/Normalize"),
    Case(FAMILY, "vendor-router-query-document", "benign", vendor_router_query_document, vendor="approve",
         why="an asymmetric query/document Router of library modules only: nothing imported from the repo"),
    Case(FAMILY, "vendor-tokenizer-same-org", "benign", vendor_tokenizer_same_org, vendor="approve",
         why="a vendor embedding model naming its own org's tokenizer repo: judged by that repo's own vet"),
])
