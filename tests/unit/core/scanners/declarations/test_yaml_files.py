"""Helm (Chart.yaml `dependencies[].repository`, helm.sh/docs/helm/helm_dependency; values
`image:` mappings joined as Bitnami's common.images.image helper does), docker compose
(`services.*.image`, `build:` from a git URL: docs.docker.com/compose/compose-file/build) and
Kubernetes/KServe manifests (`containers[].image`), plus the YAML limits."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml

from app.core.scanners.text_rules.declarations import read_declarations, yaml_files
from app.core.scanners.text_rules.declarations.yaml_nodes import MAX_DEPTH, nesting_bound, walk
from tests.unit.core.scanners.declarations.helpers import pairs


def test_chart_repositories() -> None:
    text = ("apiVersion: v2\nname: serve\ndependencies:\n  - name: redis\n    repository: https://charts.example.invalid\n"
            "  - name: vllm\n    repository: oci://registry.example.invalid/charts\n"
            "  - name: local\n    repository: file://../local\n  - name: aliased\n    repository: '@stable'\n")
    found = read_declarations("charts/serve/Chart.yaml", text)
    assert pairs(found) == [("index", "https://charts.example.invalid"), ("index", "oci://registry.example.invalid/charts")]
    assert found[1].via == "helm chart repository" and found[1].where == "line 7"


def test_helm_values_image_mappings() -> None:
    text = ("image:\n  registry: ghcr.io\n  repository: someone/vllm\n  tag: 0.9.1\n"
            "sidecar:\n  image:\n    repository: busybox\n    tag: '1.36'\n"
            "pinned:\n  image:\n    registry: nvcr.io\n    repository: nim/x\n    tag: '1'\n"
            "    digest: sha256:" + "a" * 64 + "\n"
            "thumbnail:\n  image: assets/logo.png\nfeatures:\n  image: {_type: Image}\n")
    assert [v for k, v in pairs(read_declarations("values.yaml", text))] == [
        "ghcr.io/someone/vllm:0.9.1", "busybox:1.36", "nvcr.io/nim/x@sha256:" + "a" * 64]


def test_global_image_registry_overrides_every_mapping() -> None:
    text = ("global:\n  imageRegistry: registry.example.invalid\n"
            "image:\n  registry: docker.io\n  repository: vllm/vllm-openai\n")
    found = read_declarations("values-prod.yaml", text)
    assert pairs(found) == [("image", "registry.example.invalid/vllm/vllm-openai")]
    text = "global:\n  image:\n    registry: registry.example.invalid\nimage:\n  repository: app\n"
    assert pairs(read_declarations("values.yaml", text)) == [("image", "registry.example.invalid/app")]


def test_compose_images_and_build_contexts() -> None:
    text = ("services:\n  api:\n    image: ghcr.io/someone/vllm:dsv4\n  worker:\n"
            "    build: https://github.com/someone/worker.git#main\n  tool:\n    build:\n"
            "      context: https://example.invalid/tool.tar.gz\n  local:\n    build: ./svc\n")
    found = read_declarations("docker-compose.yml", text)
    assert pairs(found) == [("image", "ghcr.io/someone/vllm:dsv4"), ("url", "https://github.com/someone/worker.git#main"),
                            ("url", "https://example.invalid/tool.tar.gz")]
    assert found[0].where == "line 3"


def test_kubernetes_and_kserve_multi_document_manifests() -> None:
    text = ("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - name: a\n      image: someone/server:1\n---\n"
            "apiVersion: serving.kserve.io/v1alpha1\nkind: ServingRuntime\nspec:\n  containers:\n"
            "    - name: kserve-container\n"
            "      image: \"registry.example.invalid:5000/rt/vllm@sha256:" + "b" * 64 + "\"\n")
    assert [v for _k, v in pairs(read_declarations("k8s/deploy.yaml", text))] == [
        "someone/server:1", "registry.example.invalid:5000/rt/vllm@sha256:" + "b" * 64]


def test_image_like_values_that_are_not_images() -> None:
    text = "image: ${IMAGE}\nimage2:\n  image: '{{ .Values.image }}'\nlist:\n  - image: true\n  - image: ./x.sqsh\n"
    assert list(read_declarations("x.yaml", text)) == []


def test_helm_templates_that_do_not_parse_are_no_error() -> None:
    found = read_declarations("templates/deploy.yaml", "{{- if .Values.x }}\nimage: {{ .Values.image }}\n{{- end }}\n")
    assert found.error is None


def test_alias_bombs_stay_cheap(monkeypatch: pytest.MonkeyPatch) -> None:
    # 4^29 paths lead to a0's two entries; an alias is the same node again, and the walk visits each node once.
    lines = ["a0: &a0 [image: someone/x:1, image: someone/x:1]"]
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]" for i in range(1, 30)]
    walked: list[str] = []

    def counted(roots: list[yaml.Node]) -> Iterator[tuple[str, yaml.Node, yaml.Node]]:
        for entry in walk(roots):
            walked.append(entry[0])
            yield entry

    monkeypatch.setattr(yaml_files, "walk", counted)
    found = read_declarations("bomb.yaml", "\n".join(lines) + "\n")
    assert len(walked) == 30 + 2  # the top-level keys a0..a29, then a0's two image entries, once each
    assert [d.value for d in found] == ["someone/x:1", "someone/x:1"]


def test_deep_nesting_is_refused_before_the_parser_sees_it() -> None:
    # libyaml's composer recurses without a bound and crashes the process on ~10^5 levels.
    deep = "a: " + "[" * 200_000 + "]" * 200_000 + "\n"
    assert nesting_bound(deep) > MAX_DEPTH
    found = read_declarations("environment.yml", deep)
    assert list(found) == [] and found.error and "nesting" in found.error
    block = "".join(" " * i + f"k{i}:\n" for i in range(MAX_DEPTH + 5))
    assert read_declarations("values.yaml", block).error is None  # not a declaration file by name: silent


def test_nesting_bound_is_an_upper_bound() -> None:
    assert nesting_bound("a:\n  - b: [1, {c: 2}]\n") >= 4
    assert nesting_bound("- - - - x\n") >= 4
    assert nesting_bound("url: https://x.example.invalid/a\n# ----------\n") < 10
