"""conda environment files, from conda's environment.yml docs ("Creating an environment file
manually", "Using pip in an environment") and conda's MatchSpec (`channel::name` pins a package
to a channel): channels are searched first; the `pip:` list runs as a requirements file."""

from __future__ import annotations

from app.core.scanners.text_rules.declarations import read_declarations
from tests.unit.core.scanners.declarations.helpers import pairs

ENV = """name: dsv4
channels:
  - canada-quant
  - https://conda.example.invalid/channel
  - conda-forge
  - nodefaults
dependencies:
  - python=3.11
  - canada-quant/label/dev::flash-attn
  - https://conda.example.invalid/linux-64/kern-1.0-0.tar.bz2
  - pip
  - pip:
    - --extra-index-url https://pypi.example.invalid/simple
    - -r requirements.txt
    - vllm @ git+https://github.com/someone/vllm@dsv4
    - transfomers==4.50
"""


def test_channels_specs_and_the_pip_list() -> None:
    found = read_declarations("environment.yml", ENV)
    assert pairs(found) == [
        ("channel", "canada-quant"), ("channel", "https://conda.example.invalid/channel"), ("channel", "conda-forge"),
        ("package", "python=3.11"), ("channel", "canada-quant/label/dev"), ("package", "flash-attn"),
        ("url", "https://conda.example.invalid/linux-64/kern-1.0-0.tar.bz2"), ("package", "pip"),
        ("index", "https://pypi.example.invalid/simple"), ("git", "git+https://github.com/someone/vllm@dsv4"),
        ("package", "transfomers==4.50")]
    extra = next(d for d in found if d.kind == "index")
    assert extra.extra and extra.where == "line 13" and extra.via == "environment.yml pip --extra-index-url"


def test_any_yaml_shaped_like_an_environment_is_read() -> None:
    # conda env create -f takes any file name; the shape (dependencies list + name/channels) decides.
    found = read_declarations("deploy/gpu.yaml", "name: x\ndependencies:\n  - someone::vllm\n")
    assert pairs(found) == [("channel", "someone"), ("package", "vllm")]


def test_yaml_with_dependencies_but_not_an_environment_is_not_read_as_one() -> None:
    found = read_declarations("config.yaml", "dependencies:\n  - a\n  - b\nmodel: x\n")
    assert list(found) == []


def test_flow_style_and_aliases() -> None:
    text = "name: x\nchannels: &c [evil-channel]\nother: *c\ndependencies: [numpy, {pip: [vlllm]}]\n"
    found = read_declarations("environment.yaml", text)
    assert pairs(found) == [("channel", "evil-channel"), ("package", "numpy"), ("package", "vlllm")]


def test_malformed_environment_file_reports_an_error() -> None:
    found = read_declarations("environment.yml", "name: x\ndependencies:\n  - [unclosed\n")
    assert list(found) == [] and found.error and "YAML" in found.error


def test_python_tags_are_never_constructed() -> None:
    # compose only: a !!python/object tag is a node with a tag, never an object.
    text = "name: x\nchannels:\n  - !!python/object/apply:os.system ['echo hfvet-test']\ndependencies:\n  - a\n"
    found = read_declarations("environment.yml", text)
    assert found.error is None and pairs(found) == [("package", "a")]
