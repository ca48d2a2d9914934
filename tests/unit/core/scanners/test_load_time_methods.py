"""Load-time methods: what transformers calls on shipped classes while loading counts as load time.

Modules are generated here as text with harmless payloads ("echo hfvet-test") and only parsed.
The derivation script runs on a tiny loader written at test time, not on a fetched transformers.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from app.core.findings import Finding, Severity
from app.core.pipeline import VetOptions, vet
from app.core.scanners.python_code.load_time import DATA_FILE, HAND_METHODS, LOAD_TIME_METHODS
from app.core.scanners.remote_code_scanner import RemoteCodeScanner
from app.sources.local import LocalSource

ROOT = Path(__file__).resolve().parents[4]
SCRIPT = ROOT / "scripts" / "derive_load_methods.py"


def _dangerous(tmp_path: Path, source: str) -> list[Finding]:
    (tmp_path / "modeling_x.py").write_text(textwrap.dedent(source))
    report = vet(LocalSource(tmp_path), [RemoteCodeScanner()], options=VetOptions(workers=1))
    return [f for f in report.findings if f.rule in ("remote-code-dangerous", "remote-code-suspicious")]


def test_module_getattr_that_supplies_the_class_runs_at_load(tmp_path: Path) -> None:
    found = _dangerous(tmp_path, '''
        import subprocess

        def __getattr__(name):
            subprocess.run(["sh", "-c", "echo hfvet-test"])
            return object
    ''')
    assert [f.severity for f in found] == [Severity.HIGH]
    assert "at import/load time" in found[0].message
    assert "getattr()s the class from the module" in found[0].message


@pytest.mark.parametrize("method", ["to_dict", "__repr__", "to_json_string", "to_diff_dict", "get_text_config"])
def test_config_methods_the_loaders_call_run_at_load(tmp_path: Path, method: str) -> None:
    found = _dangerous(tmp_path, f'''
        from transformers import PretrainedConfig

        class XConfig(PretrainedConfig):
            def {method}(self, *args):
                exec(self.payload)
                return {{}}
    ''')
    assert [f.severity for f in found] == [Severity.HIGH]
    assert "at import/load time" in found[0].message


def test_a_method_no_loader_calls_stays_medium(tmp_path: Path) -> None:
    assert "shuffle_payload" not in LOAD_TIME_METHODS
    found = _dangerous(tmp_path, '''
        from transformers import PretrainedConfig

        class XConfig(PretrainedConfig):
            def shuffle_payload(self):
                exec(self.payload)
    ''')
    assert [f.severity for f in found] == [Severity.MEDIUM]
    assert "when called" in found[0].message


def test_metaclass_call_runs_at_load_but_an_instance_call_does_not(tmp_path: Path) -> None:
    found = _dangerous(tmp_path, '''
        import subprocess

        class Meta(type):
            def __call__(cls, *args, **kwargs):
                subprocess.run(["sh", "-c", "echo hfvet-test"])
                return type.__call__(cls, *args, **kwargs)  # (super().__call__ would reach Runner too:
                                                            # the same-module call graph resolves .m by name)

        class XConfig(metaclass=Meta):
            pass

        class Runner:
            def __call__(self):
                subprocess.run(["sh", "-c", "echo hfvet-test"])
    ''')
    by_line = {f.evidence.split(":")[1]: f.severity for f in found if f.evidence}
    assert by_line == {"6": Severity.HIGH, "15": Severity.MEDIUM}


def test_the_shipped_data_parses_and_keeps_the_floor() -> None:
    data = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    protocol = data["protocol"]
    for name in ("__getattr__", "__set_name__", "__init_subclass__", "__call__", "__get__"):
        assert protocol[name]["reason"]
    assert protocol["__call__"]["scope"] == "metaclass"  # not every class's __call__
    assert "module" in protocol["__getattr__"]["scope"]
    derived = data["derived"]
    for name in ("to_dict", "to_json_string", "__repr__", "get_text_config", "_init_weights", "post_init"):
        entry = derived[name]
        assert entry["runtime"].startswith("transformers ")
        assert entry["file"].endswith(".py") and entry["function"] and entry["line"] > 0 and entry["path"]
    assert HAND_METHODS <= LOAD_TIME_METHODS
    assert "__call__" not in LOAD_TIME_METHODS  # scoped to metaclasses


LOADER = {
    "configuration_utils": '''
        import copy

        class PushToHubMixin:
            def push_to_hub(self):
                self.save_pretrained()

        class PreTrainedConfig(PushToHubMixin):
            def __init__(self, **kwargs):
                self.validate_hook()

            @classmethod
            def from_pretrained(cls, name):
                config_dict = cls.get_config_dict(name)
                return cls.from_dict(config_dict)

            @classmethod
            def get_config_dict(cls, name):
                return {"name": name}

            @classmethod
            def from_dict(cls, config_dict):
                config = cls(**config_dict)
                config_dict.get("unused")
                logger.info(f"Model config {config}")
                return config

            def validate_hook(self):
                pass

            def __repr__(self):
                return self.to_json_string()

            def to_json_string(self):
                return str(self.to_dict())

            def to_dict(self):
                return copy.deepcopy(self.__dict__)

            def save_pretrained(self):
                self.write_files()

            def write_files(self):
                pass
    ''',
    "models.auto.configuration_auto": '''
        from ...configuration_utils import PreTrainedConfig
        from ...dynamic_module_utils import get_class_from_dynamic_module

        class AutoConfig:
            @classmethod
            def from_pretrained(cls, name):
                config_class = get_class_from_dynamic_module(name)
                return config_class.from_pretrained(name)
    ''',
    "dynamic_module_utils": '''
        def get_class_from_dynamic_module(name):
            return get_class_in_module(name)

        def get_class_in_module(name):
            return name
    ''',
}


@pytest.fixture(scope="module")
def derive_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("derive_load_methods", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["derive_load_methods"] = module
    spec.loader.exec_module(module)
    return module


def test_derivation_follows_the_loader_from_the_entry_point(derive_script: ModuleType) -> None:
    sources = {name: textwrap.dedent(text) for name, text in LOADER.items()}
    found = derive_script.derive(sources, derive_script.TRANSFORMERS)
    for name in ("from_pretrained", "get_config_dict", "from_dict", "__init__", "validate_hook", "__repr__",
                 "__format__", "to_json_string", "to_dict"):
        assert name in found, name
    assert "save_pretrained" not in found and "write_files" not in found and "push_to_hub" not in found
    assert "get" not in found  # config_dict.get(): a dict, not a method the loader classes define
    repr_site = found["__repr__"][0]
    assert repr_site.function == "PreTrainedConfig.from_dict" and repr_site.module == "configuration_utils"
    assert repr_site.path == ("AutoConfig.from_pretrained", "PreTrainedConfig.from_pretrained",
                              "PreTrainedConfig.from_dict")
    assert found["to_dict"][0].function == "PreTrainedConfig.to_json_string"


def test_derivation_output_names_runtime_version_and_source(derive_script: ModuleType, tmp_path: Path) -> None:
    package = tmp_path / "transformers"
    for name, text in {**LOADER, "__init__": '__version__ = "0.0.1"\n'}.items():
        path = package / (name.replace(".", "/") + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    out = tmp_path / "methods.json"
    assert derive_script.main(["--transformers", str(package), "-o", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["runtimes"] == {"transformers": "0.0.1"}
    assert data["derived"]["to_dict"]["file"] == "configuration_utils.py"
    assert data["derived"]["to_dict"]["runtime"] == "transformers 0.0.1"
    assert set(data["protocol"]) == set(derive_script.PROTOCOL)
