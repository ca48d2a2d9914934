"""Render-cost bounds and role-alias folding for chat templates (issue 22, item 7).

Hostile cases (tests/corpus/template_bounds.py) reproduce what jinja2's sandbox leaves unbounded
(``jinja2/sandbox.py``: only ``safe_range`` caps ``range()`` at ``MAX_RANGE``), as transformers
renders them (``utils/chat_template_utils.py`` ``_compile_jinja_template``). Nothing is rendered.
"""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest
from jinja2 import nodes

from app.core.findings import Severity
from app.core.scanners.text_rules.jinja_checks import injection_evidence, parse
from app.core.scanners.text_rules.jinja_cost import MAX_CHARS, MAX_STEPS, RenderCost, render_cost
from tests.corpus import repo_templates, template_bounds
from tests.unit.core.scanners.test_template_scanner import BENIGN, by_rule, vet_files, worst

# Real-world shapes beyond test_template_scanner's: recursive JSON-schema rendering (Hermes-2-Pro
# tool use), a conversation re-scanned per message (Qwen3 "last query" / Command-R tool runs),
# multimodal content parts and tool calls nested in messages (Llama 3.2 vision, MiniMax).
MORE_BENIGN = {
    "hermes-schema-recursion": (
        "{%- macro json_to_python_type(json_spec) %}{%- if json_spec.type == 'array' %}"
        "{{- 'list[' + json_to_python_type(json_spec['items']) + ']' }}{%- elif json_spec.type == 'object' %}"
        "{%- for k, v in json_spec.properties|items %}{{ k }}: {{ json_to_python_type(v) }}{%- endfor %}"
        "{%- else %}{{ json_spec.type }}{%- endif %}{%- endmacro %}{%- for tool in tools %}"
        "{{ tool.function.name }}({% for p, s in tool.function.parameters.properties|items %}"
        "{{ p }}: {{ json_to_python_type(s) }}{% endfor %}){%- endfor %}"
        "{% for m in messages %}{{ m.content }}{% endfor %}"),
    "rescan-per-message": (
        "{% for m in messages %}{% set ns = namespace(found=false) %}{% for later in messages[loop.index0:] %}"
        "{% if later.role == 'user' %}{% set ns.found = true %}{% endif %}{% endfor %}"
        "{{ m.role }}: {{ m.content }}{% endfor %}"),
    "content-parts-and-tool-calls": (
        "{% for m in messages %}{% if m.content is string %}{{ m.content }}{% else %}"
        "{% for part in m.content %}{% if part.type == 'text' %}{{ part.text }}{% else %}<|image|>{% endif %}"
        "{% endfor %}{% endif %}{% for call in m.tool_calls %}{{ call.function.name }}"
        "{{ call.function.arguments|tojson(indent=2) }}{% endfor %}{% endfor %}"),
}


def _all_benign() -> dict[str, str]:
    return {**BENIGN, **repo_templates.BENIGN, **MORE_BENIGN, **template_bounds.ALIASES}


