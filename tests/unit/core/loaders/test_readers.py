"""The loader map's readers: each turns one file into closure items exactly as its surface says."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from app.core.closure import Gate, Kind
from app.core.loaders import fields
from app.core.loaders.fields import values_at
from app.core.loaders.readers import read_surface
from app.core.loaders.schema import Form, Read, Source, Surface
from app.core.loaders.view import FileView

SOURCE = Source(repo="example/runtime", file="loader.py", function="load", version="1.0")


def surface(read: Read, form: Form = Form.SELF, kind: Kind = Kind.REPO, fields: tuple[str, ...] = (),
            carries_trust: bool = False, known: tuple[str, ...] = ()) -> Surface:
    return Surface(id="rt.s", runtime="rt", what="test", files=("*",), read=read, fields=fields, form=form,
                   kind=kind, gate=Gate.OPT_IN, carries_trust=carries_trust, known=known, source=SOURCE, cases=())


def items(s: Surface, path: str, text: str, present: tuple[str, ...] = (), own: str | None = "me/model") -> list:
    return list(read_surface(s, FileView(path, text, frozenset((path, *present)), own)))


def test_field_paths_take_keys_lists_and_any_depth() -> None:
    data = {"a": {"x": 1, "y": [{"t": 2}, {"t": 3}]}, "t": 0}
    assert values_at(data, "a.x") == [("a.x", 1)]
    assert values_at(data, "a.y.*.t") == [("a.y.0.t", 2), ("a.y.1.t", 3)]
    assert sorted(v for _, v in values_at(data, "**.t")) == [0, 2, 3]
    assert values_at(data, "missing.*") == []


def test_a_yaml_alias_bomb_is_walked_once_per_shared_node(monkeypatch: pytest.MonkeyPatch) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(20))
    listed: list[str] = []
    children = fields._children

    def counted(value: Any) -> Iterator[tuple[str, Any]]:
        for key, child in children(value):
            listed.append(key)
            assert len(listed) <= 1000, "shared nodes walked again"  # fail here: 4^20 paths would not end
            yield key, child

    monkeypatch.setattr(fields, "_children", counted)
    found = values_at(yaml.safe_load(bomb), "**._target_")
    assert found == [] and len(listed) == 21 + 9 + 20 * 4  # the top keys, a's items, b..u's items: once each


def test_flags_join_continuations_and_carry_trust_only_with_the_flag() -> None:
    s = surface(Read.FLAGS, Form.REPO_ID, fields=("--tokenizer", "serve"), carries_trust=True)
    text = "vllm serve me/model \\\n  --tokenizer someone/tok \\\n  --trust-remote-code\nvllm serve other/x\n"
    found = {(i.repo, i.carries_trust) for i in items(s, "README.md", text)}
    assert found == {("someone/tok", True), ("other/x", False)}  # the repo itself is no reference
    assert items(s, "README.md", "--tokenizer=./tokenizer --tokenizer=tok") == []  # local paths, bare names


def test_a_flag_naming_a_folder_of_the_repo_is_local() -> None:
    s = surface(Read.FLAGS, Form.REPO_ID, fields=("--tokenizer",))
    assert items(s, "README.md", "--tokenizer draft/tok", present=("draft/tok/tokenizer.json",)) == []


def test_calls_take_the_first_argument_or_a_keyword_and_the_revision() -> None:
    fields = ("from_pretrained", "DiffusionPipeline.from_pretrained(custom_pipeline)")
    s = surface(Read.CALLS, Form.REPO_ID, fields=fields, carries_trust=True)
    text = ("m = AutoModel.from_pretrained(\n  'a/b', revision='v1', trust_remote_code=True)\n"
            "t = AutoTokenizer.from_pretrained(pretrained_model_name_or_path=\"c/d\")\n"
            "p = DiffusionPipeline.from_pretrained('e/f', custom_pipeline='g/h')\n")
    found = {(i.repo, i.revision, i.carries_trust) for i in items(s, "README.md", text)}
    assert found == {("a/b", "v1", True), ("c/d", None, False), ("e/f", None, False), ("g/h", None, False)}


def test_pth_lines_starting_with_import_are_hooks() -> None:
    s = surface(Read.PTH, kind=Kind.HOOK)
    assert [i.target for i in items(s, "x.pth", "./lib\nimport os\n")] == ["x.pth"]
    assert items(s, "x.pth", "./lib\n  import os\n#import os\n") == []  # site only runs lines starting "import"


def test_entry_points_in_pyproject_setup_py_and_setup_cfg() -> None:
    s = surface(Read.ENTRY_POINTS, Form.DOTTED, Kind.CODE, fields=("vllm.general_plugins",))
    toml = '[project.entry-points."vllm.general_plugins"]\nmine = "myplug.register:hook"\n'
    setup = 'setup(entry_points={"vllm.general_plugins": ["mine = myplug.register:hook"]})\n'
    cfg = "[options.entry_points]\nvllm.general_plugins =\n    mine = myplug.register:hook\n"
    present = ("myplug/register.py",)
    for path, text in (("pyproject.toml", toml), ("setup.py", setup), ("setup.cfg", cfg)):
        [item] = items(s, path, text, present)
        assert (item.target, item.local, item.runs) == ("myplug/register.py", True, ("hook",)), path


def test_class_refs_resolve_locally_or_to_another_repo_with_its_revision() -> None:
    s = surface(Read.JSON, Form.CLASS_REF, Kind.CODE, fields=("auto_map.*",))
    text = '{"auto_map": {"AutoModel": "m.X", "AutoTokenizer": [null, "o/r@v2--t.T"], "Bad": 3}}'
    found = {(i.target, i.repo, i.revision, i.local) for i in items(s, "config.json", text, ("m.py",))}
    assert found == {("m.py", None, None, True), ("o/r@v2--t.T", "o/r", "v2", False)}


def test_diffusers_components_are_modules_in_their_own_folder_never_an_unknown_library() -> None:
    s = surface(Read.JSON, Form.DIFFUSERS_COMPONENT, Kind.CODE, fields=("*",), known=("diffusers", "transformers"))
    text = ('{"_class_name": "StableDiffusionPipeline", "unet": ["my_unet", "MyUNet"], '
            '"vae": ["diffusers", "AutoencoderKL"], "tokenizer": ["transformers", "CLIPTokenizer"], '
            '"feature_extractor": [null, null], "scheduler": ["evil_lib", "S"], "text_encoder": ["root_mod", "T"]}')
    present = ("unet/my_unet.py", "root_mod.py")
    found = {(i.target, i.local, i.runs) for i in items(s, "model_index.json", text, present)}
    # diffusers 0.42.1: `<component>/<library>.py` only; a library it does not ship is never imported by name.
    assert found == {("unet/my_unet.py", True, ("MyUNet.*",))}


def test_dotted_targets_are_repo_modules_libraries_or_unlisted() -> None:
    s = surface(Read.YAML, Form.DOTTED, Kind.CODE, fields=("**._target_",), known=("nemo", "torch"))
    text = ("model:\n  _target_: nemo.collections.asr.models.EncDecCTCModel\n  enc:\n    _target_: mods.enc.Enc\n"
            "  hook:\n    _target_: os.system\n")
    found = {(i.target, i.local) for i in items(s, "model_config.yaml", text, ("mods/enc.py",))}
    assert found == {("mods/enc.py", True), ("os.system", False)}


def test_unparseable_config_yields_nothing_for_the_scanners_that_report_it() -> None:
    assert items(surface(Read.JSON, Form.CLASS_REF, Kind.CODE, fields=("auto_map.*",)), "config.json", "{") == []
    assert items(surface(Read.YAML, Form.DOTTED, Kind.CODE, fields=("**._target_",)), "c.yaml", "a: [") == []
