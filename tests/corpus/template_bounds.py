"""Chat templates that exhaust a renderer, and role aliases / prose that only look like injection.

Render cost: transformers renders chat templates in jinja2's ``ImmutableSandboxedEnvironment``
(``utils/chat_template_utils.py`` ``_compile_jinja_template``). The sandbox's only resource
guard is ``jinja2/sandbox.py`` ``safe_range``: ``range()`` past ``MAX_RANGE`` (100,000) raises.
Loops nested under the cap, ``*`` on strings, ``**`` on integers, padding filters, namespace
variables doubled in a loop and macros that call themselves are not bounded by anything; llama.cpp
(minja) renders the same templates from GGUF metadata. Nothing here is ever rendered.

Role aliases and prose: templates map roles (``{'assistant': 'model'}``, ``'sys' ~ 'tem'``) and
system prompts mention dunders in text; that text is printed, compared or used as a label, never
looked up as an attribute, so it is not injection. The hostile twins send the same strings where
Jinja does look attributes up (a subscript key, a macro's subscript, a ``{% set %}`` block).
"""

from __future__ import annotations

import json

from tests.corpus.registry import Case, register_all

COST_FAMILY = "chat-template-render-cost"
ALIAS_FAMILY = "chat-template-role-alias"

# name -> (template, why rendering it exhausts CPU or memory)
COSTLY: dict[str, tuple[str, str]] = {
    "nested-ranges": (
        "{% for i in range(99999) %}{% for j in range(99999) %}{{ i }}{% endfor %}{% endfor %}",
        "each range() is under the sandbox's MAX_RANGE; nested they run 10^10 turns"),
    "string-repeat": (
        "{{ 'A' * 10**9 }}", "str * int allocates a gigabyte string; the sandbox does not intercept *"),
    "namespace-doubling": (
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"
        "{{ ns.s|length }}",
        "a namespace attribute survives loop turns: doubled 64 times"),
    "unrolled-doubling": (
        "{% set s = 'abcd' %}" + "{% set s = s ~ s %}" * 40 + "{{ s|length }}",
        "forty sets each doubling the same string: 4 TiB"),
    "self-recursive-macro": (
        "{% macro f(n) %}{{ f(n) }}{{ f(n) }}{% endmacro %}{{ f(1) }}",
        "each call makes two: 2^depth calls until the recursion limit"),
    "join-of-range": (
        "{{ range(99999)|join('-' * 10000) }}", "a join inserts a 10,000-character separator 99,998 times"),
    "messages-nested-deep": (
        "{% for a in messages %}{% for b in messages %}{% for c in messages %}{% for d in messages %}"
        "{{ d.content }}{% endfor %}{% endfor %}{% endfor %}{% endfor %}",
        "four loops over the conversation: 10^12 turns for a 1,000-message chat"),
    "padding-filter": (
        "{{ messages[0].content|center(2000000000) }}", "center() pads to two billion characters"),
    "big-power": ("{{ 10 ** 200000000 }}", "** builds a 200-million-digit integer"),
    "printf-width": ("{{ '%0999999999d' % 1 }}", "a printf width of a billion characters"),
}

# Role aliases and prose: printed or compared, never an attribute name.
ALIASES: dict[str, str] = {
    "concat-role-label": (
        "{% set sys = 'sys' ~ 'tem' %}{% for m in messages %}"
        "<|{{ sys if m.role == sys else m.role }}|>{{ m.content }}<|end|>{% endfor %}"),
    "alias-dict": (
        "{% set roles = {'assistant': 'model', 'system': 'user', 'user': 'user'} %}"
        "{% for m in messages %}{{ '<start_of_turn>' ~ roles[m.role] ~ '\\n' ~ m.content ~ '<end_of_turn>\\n' }}"
        "{% endfor %}"),
    "role-loop-macro": (
        "{% macro tag(r) %}<|{{ r }}|>{% endmacro %}{% for r in ['system', 'user', 'assistant'] %}"
        "{% set label = r %}{{ tag(label) }}{% endfor %}{{ tag('sys' ~ 'tem') }}"),
    "dunder-prose": (
        "{{ 'You are a Python tutor. Explain __init__, __call__ and __slots__ when asked.\\n' }}"
        "{% set d = '_' * 2 %}{{ 'Special methods look like ' ~ d ~ 'name' ~ d ~ '.' }}"
        "Dunder text such as __class__ in the template body is prose.{% for m in messages %}{{ m.content }}"
        "{% endfor %}"),
}

# The same strings sent where Jinja looks attributes up (each critical template-injection).
ALIAS_HOSTILE: dict[str, tuple[str, str]] = {
    "macro-subscript": (
        "{% macro g(o, k) %}{{ o[k] }}{% endmacro %}{{ g(messages, '__class__') }}",
        "the macro subscripts its argument: o[k] is getattr(o, '__class__') in Jinja"),
    "set-block-key": (
        "{% set k %}__class__{% endset %}{{ messages[k] }}",
        "a {% set %} block captures template text as a string, then used as a key"),
    "macro-output-key": (
        "{% macro k() %}__init__{% endmacro %}{{ cycler[k()] }}",
        "a macro's output is its return value; used as a key it is an attribute name"),
    "call-block-default": (
        "{% macro m() %}{{ caller() }}{% endmacro %}{% call(k='__class__') m() %}{{ messages[k] }}{% endcall %}",
        "a default of caller's parameter flows into the key"),
    "format-field": (
        "{{ '{0.__class__}'.format(messages) }}", "str.format fields walk attributes"),
}


def tokenizer_config(template: str) -> bytes:
    return json.dumps({"bos_token": "<s>", "chat_template": template}).encode()


def _cases() -> list[Case]:
    cases = [Case(COST_FAMILY, name, "hostile", lambda t=template: {"tokenizer_config.json": tokenizer_config(t)},
                  why=why, rule="template-render-cost") for name, (template, why) in COSTLY.items()]
    cases += [Case(ALIAS_FAMILY, name, "hostile", lambda t=template: {"tokenizer_config.json": tokenizer_config(t)},
                   why=why, rule="template-injection") for name, (template, why) in ALIAS_HOSTILE.items()]
    cases += [Case(ALIAS_FAMILY, f"benign-{name}", "benign",
                   lambda t=template: {"tokenizer_config.json": tokenizer_config(t)},
                   why="role labels and prose are printed or compared, never looked up", vendor="approve")
              for name, template in ALIASES.items()]
    return cases


register_all(_cases())
