"""YAML that declares sources: conda environment files, Helm ``Chart.yaml`` dependencies, and
container images under ``image:`` keys (docker compose, Kubernetes, KServe, Helm values).

- conda (conda/env/specs, ``conda env create -f``): ``channels`` are searched in order ahead of
  the defaults; a ``channel::name`` spec pins one package to a channel; a ``pip:`` entry of
  ``dependencies`` is written to a requirements file and run as ``pip install -r``, so every
  requirements-file line (``--extra-index-url``, ``-e git+...``) works there. ``nodefaults`` is no channel.
- Helm (``helm dependency update``): each ``dependencies[].repository`` of Chart.yaml (Helm 2:
  requirements.yaml) is a chart repository (``https://``) or an OCI registry (``oci://``) whose
  charts, templates and images are installed; ``file://`` and ``@alias`` name local config only.
- compose ``image:`` strings, Kubernetes/KServe ``containers[].image``, Helm values ``image:``
  mappings (``images.helm_image``), and compose ``build:`` contexts given as git or archive URLs.
"""

from __future__ import annotations

import yaml

from app.core.scanners.text_rules.declarations import requirements
from app.core.scanners.text_rules.declarations.common import MAX_LINE_TEXT, Reading, at, is_url, source_kind
from app.core.scanners.text_rules.declarations.images import helm_image, normalise
from app.core.scanners.text_rules.declarations.yaml_nodes import items, line, mapping, scalar, walk
from app.core.scanners.text_rules.declared import Declared

_STR = "tag:yaml.org,2002:str"
_IMAGE_KEYS = frozenset({"image", "container_image", "containerImage", "container-image"})


class Lines:
    """The text's lines, for evidence by line number."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def of(self, node: yaml.Node) -> tuple[str, str]:
        number = line(node)
        text = self.lines[number - 1] if 0 < number <= len(self.lines) else ""
        return at(number), text.strip()[:MAX_LINE_TEXT]


def looks_like_conda_env(roots: list[yaml.Node]) -> bool:
    """A top-level ``dependencies`` list holding at least one spec string, beside ``channels`` or ``name``."""
    top = mapping(roots[0]) if roots else {}
    specs = [scalar(item) for item in items(top.get("dependencies"))]
    return any(specs) and ("channels" in top or "name" in top)


def conda_env(roots: list[yaml.Node], lines: Lines, via: str = "environment.yml") -> Reading:
    found = Reading()
    top = mapping(roots[0]) if roots else {}
    for node in items(top.get("channels")):
        channel = scalar(node)
        if channel and channel != "nodefaults":
            found.add(Declared("channel", channel, *lines.of(node), f"{via} channels"))
    for node in items(top.get("dependencies")):
        spec = scalar(node)
        if spec:
            _conda_spec(spec, node, lines, via, found)
        for entry in items(mapping(node).get("pip")):
            pip_line = scalar(entry)
            if pip_line:
                where, _text = lines.of(entry)
                requirements.read_line(pip_line, where, f"{via} pip", found)
    return found


def _conda_spec(spec: str, node: yaml.Node, lines: Lines, via: str, found: Reading) -> None:
    where, text = lines.of(node)
    if is_url(spec):  # an explicit package URL: conda downloads that file
        found.add(Declared(source_kind(spec), spec.split()[0], where, text, f"{via} dependencies"))
        return
    channel, sep, package = spec.partition("::")
    if sep and channel:
        found.add(Declared("channel", channel, where, text, f"{via} {channel}::"))
    name = (package if sep else spec).strip()
    if name:
        found.add(Declared("package", name, where, text, f"{via} conda dependencies"))


def chart_dependencies(roots: list[yaml.Node], lines: Lines) -> Reading:
    found = Reading()
    top = mapping(roots[0]) if roots else {}
    for dependency in items(top.get("dependencies")):
        node = mapping(dependency).get("repository")
        repository = scalar(node)
        if node is not None and repository and repository.lower().startswith(("https://", "http://", "oci://")):
            found.add(Declared("index", repository, *lines.of(node), "helm chart repository"))
    return found


def images(roots: list[yaml.Node], lines: Lines) -> Reading:
    found = Reading()
    registry = _global_registry(roots)
    for key, value, _parent in walk(roots):
        if key in _IMAGE_KEYS or (key == "container" and "/" in (scalar(value) or "")):
            _image(value, registry, lines, found)
        elif key == "build":
            _build_context(value, lines, found)
    return found


def _image(value: yaml.Node, registry: str | None, lines: Lines, found: Reading) -> None:
    text = scalar(value)
    if text is not None and value.tag != _STR:  # `image: true`, `image: null`: YAML says no string
        return
    if text is not None:
        image = normalise(text)
    else:
        fields = {k: v for k, node in mapping(value).items() if (v := scalar(node))}
        image = helm_image(fields, registry) if fields else None
    if image:
        found.add(Declared("image", image, *lines.of(value), "image key"))


def _build_context(value: yaml.Node, lines: Lines, found: Reading) -> None:
    """compose builds from a git repository or archive URL given as ``build:`` or ``build.context``."""
    node = value if scalar(value) is not None else mapping(value).get("context")
    context = scalar(node)
    if node is not None and context and is_url(context):
        found.add(Declared(source_kind(context), context, *lines.of(node), "compose build context"))


def _global_registry(roots: list[yaml.Node]) -> str | None:
    """Helm's ``global.imageRegistry`` (Bitnami) or ``global.image.registry``: overrides every image's registry."""
    glob = mapping(mapping(roots[0]).get("global")) if roots else {}
    return scalar(glob.get("imageRegistry")) or scalar(mapping(glob.get("image")).get("registry")) or None
