"""Chat templates that build dunders at render time (tests/corpus/repo_templates.py) are found,
in every container a runtime loads one from; benign templates using the same constructs are not."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.scanners.text_rules.jinja_checks import injection_evidence, parse
from app.core.scanners.text_rules.jinja_fold import MAX_CHARS, Folder
from tests.corpus import repo_templates as corpus
from tests.unit.core.scanners.test_template_scanner import by_rule, vet_files, worst


@pytest.mark.parametrize("name", sorted(corpus.HOSTILE))
def test_built_names_are_injection(tmp_path: Path, name: str) -> None:
    template, _why = corpus.HOSTILE[name]
    report = vet_files(tmp_path, {"tokenizer_config.json": corpus._tokenizer_config(template)})
    [finding] = by_rule(report, "template-injection")
    assert finding.severity is Severity.CRITICAL


@pytest.mark.parametrize("where", sorted(corpus._containers("")))
def test_templates_are_found_wherever_a_runtime_loads_them(tmp_path: Path, where: str) -> None:
    files = corpus._containers(corpus.HOSTILE["set-variable-key"][0])[where]
    report = vet_files(tmp_path, files)
    [finding] = by_rule(report, "template-injection")
    assert finding.path == next(iter(files))


@pytest.mark.parametrize("name", sorted(corpus.BENIGN))
def test_benign_templates_with_the_same_constructs_are_clean(tmp_path: Path, name: str) -> None:
    report = vet_files(tmp_path, {"tokenizer_config.json": corpus._tokenizer_config(corpus.BENIGN[name])})
    assert worst(report) is Severity.INFO


def test_other_json_without_the_key_is_not_a_template_container(tmp_path: Path) -> None:
    report = vet_files(tmp_path, {"config.json": b'{"architectures": ["LlamaForCausalLM"]}',
                                  "broken.json": b'{"chat_template": '})
    assert report.findings == ()


def _fold(source: str) -> list[str]:
    template = parse("{% set out = " + source + " %}")
    folder = Folder(template)
    return sorted(str(v) for v in folder.env.get("out", frozenset()))


@pytest.mark.parametrize(("source", "expected"), [
    ("'a' ~ 1", "a1"), ("'ab' * 2", "abab"), ("'%s-%d' % ('x', 3)", "x-3"), ("'%c' % 95", "_"),
    ("['a', 'b']|join('-')", "a-b"), ("'-'.join(['a', 'b'])", "a-b"), ("'AbC'|lower", "abc"),
    ("'abc'|reverse", "cba"), ("'abc'[::-1]", "cba"), ("'abc'[1]", "b"), ("'{}{}'.format('a', 'b')", "ab"),
    ("'a.b'|replace('.', '_')", "a_b"), ("'x' if cond else 'y'", "x"),
])
def test_folding_is_python_string_semantics(source: str, expected: str) -> None:
    assert expected in _fold(source)


def test_folding_is_bounded_and_never_walks_attributes() -> None:
    assert _fold(f"'x' * {MAX_CHARS + 1}") == []
    assert _fold("'{0.__class__}'.format('a')") == []  # format fields that walk attributes are not folded
    assert _fold("unknown ~ 'a'") == []


def test_evidence_says_what_was_built() -> None:
    evidence = injection_evidence(parse(corpus.HOSTILE["reverse-filter"][0]))
    assert "line 1: expression builds '__class__'" in evidence


def test_a_template_too_big_to_fold_fails_closed() -> None:
    # Each `set` doubles the candidate values (capped), so padding cannot hide a built name for free.
    pad = "".join("{% set a = a ~ (a if c else 'z') %}" for _ in range(3000))
    evidence = injection_evidence(parse("{% set a = 'x' if c else 'y' %}" + pad + "{{ m[a] }}"))
    assert any("more string combinations than hfvet folds" in e for e in evidence)
