"""Keras configs whose layers load or fetch something at load time (issue 12 item 5).

``keras.saving.load_model`` rebuilds every layer from ``config.json`` with
``deserialize_keras_object`` (saving/serialization_lib.py), so a layer's constructor runs at load:
- ``TFSMLayer(filepath=...)`` (export/tfsm_layer.py) loads a whole TF SavedModel from the path,
  graph ops included, which the vet of this repo never saw;
- ``StringLookup`` / ``IntegerLookup`` / ``TextVectorization`` with ``vocabulary`` a string read
  it as a file (``tf.io.gfile``: local, ``gs://``, ``hdfs://``) in ``set_vocabulary``;
- a config value that is a path or URL is read or fetched by whichever layer owns it.
Configs are JSON written at test time; nothing is loaded.
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

from tests.corpus.registry import Case, register_all

FAMILY = "keras-load-time"


def _layer(cls: str, config: dict[str, Any]) -> dict[str, Any]:
    return {"module": "keras.layers", "class_name": cls, "registered_name": None,
            "config": {"name": cls.lower(), **config}}


def _model(layers: list[dict[str, Any]]) -> dict[str, Any]:
    return {"module": "keras", "class_name": "Sequential", "registered_name": None,
            "config": {"name": "m", "layers": layers}}


def keras_file(layers: list[dict[str, Any]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("metadata.json", '{"keras_version": "3.6.0"}')
        zf.writestr("config.json", json.dumps(_model(layers)))
        zf.writestr("model.weights.h5", b"\x89HDF\r\n\x1a\n" + bytes(32))
    return out.getvalue()


DENSE = _layer("Dense", {"units": 2, "activation": "relu", "dtype": "float32"})
HOSTILE: dict[str, tuple[list[dict[str, Any]], str, str]] = {
    "tfsm-layer": ([_layer("TFSMLayer", {"filepath": "/tmp/other_saved_model", "call_endpoint": "serve"})],
                   "keras-loading-layer", "TFSMLayer loads a SavedModel the vet never saw"),
    "string-lookup-url-vocabulary": ([_layer("StringLookup", {"vocabulary": "gs://someone/vocab.txt"})],
                                     "keras-loading-layer", "the vocabulary is fetched from a bucket at load"),
    "text-vectorization-file": ([_layer("TextVectorization", {"vocabulary": "../../etc/hosts"})],
                                "keras-loading-layer", "the vocabulary is a file outside the model"),
    "nested-path-value": ([_model([DENSE, _layer("Dense", {"units": 2, "kernel_initializer":
                                                  {"class_name": "Constant", "config": {"value": "https://x.example/w"}}})])],
                          "keras-config-path", "a config value deep in a nested model is a URL"),
}


register_all(
    [Case(FAMILY, name, "hostile", lambda layers=layers: {"model.keras": keras_file(layers)}, why=why, rule=rule)
     for name, (layers, rule, why) in HOSTILE.items()]
    + [Case(FAMILY, "benign-lookup-inline-vocabulary", "benign",
            lambda: {"model.keras": keras_file([_layer("StringLookup", {"vocabulary": ["a", "b"]}), DENSE])},
            why="an inline vocabulary list is data", vendor="approve")]
)
