"""ultralytics surfaces of the loader map (app/core/loaders/map/ultralytics.yaml). Inert text only.

Read from ultralytics 8.4.190, ``ultralytics/nn/tasks.py``: ``YOLO("x.yaml")`` -> ``Model._new`` ->
``yaml_model_load`` (safe YAML) -> ``parse_model``, which ``eval()``s ``activation`` unless ULTRALYTICS_SAFE_LOAD
is set, and resolves each layer's module as ``getattr(torch.nn, ...)`` for ``nn.X``, ``torchvision.ops`` for
``torchvision.ops.X``, else ``globals()[m]`` of ``ultralytics.nn.tasks``, then calls it with the row's args.
"""

from __future__ import annotations

from tests.corpus.registry import Case, register_all

FAMILY = "loader-ultralytics"
PAYLOAD = "echo hfvet-test"

_HEAD = ("head:\n  - [-1, 1, nn.Upsample, [None, 2, \"nearest\"]]\n  - [[-1, 4], 1, Concat, [1]]\n"
         "  - [-1, 1, C2f, [256]]\n  - [[2, 5], 1, Detect, [nc]]\n")
_BACKBONE = ("backbone:\n  - [-1, 1, Conv, [64, 3, 2]]\n  - [-1, 1, Conv, [128, 3, 2]]\n  - [-1, 3, C2f, [128, True]]\n"
             "  - [-1, 1, Conv, [256, 3, 2]]\n  - [-1, 1, SPPF, [256, 5]]\n")


def activation_eval_spawns() -> dict[str, bytes]:
    text = f"nc: 80\nactivation: __import__('os').system('{PAYLOAD}') or nn.SiLU()\n" + _BACKBONE + _HEAD
    return {"yolo-tiny.yaml": text.encode()}


def layer_torch_load() -> dict[str, bytes]:
    backbone = _BACKBONE + "  - [-1, 1, torch_load, [\"extras/calib.pt\"]]\n"
    return {"yolo-tiny.yaml": ("nc: 80\n" + backbone + _HEAD).encode()}


def vendor_yolo_relu() -> dict[str, bytes]:
    # ultralytics' own cfg/models/v6/yolov6.yaml sets `activation: torch.nn.ReLU()` the same way.
    text = ("# YOLO tiny, ReLU variant\nnc: 80\nactivation: torch.nn.ReLU()\nscales:\n  n: [0.33, 0.25, 1024]\n"
            + _BACKBONE + _HEAD)
    return {"yolo-tiny-relu.yaml": text.encode(), "README.md": b"# YOLO tiny\n\n`YOLO(\"yolo-tiny-relu.yaml\")`\n"}


register_all([
    Case(FAMILY, "activation-eval-spawns", "hostile", activation_eval_spawns, rule="import-target-dangerous",
         why="parse_model eval()s `activation` (no ULTRALYTICS_SAFE_LOAD): __import__('os').system runs on YOLO(yaml)"),
    Case(FAMILY, "layer-torch-load", "hostile", layer_torch_load, rule="import-target-dangerous",
         why="parse_model resolves the row's module in ultralytics.nn.tasks' globals and calls torch_load(path): "
             "a pickle the vet never saw is unpickled"),
    Case(FAMILY, "vendor-yolo-relu", "benign", vendor_yolo_relu, vendor="approve",
         why="the documented activation shape (`torch.nn.ReLU()`, yolov6.yaml) and layer classes only"),
])