@pytest.mark.parametrize("name", sorted(template_bounds.COSTLY))
def test_costly_templates_are_high(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    template, _why = template_bounds.COSTLY[name]
    compiled: list[object] = []  # rendering needs a compiled template: none may be made
    visits: list[None] = []  # AST nodes the cost bound walks
    visit = RenderCost._visit

    def counted(cost: RenderCost) -> None:
        visits.append(None)
        visit(cost)

    monkeypatch.setattr(jinja2.Environment, "compile", lambda _env, *args, **_kw: compiled.append(args))
    monkeypatch.setattr(RenderCost, "_visit", counted)
    report = vet_files(tmp_path, {"tokenizer_config.json": template_bounds.tokenizer_config(template)})
    assert compiled == []  # judged statically, never rendered
    assert 0 < len(visits) <= _node_count(parse(template))  # each node at most once: loops are multiplied, not run
    [finding] = by_rule(report, "template-render-cost")
    assert finding.severity is Severity.HIGH
    assert "1,000 messages" in finding.message


def _node_count(tree: nodes.Template) -> int:
    return 1 + sum(1 for _node in tree.find_all(nodes.Node))


@pytest.mark.parametrize("name", sorted(_all_benign()))
def test_real_world_templates_stay_well_under_the_bound(name: str) -> None:
    bound = render_cost(parse(_all_benign()[name]))
    assert bound.reason is None
    assert bound.steps < MAX_STEPS / 10 and bound.chars < MAX_CHARS / 2, (bound.steps, bound.chars)


def test_the_bound_names_what_passes_it() -> None:
    assert "steps" in str(render_cost(parse(template_bounds.COSTLY["nested-ranges"][0])).reason)
    assert "characters of a string" in str(render_cost(parse(template_bounds.COSTLY["string-repeat"][0])).reason)
    assert "variable 'ns.s'" in str(render_cost(parse(template_bounds.COSTLY["namespace-doubling"][0])).reason)


def test_loops_just_under_the_cap_are_fine_alone_and_not_nested() -> None:
    assert render_cost(parse("{% for i in range(99999) %}{{ i }}{% endfor %}")).reason is None
    nested = "{% for i in range(9999) %}{% for j in range(99999) %}{{ j }}{% endfor %}{% endfor %}"
    assert render_cost(parse(nested)).reason is not None


def test_recursion_on_the_data_is_bounded_recursion_on_nothing_is_not() -> None:
    walks_down = "{% macro r(x) %}{% for k, v in x|items %}{{ r(v) }}{% endfor %}{% endmacro %}{{ r(tools) }}"
    assert render_cost(parse(walks_down)).reason is None
    counts_down = "{% macro r(n) %}{{ r(n - 1) }}{{ r(n - 1) }}{% endmacro %}{{ r(60) }}"
    assert render_cost(parse(counts_down)).reason is not None


@pytest.mark.parametrize("name", sorted(template_bounds.ALIASES))
def test_role_aliases_and_prose_are_not_injection(tmp_path: Path, name: str) -> None:
    template = template_bounds.ALIASES[name]
    assert injection_evidence(parse(template)) == []
    report = vet_files(tmp_path, {"tokenizer_config.json": template_bounds.tokenizer_config(template)})
    assert worst(report) is Severity.INFO


@pytest.mark.parametrize("name", sorted(template_bounds.ALIAS_HOSTILE))
def test_the_same_strings_used_as_attribute_names_stay_critical(tmp_path: Path, name: str) -> None:
    template, _why = template_bounds.ALIAS_HOSTILE[name]
    report = vet_files(tmp_path, {"tokenizer_config.json": template_bounds.tokenizer_config(template)})
    [finding] = by_rule(report, "template-injection")
    assert finding.severity is Severity.CRITICAL


@pytest.mark.parametrize("template", [
    "{% set role = '__cla' ~ 'ss__' %}{{ messages[role] }}",  # an alias that builds a dunder, used as key
    "{% set n = '__glo' ~ 'bals__' %}{{ messages|attr(n) }}",
    "{{ cycler.__init__.__globals__.os.popen('echo pwned') }}",
    "{% set k = 'po' ~ 'pen' %}{{ messages|map('attr', k)|list }}",
    "{{ foo('__globals__') }}",  # a callable hfvet does not follow: counted as a lookup
])
def test_real_injections_stay_critical(template: str) -> None:
    assert injection_evidence(parse(template))


def test_an_undefined_product_does_not_hide_the_rest() -> None:
    # '' * 10**400 is 0 x infinity in the bound (NaN): it must not make later costs incomparable.
    nested = "{% for i in range(99999) %}{% for j in range(99999) %}x{% endfor %}{% endfor %}"
    assert render_cost(parse("{{ '' * 10 ** 400 }}" + nested)).reason is not None
