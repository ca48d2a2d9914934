"""Readers and forms for the diffusers, torch.hub, ultralytics and Keras surfaces (never imports what they name)."""

from __future__ import annotations

import json

from app.core.closure import ClosureItem, Gate
from app.core.loaders.loader_map import items_for_file, loader_map


def _items(path: str, text: str, present: tuple[str, ...] = (), surface: str | None = None,
           own: str | None = "me/repo") -> list[ClosureItem]:
    chosen = [s for s in loader_map().surfaces if surface is None or s.id == surface]
    return items_for_file(path, text, frozenset((path, *present)), own, chosen)


def _targets(items: list[ClosureItem]) -> list[str]:
    return [item.target for item in items]


def test_a_component_module_counts_only_in_its_own_folder() -> None:
    index = json.dumps({"_class_name": "X", "unet": ["my_unet", "MyUNet"], "vae": ["diffusers", "AutoencoderKL"],
                        "text_encoder": ["evil_mod", "Enc"], "tokenizer": [None, None]})
    items = _items("model_index.json", index, ("unet/my_unet.py", "evil_mod.py"), "diffusers.component-code")
    assert _targets(items) == ["unet/my_unet.py"]  # a root evil_mod.py is not what diffusers imports
    assert items[0].runs == ("MyUNet.*",) and items[0].local and items[0].gate is Gate.TRUST_REMOTE_CODE


def test_a_component_in_a_nested_pipeline_resolves_beside_its_index() -> None:
    index = json.dumps({"transformer": ["dit", "DiT"]})
    assert _targets(_items("sub/model_index.json", index, ("sub/transformer/dit.py",),
                           "diffusers.component-code")) == ["sub/transformer/dit.py"]


def test_class_name_list_is_a_local_module_another_repo_or_a_community_pipeline() -> None:
    def run(value: object, present: tuple[str, ...] = ()) -> list[ClosureItem]:
        return _items("model_index.json", json.dumps({"_class_name": value}), present, "diffusers.pipeline-class")

    local = run(["pipe_mod", "MyPipe"], ("pipe_mod.py",))
    assert _targets(local) == ["pipe_mod.py"] and local[0].runs == ("MyPipe.*",)
    other = run(["org/pipes", "P"])
    assert other[0].repo == "org/pipes" and other[0].carries_trust and not other[0].local
    community = run(["lpw_stable_diffusion", "P"])
    assert community[0].target.endswith(":lpw_stable_diffusion.py") and community[0].gate is Gate.ALWAYS
    assert community[0].repo is None and not community[0].local
    assert run("StableDiffusionPipeline") == []  # a diffusers class
    assert run(["me/repo", "P"]) == []  # this repo itself: its pipeline.py surface covers it


def test_custom_pipeline_keyword_in_a_card() -> None:
    card = ('pipe = DiffusionPipeline.from_pretrained("stabilityai/sdxl",\n'
            '    custom_pipeline="org/fast-pipe", trust_remote_code=True)\n'
            'other = DiffusionPipeline.from_pretrained("a/b", custom_pipeline="clip_guided_stable_diffusion")\n'
            'plain = DiffusionPipeline.from_pretrained("a/b")\n')
    items = _items("README.md", card, surface="diffusers.custom-pipeline-call")
    assert [i.repo for i in items] == ["org/fast-pipe", None]
    assert items[1].target.endswith(":clip_guided_stable_diffusion.py")


def test_front_matter_prior_is_read_only_from_the_metadata_block() -> None:
    card = "---\nprior:\n- org/prior\nlicense: mit\n---\n# Title\n\nprior:\n- other/not-metadata\n"
    items = _items("README.md", card, surface="diffusers.connected-pipes")
    assert [(i.repo, i.carries_trust) for i in items] == [("org/prior", True)]
    assert _items("README.md", "# no front matter\nprior: [x/y]\n", surface="diffusers.connected-pipes") == []


def test_activation_expression_calls_are_targets_unless_the_documented_shape() -> None:
    def run(act: str) -> list[str]:
        return _targets(_items("m.yaml", f"activation: {json.dumps(act)}\n", surface="ultralytics.yaml-activation"))

    assert run("nn.SiLU()") == [] and run("torch.nn.LeakyReLU(0.1)") == [] and run("gelu") == []
    assert sorted(run("__import__('os').system('echo hfvet-test')")) == ["builtins.__import__", "os.system"]
    assert run("exec('x')") == ["builtins.exec"]
    assert run("nn.SiLU(inplace=open('f'))") == ["nn.SiLU", "builtins.open"]
    assert run("nn.SiLU()" + " " * 900) == ["<expression too long to read>"]


def test_yolo_layers_outside_the_layer_classes_are_tasks_globals() -> None:
    text = ("backbone:\n  - [-1, 1, Conv, [64, 3, 2]]\n  - [-1, 1, nn.Upsample, [None, 2, 'nearest']]\n"
            "head:\n  - [-1, 1, check_requirements, ['pkg']]\n  - [-1, 1, 'not a name', []]\n")
    assert _targets(_items("yolo.yaml", text, surface="ultralytics.yaml-layers")) == [
        "ultralytics.nn.tasks.check_requirements"]


def test_keras_objects_outside_the_keras_packages_are_dotted_targets() -> None:
    config = {"module": "keras", "class_name": "Sequential", "config": {"layers": [
        {"module": "keras.layers", "class_name": "Dense", "config": {}},
        {"module": "builtins", "class_name": "function", "config": "relu"},
        {"module": "mypkg.layers", "class_name": "function", "config": "swish"},
        {"module": "os", "class_name": "system", "config": {}}]}}
    items = _items("config.json", json.dumps(config), surface="keras.config-objects")
    assert _targets(items) == ["mypkg.layers.swish", "os.system"]
