"""judge(): each Declared kind through the links scanner's existing rules and helpers."""

from __future__ import annotations

import pytest

from app.core.scanners.text_rules.declared import Declared, DeclaredKind
from app.core.scanners.text_rules.judge import judge
from app.core.scanners.text_rules.upstreams import load_upstreams


def _judge(kind: DeclaredKind, value: str, via: str = "test") -> list[tuple[str, str | None]]:
    return [(j.rule, j.source) for j in judge(Declared(kind, value, "line 1", value, via), load_upstreams())]


@pytest.mark.parametrize(("kind", "value", "expected"), [
    ("git", "git+https://github.com/someone/vllm@dsv4", [("forked-code", "github.com/someone/vllm")]),
    ("git", "https://github.com/someone/fast-infer", [("unknown-code-install", "github.com/someone/fast-infer")]),
    ("git", "https://github.com/vllm-project/vllm", [("upstream-link", None)]),
    ("url", "https://example.invalid/kern-1.0-cp311-linux_x86_64.whl",
     [("binary-download", "example.invalid/kern-1.0-cp311-linux_x86_64.whl")]),
    ("url", "https://bit.ly/3dsv4", [("redirect-url", "bit.ly/3dsv4")]),
    ("index", "https://pypi.example.invalid/simple", [("untrusted-package-index", "pypi.example.invalid/simple")]),
    ("index", "https://download.pytorch.org/whl/cu128", []),
    ("index", "pypi.example.invalid", [("untrusted-package-index", "pypi.example.invalid")]),
    ("index", "oci://registry.example.invalid/charts",
     [("untrusted-package-index", "registry.example.invalid/charts")]),
    ("channel", "canada-quant/label/dev", [("untrusted-package-index", "anaconda.org/canada-quant/label/dev")]),
    ("channel", "conda-forge", []),
    ("image", "ghcr.io/Someone/vllm:dsv4", [("untrusted-container-image", "ghcr.io/someone/vllm")]),
    ("image", "ubuntu:24.04", []),
    ("image", "library://someone/col/img:1", [("untrusted-container-image", "library://someone/col/img")]),
    ("package", "transfomers==4.50", [("typosquat-package", None)]),
    ("package", "transformers>=4.50", []),
    ("hub", "someone/model", []),
])
def test_each_kind(kind: DeclaredKind, value: str, expected: list[tuple[str, str | None]]) -> None:
    assert _judge(kind, value) == expected


def test_conda_package_names_are_not_judged_as_pypi_names() -> None:
    assert _judge("package", "transfomers", via="environment.yml conda dependencies") == []


def test_the_key_is_the_value_the_line_checks_use() -> None:
    (hit,) = judge(Declared("git", "git+https://github.com/someone/vllm@x", "line 1", "", "v"), load_upstreams())
    assert hit.key == "git+https://github.com/someone/vllm@x"
    (squat,) = judge(Declared("package", "vlllm>=1", "line 1", "", "v"), load_upstreams())
    assert squat.key == "vlllm"
