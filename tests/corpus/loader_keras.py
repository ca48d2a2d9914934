"""Keras surfaces of the loader map (app/core/loaders/map/keras.yaml). Inert text only.

Read from keras 3.15.1 (``keras/src/saving/serialization_lib.py``: ``deserialize_keras_object``,
``_retrieve_class_or_fn``) and keras-hub 0.32.0 (``keras_hub/src/utils/preset_utils.py``:
``KerasPresetLoader._load_serialized_object``). Each object names ``module`` and ``class_name``; 3.15.1 imports
the module only inside the Keras packages, releases before the CVE-2025-1550 fix import whatever it names.
"""

from __future__ import annotations

import json

from tests.corpus.registry import Case, register_all

FAMILY = "loader-keras"
PAYLOAD = "echo hfvet-test"


def _json(value: object) -> bytes:
    return json.dumps(value, indent=2).encode()


def _layer(module: str, name: str, config: object) -> dict[str, object]:
    return {"module": module, "class_name": name, "config": config, "registered_name": None}


def config_module_os() -> dict[str, bytes]:
    model = _layer("keras", "Sequential", {"name": "seq", "layers": [
        _layer("keras.layers", "InputLayer", {"batch_shape": [None, 4]}),
        _layer("os", "system", PAYLOAD),
        _layer("keras.layers", "Dense", {"units": 2})]})
    return {"config.json": _json(model), "metadata.json": _json({"keras_version": "3.15.1"})}


def preprocessor_subprocess() -> dict[str, bytes]:
    pre = _layer("subprocess", "Popen", {"args": PAYLOAD, "shell": True})
    return {"preprocessor.json": _json(pre), "metadata.json": _json({"keras_version": "3.15.1"})}


def vendor_hub_preset() -> dict[str, bytes]:
    # keras-hub's Gemma preset layout (config.json, task.json, preprocessor.json, tokenizer.json, metadata.json).
    gemma = "keras_hub.src.models.gemma"
    tokenizer = _layer(f"{gemma}.gemma_tokenizer", "GemmaTokenizer", {"name": "gemma_tokenizer", "dtype": "int32"})
    return {"config.json": _json(_layer(f"{gemma}.gemma_backbone", "GemmaBackbone", {
                "vocabulary_size": 256, "num_layers": 2, "hidden_dim": 8, "dtype": _layer(
                    "keras", "DTypePolicy", {"name": "float32"})})),
            "task.json": _json(_layer(f"{gemma}.gemma_causal_lm", "GemmaCausalLM", {"name": "gemma_causal_lm"})),
            "preprocessor.json": _json(_layer(f"{gemma}.gemma_causal_lm_preprocessor", "GemmaCausalLMPreprocessor",
                                              {"tokenizer": tokenizer, "sequence_length": 64})),
            "tokenizer.json": _json(tokenizer),
            "metadata.json": _json({"keras_version": "3.15.1", "keras_hub_version": "0.32.0"})}


register_all([
    Case(FAMILY, "config-module-os", "hostile", config_module_os, rule="import-target-dangerous",
         why="load_model('hf://...') rebuilds config.json; a Keras before the CVE-2025-1550 fix imports os.system"),
    Case(FAMILY, "preprocessor-subprocess", "hostile", preprocessor_subprocess, rule="import-target-dangerous",
         why="from_preset rebuilds preprocessor.json with deserialize_keras_object: module subprocess, class Popen"),
    Case(FAMILY, "vendor-hub-preset", "benign", vendor_hub_preset, vendor="approve",
         why="a keras-hub preset naming only keras_hub and keras classes"),
])
