"""Integration: a repo folder holding one of each declaration file, vetted through the links
scanner; every declared source becomes the finding its kind maps to, reported once even when
the line checks see it too."""

from __future__ import annotations

from pathlib import Path

from app.core.findings import Finding, Severity
from app.core.manifest import ManifestFile
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners.links_scanner import LinksScanner
from app.sources.local import LocalSource

FILES = {
    "pyproject.toml": ('[project]\nname = "demo"\ndependencies = ["vllm"]\n\n[build-system]\n'
                       'requires = ["setuptools", "helper @ https://build.example.invalid/helper-1.0.tar.gz"]\n\n'
                       '[tool.uv.sources]\nvllm = { git = "https://github.com/someone/vllm", rev = "dsv4" }\n'),
    "serve.py": ('# /// script\n# dependencies = ["transfomers"]\n# [tool.uv]\n'
                 '# extra-index-url = ["https://script-index.example.invalid/simple"]\n# ///\nprint("hfvet-test")\n'),
    "requirements-gpu.txt": "--extra https://req-index.example.invalid/simple\nflash-attn\n",
    "environment.yml": "name: x\nchannels:\n  - canada-quant\ndependencies:\n  - python=3.11\n  - pip:\n    - vlllm\n",
    ".gitmodules": '[submodule "k"]\n\tpath = k\n\turl = https://github.com/someone/sglang-kernels.git\n',
    "chart/Chart.yaml": "apiVersion: v2\nname: x\ndependencies:\n  - name: r\n    repository: oci://charts.example.invalid/x\n",
    "chart/values.yaml": "image:\n  registry: ghcr.io\n  repository: someone/server\n  tag: '1'\n",
    "docker-compose.yml": "services:\n  api:\n    image: registry.example.invalid/team/api:2\n",
    "train.sbatch": "#!/bin/bash\n#SBATCH --container-image=nvcr.io\\#someone/trainer:1\nsrun python train.py\n",
    "Singularity.def": "Bootstrap: docker\nFrom: someone/base:1\n\n%post\n  echo hfvet-test\n",
}


def _vet(tmp_path: Path, files: dict[str, str]) -> Report:
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return vet(LocalSource(tmp_path), [LinksScanner()], options=VetOptions(workers=1))


def _found(report: Report) -> set[tuple[str, str, str | None]]:
    return {(f.path, f.rule, f.source) for f in report.findings if f.rule not in ("upstream-link", "external-link")}


def test_every_declaration_file_is_judged(tmp_path: Path) -> None:
    found = _found(_vet(tmp_path, FILES))
    assert found == {
        ("pyproject.toml", "binary-download", "build.example.invalid/helper-1.0.tar.gz"),
        ("pyproject.toml", "forked-code", "github.com/someone/vllm"),
        ("serve.py", "typosquat-package", None),
        ("serve.py", "untrusted-package-index", "script-index.example.invalid/simple"),
        ("requirements-gpu.txt", "untrusted-package-index", "req-index.example.invalid/simple"),
        ("environment.yml", "untrusted-package-index", "anaconda.org/canada-quant"),
        ("environment.yml", "typosquat-package", None),
        (".gitmodules", "forked-code", "github.com/someone/sglang-kernels"),
        ("chart/Chart.yaml", "untrusted-package-index", "charts.example.invalid/x"),
        ("chart/values.yaml", "untrusted-container-image", "ghcr.io/someone/server"),
        ("docker-compose.yml", "untrusted-container-image", "registry.example.invalid/team/api"),
        ("train.sbatch", "untrusted-container-image", "nvcr.io/someone/trainer"),
        ("Singularity.def", "untrusted-container-image", "docker.io/someone/base"),
    }


def test_a_source_seen_by_lines_and_declarations_is_reported_once(tmp_path: Path) -> None:
    text = "vllm @ git+https://github.com/someone/vllm-fork.git@main\ntransfomers==4.50\n"
    report = _vet(tmp_path, {"requirements.txt": text})
    rules = sorted(f.rule for f in report.findings)
    assert rules == ["forked-code", "typosquat-package"]
    (squat,) = [f for f in report.findings if f.rule == "typosquat-package"]
    assert squat.evidence == "requirements.txt:2: transfomers==4.50"


def test_evidence_points_at_the_declaring_line(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"pyproject.toml": FILES["pyproject.toml"]})
    fork: Finding = next(f for f in report.findings if f.rule == "forked-code")
    assert fork.evidence is not None and fork.evidence.startswith("pyproject.toml:9: vllm = { git =")


def test_an_unreadable_declaration_file_is_reported(tmp_path: Path) -> None:
    report = _vet(tmp_path, {"pyproject.toml": '[project]\ndependencies = ["vllm"\n'})
    errors = [f for f in report.findings if f.rule == "scan-error"]
    assert len(errors) == 1 and errors[0].severity is Severity.HIGH and "TOML" in errors[0].message


def test_benign_declarations_make_no_risk_findings(tmp_path: Path) -> None:
    files = {
        "pyproject.toml": ('[project]\nname = "x"\ndependencies = ["torch", "transformers"]\n'
                           '[[tool.uv.index]]\nname = "pytorch"\nurl = "https://download.pytorch.org/whl/cu128"\n'),
        "environment.yml": ("name: x\nchannels: [conda-forge, nvidia]\n"
                            "dependencies: [python=3.11, pip, {pip: [vllm]}]\n"),
        "docker-compose.yml": "services:\n  api:\n    image: vllm/vllm-openai:v0.9.1\n",
        "job.slurm": "#SBATCH --container-image=ubuntu:24.04\n",
        ".gitmodules": '[submodule "v"]\n\turl = https://github.com/vllm-project/vllm.git\n',
    }
    assert _found(_vet(tmp_path, files)) == set()


def test_handles_the_new_file_names() -> None:
    scanner = LinksScanner()
    for path in (".gitmodules", "Chart.yaml", "environment.yml", "Singularity.def", "Singularity", "job.sbatch",
                 "train.slurm", "requirements.in", "deps.pip", "docker-compose.yml"):
        assert scanner.handles(ManifestFile(path, 10, format="text")), path
