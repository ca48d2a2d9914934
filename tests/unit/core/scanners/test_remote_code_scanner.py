"""RemoteCodeScanner: auto_map references and static analysis of shipped Python.

Hostile modules are written into tmp_path as text and only parsed; payloads are "echo pwned".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.findings import Finding, Severity
from app.core.limits import Limits
from app.core.manifest import ManifestFile
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners.remote_code_scanner import RemoteCodeScanner
from app.sources.local import LocalSource

BENIGN_MODEL = '''
import math
import torch
from torch import nn
from transformers import PreTrainedModel
from .configuration_x import XConfig


class XAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.scale = 1 / math.sqrt(config.head_dim)
        self.proj = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, x):
        return torch.softmax(self.proj(x) * self.scale, dim=-1)


class XModel(PreTrainedModel):
    config_class = XConfig

    def __init__(self, config):
        super().__init__(config)
        self.attn = XAttention(config)
        self.post_init()
'''


def _vet(tmp_path: Path, files: dict[str, str | bytes], repo: str | None = None,
         limits: Limits | None = None) -> Report:
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return vet(LocalSource(tmp_path, repo_id=repo), [RemoteCodeScanner()], options=VetOptions(limits=limits, workers=1))


def _rules(report: Report) -> dict[str, Severity]:
    """Highest severity per rule id."""
    found: dict[str, Severity] = {}
    for f in report.findings:
        found[f.rule] = max(found.get(f.rule, f.severity), f.severity, key=lambda s: s.rank)
    return found


def _with(report: Report, rule: str) -> list[Finding]:
    return [f for f in report.findings if f.rule == rule]


def test_plain_modelling_code_is_only_code_present(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"modeling_x.py": BENIGN_MODEL})
    assert _rules(report) == {"remote-code": Severity.LOW}
    assert report.findings[0].path == "modeling_x.py"
    assert report.findings[0].member is None


def test_import_time_process_spawn_is_high_with_line_evidence(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"modeling_x.py": 'import os\n\nos.system("echo pwned")\n'})
    (finding,) = _with(report, "remote-code-dangerous")
    assert finding.severity is Severity.HIGH
    assert finding.evidence == 'modeling_x.py:3: os.system("echo pwned")'
    assert "import" in finding.message


def test_process_spawn_in_a_method_is_medium(tmp_path: Path) -> None:
    source = "import subprocess as sp\n\nclass X:\n    def forward(self):\n        sp.run(['echo', 'pwned'])\n"
    report = _vet(tmp_path, {"modeling_x.py": source})
    (finding,) = _with(report, "remote-code-suspicious")
    assert "subprocess.run" in finding.message
    assert "remote-code-dangerous" not in _rules(report)


def test_constructor_counts_as_load_time(tmp_path: Path) -> None:
    source = "from os import popen\n\nclass X:\n    def __init__(self):\n        popen('echo pwned')\n"
    report = _vet(tmp_path, {"modeling_x.py": source})
    assert _rules(report)["remote-code-dangerous"] is Severity.HIGH


def test_main_guard_is_not_import_time(tmp_path: Path) -> None:
    source = 'import os\nif __name__ == "__main__":\n    os.system("echo pwned")\n'
    report = _vet(tmp_path, {"convert.py": source})
    assert _rules(report).get("remote-code-suspicious") is Severity.MEDIUM
    assert "remote-code-dangerous" not in _rules(report)


def test_network_fetch_plus_exec_is_critical(tmp_path: Path) -> None:
    source = (
        "import requests\n"
        "def helper(url):\n    return requests.get(url).text\n"
        "def run(code):\n    eval(code)\n"
    )
    report = _vet(tmp_path, {"modeling_x.py": source})
    critical = [f for f in report.findings if f.severity is Severity.CRITICAL]
    assert [f.rule for f in critical] == ["remote-code-dangerous"]
    assert "fetches data from the network and runs code" in critical[0].message
    assert "modeling_x.py:3:" in (critical[0].evidence or "")


def test_exec_of_downloaded_bytes_is_critical_on_its_own(tmp_path: Path) -> None:
    source = (
        "from urllib.request import urlopen\n"
        "with urlopen('http://x.invalid') as r:\n    body = r.read()\nexec(body)\n"
    )
    report = _vet(tmp_path, {"modeling_x.py": source})
    assert any(f.severity is Severity.CRITICAL and f.evidence == "modeling_x.py:4: exec(body)"
               for f in report.findings)


def test_exec_of_decoded_data_is_high_and_critical_with_a_blob(tmp_path: Path) -> None:
    short = 'import base64\nexec(base64.b64decode("ZWNobyBwd25lZA=="))\n'
    assert _rules(_vet(tmp_path / "a", {"m.py": short}))["remote-code-dangerous"] is Severity.HIGH
    blob = ("ZWNobyBwd25lZA" * 40) + "=="
    long = f'import base64, zlib\nPAYLOAD = "{blob}"\nexec(zlib.decompress(base64.b64decode(PAYLOAD)))\n'
    report = _vet(tmp_path / "b", {"m.py": long})
    assert _rules(report)["remote-code-dangerous"] is Severity.CRITICAL
    assert any("encoded blob" in f.message for f in report.findings)


def test_obfuscated_import_is_resolved_and_flagged(tmp_path: Path) -> None:
    source = 'getattr(__import__("o" + "s"), "sys" + "tem")("echo pwned")\n'
    report = _vet(tmp_path, {"m.py": source})
    messages = " ".join(f.message for f in report.findings)
    assert "os.system" in messages
    assert "computed name" in messages
    assert _rules(report)["remote-code-dangerous"] is Severity.CRITICAL  # obfuscation + process


def test_code_inside_an_exec_string_is_analysed(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"m.py": 'exec("import subprocess\\nsubprocess.call(\'echo pwned\', shell=True)")\n'})
    assert any("subprocess.call" in f.message and f.severity is Severity.HIGH for f in report.findings)


def test_write_to_shell_profile_is_persistence(tmp_path: Path) -> None:
    source = 'import os\nclass M:\n    def save(self):\n        open(os.path.expanduser("~/.bashrc"), "a").write("x")\n'
    report = _vet(tmp_path, {"m.py": source})
    assert any("persistence" in f.message and f.severity is Severity.HIGH for f in report.findings)


def test_reading_files_is_not_a_write(tmp_path: Path) -> None:
    source = 'def load():\n    return open("/etc/hostname").read()\n'
    assert _rules(_vet(tmp_path, {"m.py": source})) == {"remote-code": Severity.LOW}


def test_taint_stays_in_its_function(tmp_path: Path) -> None:
    source = ("import base64, subprocess\n"
              "def decode(s):\n    cmd = base64.b64decode(s)\n    return cmd\n"
              "def run(cmd):\n    subprocess.run(cmd)\n")
    assert _rules(_vet(tmp_path / "a", {"m.py": source})) == {
        "remote-code": Severity.LOW, "remote-code-suspicious": Severity.MEDIUM}
    same_function = "import base64, subprocess\ndef run(s):\n    cmd = base64.b64decode(s)\n    subprocess.run(cmd)\n"
    assert _rules(_vet(tmp_path / "b", {"m.py": same_function}))["remote-code-dangerous"] is Severity.HIGH


def test_relative_output_paths_are_not_outside_writes(tmp_path: Path) -> None:
    source = 'def save(out_dir, name):\n    open(f"{out_dir}/{name}.txt", "w").write("ok")\n'
    assert _rules(_vet(tmp_path / "a", {"m.py": source})) == {"remote-code": Severity.LOW}
    absolute = 'def save():\n    open("/usr/local/lib/libx.so", "wb").write(b"")\n'
    assert _rules(_vet(tmp_path / "b", {"m.py": absolute}))["remote-code-suspicious"] is Severity.MEDIUM


def test_other_repos_are_flagged_but_the_own_repo_is_not(tmp_path: Path) -> None:
    source = (
        "from huggingface_hub import hf_hub_download\nfrom transformers import AutoModel\n"
        "def f():\n    hf_hub_download('org/model', 'extra.bin')\n"
        "    hf_hub_download('evil/kernels', 'k.py')\n"
        "    AutoModel.from_pretrained('evil/encoder', trust_remote_code=True)\n"
    )
    report = _vet(tmp_path, {"m.py": source}, repo="org/model")
    messages = [f.message for f in report.findings]
    assert not any("org/model" in m for m in messages)
    assert any("evil/kernels" in m for m in messages)
    assert any("evil/encoder" in m and "remote code" in m for m in messages)


def test_safe_loads_are_not_flagged(tmp_path: Path) -> None:
    # Source text the scanner parses; never run.
    source = ("import torch, yaml\ndef f(p):\n    torch.load(p, weights_only=True)\n"  # text, never run
              "    yaml.load(open(p), Loader=yaml.SafeLoader)\n")  # text, never run
    assert _rules(_vet(tmp_path / "a", {"m.py": source})) == {"remote-code": Severity.LOW}
    unsafe = "import torch\ndef f(p):\n    return torch.load(p)\n"  # text, never run
    assert _rules(_vet(tmp_path / "b", {"m.py": unsafe}))["remote-code-suspicious"] is Severity.MEDIUM


def test_bandit_runs_and_ignores_nosec(tmp_path: Path) -> None:
    source = 'import socket\ns = socket.socket()\ndef serve():\n    s.bind(("0.0.0.0", 80))  # nosec\n'
    report = _vet(tmp_path, {"m.py": source})
    (issue,) = _with(report, "remote-code-bandit")
    assert "B104" in issue.message
    assert (issue.evidence or "").startswith("m.py:4:")


def test_unparsable_python_fails_closed(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"m.py": "def broken(:\n", "n.py": b"import os\x00\xff\n"})
    assert {f.path for f in _with(report, "scan-error")} == {"m.py", "n.py"}
    assert not any(f.scanned for f in report.files)


def test_absurd_nesting_fails_closed_instead_of_crashing(tmp_path: Path) -> None:
    source = "x = " + " + ".join(["'a'"] * 30000) + "\n"
    report = _vet(tmp_path, {"m.py": source})
    assert _with(report, "scan-error")


def test_empty_init_is_scanned_clean(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"__init__.py": ""})
    assert report.findings == ()
    assert report.files[0].scanned


def test_oversized_python_is_a_limit_finding(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"m.py": "x = 1\n" * 100}, limits=Limits(max_text_bytes=64))
    assert _rules(report) == {"limit-exceeded": Severity.HIGH, "remote-code": Severity.LOW}


def _config(auto_map: object, **extra: object) -> str:
    return json.dumps({"model_type": "x", "auto_map": auto_map, **extra})


def test_auto_map_to_present_modules_is_low(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        "config.json": _config({"AutoConfig": "configuration_x.XConfig", "AutoModel": "modeling_x.XModel"}),
        "configuration_x.py": "class XConfig: pass\n",
        "modeling_x.py": BENIGN_MODEL,
        "tokenizer_config.json": _config({"AutoTokenizer": ["tokenization_x.XTok", None]}),
        "tokenization_x.py": "class XTok: pass\n",
    }
    report = _vet(tmp_path, files)
    auto = _with(report, "auto-map")
    assert {f.path for f in auto} == {"config.json", "tokenizer_config.json"}
    assert all(f.severity is Severity.LOW for f in auto)
    assert not _with(report, "auto-map-missing-module")


def test_auto_map_problems(tmp_path: Path) -> None:
    config = _config(
        {"AutoModel": "modeling_x.XModel", "AutoModelForCausalLM": "evil/code--modeling_y.Y",
         "AutoConfig": "org/model--configuration_x.XConfig", "AutoTokenizer": [7, "not a ref"]},
        custom_pipelines={"text-generation": {"impl": "pipe.Pipe"}},
    )
    report = _vet(tmp_path, {"config.json": config, "configuration_x.py": "", "pipe.py": ""}, repo="org/model")
    (external,) = _with(report, "auto-map-external")
    assert external.severity is Severity.HIGH and "evil/code" in external.message
    (missing,) = _with(report, "auto-map-missing-module")
    assert "modeling_x" in missing.message
    assert len(_with(report, "auto-map-malformed")) == 2


def test_auto_map_in_a_subfolder_finds_modules_next_to_it(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {
        "text_encoder/config.json": _config({"AutoModel": "modeling_enc.Enc"}),
        "text_encoder/modeling_enc.py": "class Enc: pass\n",
    }
    assert not _with(_vet(tmp_path, files), "auto-map-missing-module")


def test_config_without_auto_map_is_clean_and_bad_json_fails(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"config.json": '{"model_type": "llama"}', "generation_config.json": "{oops"})
    assert [(f.path, f.rule) for f in report.findings] == [("generation_config.json", "scan-error")]


@pytest.mark.parametrize(
    ("path", "fmt", "handled"),
    [("modeling_x.py", "text", True), ("sub/tool.pyw", "unknown", True), ("config.json", "text", True),
     ("processor_config.json", "text", True), ("config.json", "pickle", False),
     ("model.safetensors", "safetensors", False), ("tokenizer.json", "text", False)],
)
def test_handles(path: str, fmt: str, handled: bool) -> None:
    assert RemoteCodeScanner().handles(ManifestFile(path, 10, format=fmt)) is handled


def test_rules_list_every_emitted_rule(tmp_path: Path) -> None:
    declared = {r.id for r in RemoteCodeScanner.rules}
    report = _vet(tmp_path, {
        "config.json": _config({"A": "a.A", "B": "x/y--b.B", "C": 3}),
        # Source text the scanner parses; never run.
        "a.py": 'import os, pickle, socket\nos.system("echo pwned")\ndef f(d):\n'
                '    pickle.loads(d)\n'  # text, never run
                'def g():\n    socket.socket().bind(("0.0.0.0", 1))  # nosec\n',
    })
    assert {f.rule for f in report.findings} <= declared


def test_fetch_beside_a_fixed_program_is_high_for_review_not_critical(tmp_path: Path) -> None:
    fixed = ("import requests, subprocess\n"
             "def image(url):\n    return requests.get(url).content\n"
             "def video(path):\n    subprocess.run(['ffmpeg', '-i', path, '-f', 'image2pipe', '-'])\n")
    report = _vet(tmp_path / "a", {"m.py": fixed})
    (unlinked,) = _with(report, "remote-code-unlinked")
    assert unlinked.severity is Severity.HIGH and "no data flow" in unlinked.message
    assert "remote-code-dangerous" not in _rules(report)
    # The same file with a program chosen by the data is a possible flow: critical as before.
    shell = fixed.replace("['ffmpeg', '-i', path, '-f', 'image2pipe', '-']", "path, shell=True")
    report = _vet(tmp_path / "b", {"m.py": shell})
    assert _rules(report)["remote-code-dangerous"] is Severity.CRITICAL
    assert "remote-code-unlinked" not in _rules(report)


def test_helper_module_effects_count_only_where_called_at_load_time(tmp_path: Path) -> None:
    helper = "import os\ndef spawn():\n    os.system('echo pwned')\n"
    at_load = "from .util import spawn\nclass M:\n    def __init__(self):\n        spawn()\n"
    report = _vet(tmp_path / "a", {"util.py": helper, "m.py": at_load})
    (via,) = [f for f in _with(report, "remote-code-dangerous") if f.path == "m.py"]
    assert via.severity is Severity.HIGH and "util" in via.message and "__init__" in via.message
    later = "from .util import spawn\nclass M:\n    def forward(self):\n        spawn()\n"
    report = _vet(tmp_path / "b", {"util.py": helper, "m.py": later})
    assert not [f for f in report.findings if f.path == "m.py" and f.rule != "remote-code"]


def test_forwarding_the_loaded_repo_and_the_callers_choice_is_not_dynamic(tmp_path: Path) -> None:
    source = ("class M:\n    @classmethod\n"
              "    def from_pretrained(cls, pretrained_model_name_or_path, trust_remote_code=False, **kw):\n"
              "        return super().from_pretrained(pretrained_model_name_or_path, "
              "trust_remote_code=trust_remote_code, **kw)\n")
    assert _rules(_vet(tmp_path, {"m.py": source})) == {"remote-code": Severity.LOW}


def test_import_module_returns_the_leaf_not_the_top_package(tmp_path: Path) -> None:
    source = "import importlib\nimportlib.import_module('os.path').join('a', 'b')\n"
    assert _rules(_vet(tmp_path, {"m.py": source})) == {"remote-code": Severity.LOW}


def test_pyproject_without_an_in_tree_backend_is_clean(tmp_path: Path) -> None:
    plain = '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
    assert _vet(tmp_path, {"pyproject.toml": plain}).findings == ()


@pytest.mark.parametrize("argv", ["['sh', '-c', code]", "['python3', '-c', code]", "('bash', code)"])
def test_an_interpreter_with_non_constant_arguments_is_no_fixed_program(tmp_path: Path, argv: str) -> None:
    source = ("import requests, subprocess\n"
              "def get(url):\n    return requests.get(url).text\n"
              f"def run(code):\n    subprocess.run({argv})\n")
    assert _rules(_vet(tmp_path, {"m.py": source}))["remote-code-dangerous"] is Severity.CRITICAL
