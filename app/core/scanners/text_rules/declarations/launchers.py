"""Images named by HPC launchers and image tools in any text (scripts, READMEs, job files):

- Slurm with pyxis: ``#SBATCH --container-image=IMAGE`` (sbatch reads ``#SBATCH`` lines of any
  script; pyxis's README escapes ``#`` there as ``\\#``), and ``srun``/``salloc``/``sbatch`` with
  ``--container-image IMAGE`` or ``=IMAGE`` on the command line;
- ``enroot import [options] docker://IMAGE`` (also ``dockerd://``, ``podman://``);
- Apptainer/Singularity and any other text naming ``docker://``, ``oras://``, ``library://`` or
  ``shub://``: these schemes only ever name container images;
- Apptainer/Singularity definition files: ``Bootstrap: docker|oras|library|shub`` with ``From:``
  (and the optional ``Registry:``/``Namespace:`` headers of the docker agent).

Values are normalised by ``images.normalise`` (pyxis/enroot ``REGISTRY#IMAGE`` becomes ``REGISTRY/IMAGE``).
"""

from __future__ import annotations

import re

from app.core.scanners.text_rules.declarations.common import MAX_LINE_TEXT, Reading, at
from app.core.scanners.text_rules.declarations.images import normalise
from app.core.scanners.text_rules.declared import Declared

_CONTAINER_IMAGE = re.compile(r"--container-image(?:=|\s+)[\"']?(?P<image>[^\s\"']+)")
_SCHEMED = re.compile(r"(?<![\w+.-])(?P<image>(?:docker|dockerd|podman|oras|library|shub)://[^\s\"'`<>)\]]+)", re.I)
_HEADER = re.compile(r"^\s*(?P<key>Bootstrap|From|Registry|Namespace)\s*:\s*(?P<value>\S+)", re.I)
_SECTION = re.compile(r"^\s*%\w+")
_BOOTSTRAP_SCHEMES = {"docker": "", "oras": "", "library": "library://", "shub": "shub://"}
_MARKERS = ("--container-image", "://")


def read(text: str) -> Reading:
    """Every launcher or scheme image in the text, line by line (continuations not needed: each
    form keeps option and value together)."""
    found = Reading()
    if not any(marker in text for marker in _MARKERS):
        return found
    for number, line in enumerate(text.splitlines(), start=1):
        if "--container-image" in line:
            for match in _CONTAINER_IMAGE.finditer(line):
                via = "#SBATCH --container-image" if line.lstrip().startswith("#SBATCH") else "--container-image"
                found.add(_image(match.group("image"), number, line, via))
        if "://" in line:
            for match in _SCHEMED.finditer(line):
                found.add(_image(match.group("image").rstrip(".,;:"), number, line, _scheme_via(line)))
    return found


def read_definition(text: str) -> Reading:
    """An Apptainer/Singularity definition file's header (the lines before the first ``%section``)."""
    headers: dict[str, tuple[str, int, str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if _SECTION.match(line):
            break
        match = _HEADER.match(line)
        if match:
            headers.setdefault(match.group("key").lower(), (match.group("value"), number, line))
    found = read(text)  # `%post` may pull more images with `apptainer pull docker://...`
    agent = headers.get("bootstrap", ("", 0, ""))[0].lower()
    if "from" not in headers or agent not in _BOOTSTRAP_SCHEMES:
        return found
    image, number, line = headers["from"]
    if agent == "docker" and "registry" in headers and not _has_registry(image):
        namespace = headers.get("namespace", ("", 0, ""))[0]
        prefix = "/".join(p for p in (headers["registry"][0].split("://")[-1].strip("/"), namespace.strip("/")) if p)
        image = f"{prefix}/{image}"
    found.add(_image(_BOOTSTRAP_SCHEMES[agent] + image, number, line, f"definition file Bootstrap: {agent}"))
    return found


def _has_registry(image: str) -> bool:
    first = image.split("/")[0]
    return "/" in image and ("." in first or ":" in first or first == "localhost")


def _scheme_via(line: str) -> str:
    lowered = line.lower()
    for tool in ("enroot", "apptainer", "singularity"):
        if tool in lowered:
            return tool
    return "container image URI"


def _image(raw: str, number: int, line: str, via: str) -> Declared | None:
    image = normalise(raw)
    return Declared("image", image, at(number), line.strip()[:MAX_LINE_TEXT], via) if image else None
