"""A source of code a repo's text declares: what pip, uv, conda, git, a container runtime or a shell
would fetch, as the reader of one file found it. The links scanner judges each against the upstreams
and the known package names (allowlist first: a source nobody listed is a finding, never silence).

Readers of declarations (shell commands, pyproject, PEP 723, requirements, environment.yml,
.gitmodules, Helm values, launcher configs) all produce this one shape, so one judge decides them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# package: a distribution name with its specifier (`vllm>=0.9`, `foo[extra]`), fetched from an index;
# url: a direct reference (an archive or wheel URL, `name @ https://...`);
# git: a VCS reference (`git+https://github.com/o/r@rev`, a submodule url, `git clone` target);
# index: a package index or find-links location (pip, uv, poetry); `extra` says it sits beside PyPI;
# channel: a conda channel (a name or URL);
# image: a container image reference (`nvcr.io/nim/x:1`, `docker://...` with the scheme removed);
# hub: a Hugging Face repo whose files are installed or run as code (`org/name`, optional revision).
DeclaredKind = Literal["package", "url", "git", "index", "channel", "image", "hub"]


@dataclass(frozen=True)
class Declared:
    kind: DeclaredKind
    value: str  # as written, variables resolved where the reader could (`vllm==0.9`, `nvcr.io/nim/x:1`)
    where: str  # `line N` in the file
    text: str  # the line (or logical line) it was read from: the finding's evidence
    via: str  # which declaration said it: `pip install`, `[tool.uv.sources]`, `environment.yml channels`...
    extra: bool = False  # index only: added beside the default index (pip --extra-index-url, uv `extra`)
    revision: str | None = None  # hub only: the revision named, None for the default branch
