"""The readers and forms the transformers, PEFT, sentence-transformers and timm surfaces use."""

from __future__ import annotations

import json

from app.core.closure import ClosureItem, Kind
from app.core.loaders.loader_map import items_for_file, loader_map


def _items(path: str, value: object, present: tuple[str, ...] = (), own: str | None = None,
           surface: str | None = None) -> list[ClosureItem]:
    chosen = [s for s in loader_map().surfaces if surface is None or s.id == surface]
    return items_for_file(path, json.dumps(value), frozenset((path, *present)), own, chosen)


def test_a_sub_config_name_or_path_is_where_from_config_takes_its_auto_map_module() -> None:
    config = {"model_type": "vlm", "_name_or_path": "./local-save",
              "text_config": {"_name_or_path": "org/tower", "auto_map": {"AutoModel": "modeling_t.T",
                                                                        "AutoConfig": "configuration_t.C"}},
              "vision_config": {"_name_or_path": "org/vis", "auto_map": {"AutoModel": "other/x--m.V"}}}
    items = _items("config.json", config, surface="transformers.name-or-path-code")
    assert [(i.repo, i.target, i.carries_trust) for i in items] == [("org/tower", "org/tower--modeling_t.T", True)]


def test_name_or_path_naming_the_repo_itself_or_a_bare_name_is_no_other_repo() -> None:
    for home in ("me/model", "Phi-3-mini-4k-instruct"):
        config = {"_name_or_path": home, "auto_map": {"AutoModelForCausalLM": "modeling_x.X"}}
        assert _items("config.json", config, own="me/model", surface="transformers.name-or-path-code") == []


def test_an_image_processor_backend_map_and_a_legacy_tokenizer_list_are_read() -> None:
    pre = {"auto_map": {"AutoImageProcessor": {"torchvision": "a/b--ip.Fast", "pil": "ip_local.Slow"}}}
    items = _items("preprocessor_config.json", pre, present=("ip_local.py",), surface="transformers.auto-map")
    assert sorted(i.target for i in items) == ["a/b--ip.Fast", "ip_local.py"]
    tok = {"auto_map": [None, "c/d--tok.Fast"]}
    assert [i.repo for i in _items("tokenizer_config.json", tok, surface="transformers.auto-map")] == ["c/d"]


def test_auto_map_code_runs_a_module_level_getattr() -> None:
    items = _items("config.json", {"auto_map": {"AutoModel": "modeling_x.X"}}, present=("modeling_x.py",),
                   surface="transformers.auto-map")
    assert items[0].target == "modeling_x.py" and "__getattr__" in items[0].runs


def test_sentence_transformers_module_types_by_how_import_module_class_resolves_them() -> None:
    modules = [{"type": "sentence_transformers.models.Pooling"}, {"type": "custom_st.Transformer"},
               {"type": "org/x--pool.Pool"}, {"type": "mypkg.layers.Dense"}]
    items = _items("modules.json", modules, present=("custom_st.py",), surface="sentence_transformers.module-type")
    assert [(i.target, i.repo, i.local) for i in items] == [
        ("custom_st.py", None, True), ("org/x--pool.Pool", "org/x", False),
        ("mypkg.layers.Dense", None, False)]
    assert "*.load" in items[0].runs


def test_a_peft_base_model_carries_the_users_trust() -> None:
    items = _items("adapter_config.json", {"base_model_name_or_path": "org/base", "revision": "v1"},
                   surface="peft.base-model")
    assert [(i.repo, i.carries_trust, i.kind) for i in items] == [("org/base", True, Kind.REPO)]


def test_timm_names_its_weights_file_and_no_other_repo() -> None:
    # The limit of the surface: hf_hub_id / url / file are overwritten for an hf-hub load, so they name nothing.
    config = {"architecture": "resnet50", "pretrained_cfg": {
        "hf_hub_id": "someone/else", "url": "http://127.0.0.1:9/x", "file": "/tmp/x.pth",
        "hf_hub_filename": "weights/model.pth"}}
    items = _items("config.json", config, surface="timm.hub-weights-file")
    assert [(i.target, i.kind, i.local, i.repo) for i in items] == [("weights/model.pth", Kind.DATA, True, None)]
