"""Chat templates that build their attribute names at render time, and where runtimes find them.

transformers compiles a template in an ``ImmutableSandboxedEnvironment``
(utils/chat_template_utils.py ``_compile_jinja_template``); the sandbox hides ``_``-prefixed
attributes only when the name reaches ``getattr`` as a literal it can check, and a template
escape needs a string that names a dunder. These cases build that string from pieces the lexical
checks do not see as one: ``{% set %}`` variables, ``namespace()`` attributes, ``%`` / ``format``
/ ``join`` / ``replace`` / ``reverse``, and filters that read attributes (``map(attribute=...)``,
``map('attr', ...)``). Payloads are inert strings; nothing here is ever rendered.

Containers follow the loaders: tokenizer_config.json, chat_template.json, ``*.jinja`` files
(``chat_template.jinja``, ``additional_chat_templates/``), processor_config.json and
preprocessor_config.json (ProcessorMixin reads ``chat_template`` from them), and any other JSON
a custom processor might read (found by the key, not the name).
"""

from __future__ import annotations

import json

from tests.corpus.registry import Case, register_all

FAMILY = "chat-template-folding"
RULE = "template-injection"

# name -> (template, why a loader/renderer would reach Python internals)
HOSTILE: dict[str, tuple[str, str]] = {
    "set-variable-key": (
        "{% set u = '_' * 2 %}{% set k = u ~ 'class' ~ u %}{{ messages[k] }}",
        "a subscript is getattr in Jinja; the key is a variable built from '_' * 2"),
    "percent-chars": (
        "{% set u = '%c%c' % (95, 95) %}{% set k = u ~ 'init' ~ u %}{{ (messages|first)[k] }}",
        "'%c' % 95 builds the underscores no literal holds"),
    "format-method": (
        "{% set k = '{}{}globals{}{}'.format('_', '_', '_', '_') %}{{ x[k] }}",
        "str.format fills the dunder in at render time"),
    "format-filter": (
        "{% set k = '%s%sclass%s%s'|format('_', '_', '_', '_') %}{{ messages[k] }}",
        "jinja's format filter is printf-style"),
    "join-list": (
        "{% set k = ['_', '_', 'cla', 'ss', '_', '_']|join %}{{ messages[k] }}",
        "the name is a list joined at render time"),
    "reverse-filter": (
        "{% set k = '_' * 2 ~ ('ssalc'|reverse) ~ '_' * 2 %}{{ messages[k] }}",
        "reverse turns a harmless-looking string into the dunder"),
    "replace-filter": (
        "{% set k = 'XXmroXX'|replace('X', '_') %}{{ messages[k] }}",
        "replace turns placeholders into underscores"),
    "namespace-accumulator": (
        "{% set ns = namespace(k='') %}{% for p in ['_', '_', 'base', '_', '_'] %}"
        "{% set ns.k = ns.k ~ p %}{% endfor %}{{ messages[ns.k] }}",
        "a namespace attribute accumulates the name across loop turns"),
    "map-attribute-computed": (
        "{{ messages|map(attribute=('_' * 2) ~ 'class' ~ ('_' * 2))|list }}",
        "map(attribute=...) reads the attribute through environment.getattr"),
    "map-attr-filter": (
        "{% set n = 'po' ~ 'pen' %}{{ messages|map('attr', n)|list }}",
        "map('attr', name) applies the attr filter to every item"),
    "alias-gadget": (
        "{% set c = cycler %}{{ c.next }}",
        "cycler's methods lead to its module globals; aliasing hides the name"),
}

# Benign templates that use the same constructs on ordinary data.
BENIGN: dict[str, str] = {
    "namespace-and-join": (
        "{%- set ns = namespace(system='', tools=[]) %}"
        "{%- for m in messages if m.role == 'system' %}{%- set ns.system = ns.system ~ m.content %}{%- endfor %}"
        "{{- '<|system|>' ~ ns.system ~ '<|end|>' }}"
        "{%- for m in messages|selectattr('role', 'ne', 'system') %}"
        "{{- '<|%s|>%s<|end|>'|format(m.role, m.content) }}{%- endfor %}"
        "{{- (messages|map(attribute='role')|unique|list)|join(',') }}"),
    "tool-names": (
        "{%- if tools %}{{- 'Tools: ' + (tools|map(attribute='function.name')|join(', ')) }}{%- endif %}"
        "{%- for m in messages %}{{- '[' ~ m['role']|upper ~ '] ' ~ m['content']|trim }}{%- endfor %}"),
}


def _tokenizer_config(template: str) -> bytes:
    return json.dumps({"bos_token": "<s>", "chat_template": template}).encode()


def _containers(template: str) -> dict[str, dict[str, bytes]]:
    """Where a runtime (or a custom processor) would load the same template from."""
    named = json.dumps({"chat_template": [{"name": "default", "template": template}]}).encode()
    escaped = b'{"chat\\u005ftemplate": ' + json.dumps(template).encode() + b"}"  # json.load unescapes the key
    return {
        "tokenizer-config": {"tokenizer_config.json": _tokenizer_config(template)},
        "jinja-file": {"additional_chat_templates/tools.jinja": template.encode()},
        "preprocessor-config": {"preprocessor_config.json": named},
        "any-json": {"video_processing_config.json": escaped},
    }


def _hostile() -> list[Case]:
    cases = [Case(FAMILY, name, "hostile", lambda t=template: {"tokenizer_config.json": _tokenizer_config(t)},
                  why=why, rule=RULE) for name, (template, why) in HOSTILE.items()]
    template = HOSTILE["set-variable-key"][0]
    for where, files in _containers(template).items():
        if where != "tokenizer-config":
            cases.append(Case("chat-template-containers", where, "hostile", lambda f=files: f,
                              why="transformers/processors load chat_template from this file", rule=RULE))
    return cases


def _benign() -> list[Case]:
    return [Case(FAMILY, f"benign-{name}", "benign", lambda t=template: {"tokenizer_config.json": _tokenizer_config(t)},
                 why="ordinary template constructs on message data", vendor="approve")
            for name, template in BENIGN.items()]


register_all(_hostile() + _benign())
