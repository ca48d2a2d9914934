"""The readers the serving runtimes added (args-yaml, flag-json, call-paths), the dotted form's known
prefixes, and forms that name what they run."""

from __future__ import annotations

from app.core.closure import ClosureItem, Gate, Kind
from app.core.loaders.readers import read_surface
from app.core.loaders.schema import Form, Read, Source, Surface
from app.core.loaders.view import FileView

SOURCE = Source(repo="r", file="f", function="fn", version="1")


def _surface(read: Read, fields: tuple[str, ...], form: Form = Form.REPO_ID, kind: Kind = Kind.REPO,
             known: tuple[str, ...] = ()) -> Surface:
    return Surface(id="t.s", runtime="t", what="w", files=("*",), read=read, fields=fields, form=form, kind=kind,
                   gate=Gate.OPT_IN, carries_trust=True, known=known, source=SOURCE, cases=())


def _read(surface: Surface, path: str, text: str, present: tuple[str, ...] = ()) -> list[ClosureItem]:
    return list(read_surface(surface, FileView(path, text, frozenset((path, *present)), "me/model")))


def test_args_yaml_sends_trust_only_when_the_same_file_sets_it() -> None:
    surface = _surface(Read.ARGS_YAML, ("tokenizer", "speculative-config.model"))
    text = "tokenizer: a/tok\ntrust-remote-code: true\nspeculative-config:\n  model: b/d\n"
    trusted = _read(surface, "vllm.yaml", text)
    assert [(i.repo, i.carries_trust) for i in trusted] == [("a/tok", True), ("b/d", True)]
    plain = _read(surface, "vllm.yaml", "tokenizer: a/tok\ntrust-remote-code: false\n")
    assert [(i.repo, i.carries_trust) for i in plain] == [("a/tok", False)]
    assert _read(surface, "vllm.yaml", "tokenizer: ./tok\n- not a mapping") == []


def test_flag_json_reads_the_key_of_a_quoted_json_flag_and_a_python_keyword() -> None:
    surface = _surface(Read.FLAG_JSON, ("--speculative-config:model", "speculative_config:model"))
    shell = "vllm serve me/model --trust-remote-code \\\n  --speculative-config '{\"model\": \"x/draft\", \"n\": 3}'\n"
    assert [(i.repo, i.carries_trust) for i in _read(surface, "run.sh", shell)] == [("x/draft", True)]
    code = "LLM(model='me/model',\n    speculative_config={'model': 'y/draft', 'on': True})\n"
    assert [(i.repo, i.carries_trust) for i in _read(surface, "run.py", code)] == [("y/draft", False)]
    assert _read(surface, "run.sh", "vllm serve m --speculative-config '{\"model\": ") == []


def test_call_paths_name_only_files_the_repo_ships() -> None:
    surface = _surface(Read.CALL_PATHS, ("register_custom_ops_library",), form=Form.SELF, kind=Kind.NATIVE)
    text = 'so.register_custom_ops_library("./lib/ops.so")\nso.register_custom_ops_library("/usr/lib/x.so")\n'
    items = _read(surface, "README.md", text, ("lib/ops.so",))
    assert [(i.target, i.local) for i in items] == [("lib/ops.so", True)]
    assert _read(surface, "README.md", "so.register_custom_ops_library(get_library_path())") == []


def test_dotted_known_entries_are_prefixes_not_first_components() -> None:
    surface = _surface(Read.YAML, ("**._target_",), form=Form.DOTTED, kind=Kind.CODE, known=("torch.optim",))
    text = "a:\n  _target_: torch.optim.AdamW\nb:\n  _target_: torch.hub.load\nc:\n  _target_: torch.optimx.Y\n"
    assert [i.target for i in _read(surface, "c.yaml", text)] == ["torch.hub.load", "torch.optimx.Y"]


def test_a_local_dotted_target_names_what_it_runs() -> None:
    surface = _surface(Read.YAML, ("**._target_",), form=Form.DOTTED, kind=Kind.CODE)
    items = _read(surface, "c.yaml", "cb:\n  _target_: pkg.mod.Hook\n", ("pkg/mod.py",))
    assert [(i.target, i.runs, i.local) for i in items] == [("pkg/mod.py", ("Hook",), True)]
