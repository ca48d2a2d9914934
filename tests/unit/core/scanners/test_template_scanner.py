"""TemplateScanner: chat templates in JSON configs, .jinja files and GGUF metadata. Parsed, never rendered."""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Sequence
from pathlib import Path

import gguf
import numpy as np
import pytest

from app.core.findings import Finding, Severity
from app.core.pipeline import VetOptions, vet
from app.core.report import Report
from app.core.scanners.template_scanner import TemplateScanner
from app.sources.local import LocalSource

# ---- real-world-like benign templates --------------------------------------------------------

LLAMA3 = """{{- bos_token }}
{%- if custom_tools is defined %}{%- set tools = custom_tools %}{%- endif %}
{%- if not date_string is defined %}
    {%- if strftime_now is defined %}{%- set date_string = strftime_now("%d %b %Y") %}
    {%- else %}{%- set date_string = "26 Jul 2024" %}{%- endif %}
{%- endif %}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content']|trim %}
    {%- set messages = messages[1:] %}
{%- else %}{%- set system_message = "" %}{%- endif %}
{{- "<|start_header_id|>system<|end_header_id|>\\n\\n" }}
{{- "Today Date: " + date_string + "\\n\\n" }}{{- system_message }}{{- "<|eot_id|>" }}
{%- for message in messages %}
    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}
        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'
            + message['content'] | trim + '<|eot_id|>' }}
    {%- elif 'tool_calls' in message %}
        {%- if not message.tool_calls|length == 1 %}
            {{- raise_exception("This model only supports single tool-calls at once!") }}
        {%- endif %}
        {%- set tool_call = message.tool_calls[0].function %}
        {{- '{"name": "' + tool_call.name + '", "parameters": ' }}
        {{- tool_call.arguments | tojson }}{{- "}<|eot_id|>" }}
    {%- elif message.role == "tool" or message.role == "ipython" %}
        {{- "<|start_header_id|>ipython<|end_header_id|>\\n\\n" }}
        {%- if message.content is mapping or message.content is iterable %}{{- message.content | tojson }}
        {%- else %}{{- message.content }}{%- endif %}{{- "<|eot_id|>" }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}
"""

QWEN3 = """{%- if tools %}
    {{- '<|im_start|>system\\n' }}
    {%- if messages[0].role == 'system' %}{{- messages[0].content + '\\n\\n' }}{%- endif %}
    {{- "# Tools\\n\\n<tools>" }}
    {%- for tool in tools %}{{- "\\n" }}{{- tool | tojson }}{%- endfor %}
    {{- "\\n</tools><|im_end|>\\n" }}
{%- endif %}
{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}
{%- for message in messages[::-1] %}
    {%- set index = (messages|length - 1) - loop.index0 %}
    {%- if ns.multi_step_tool and message.role == "user"
          and not(message.content.startswith('<tool_response>')) %}
        {%- set ns.multi_step_tool = false %}
        {%- set ns.last_query_index = index %}
    {%- endif %}
{%- endfor %}
{%- for message in messages %}
    {%- if message.role == "user" or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}
    {%- elif message.role == "assistant" %}
        {%- set content = message.content.split('</think>')[-1].lstrip('\\n') %}
        {{- '<|im_start|>' + message.role + '\\n' + content }}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}
            {{- '\\n<tool_call>\\n{"name": "' }}{{- tool_call.name }}{{- '", "arguments": ' }}
            {%- if tool_call.arguments is string %}{{- tool_call.arguments }}
            {%- else %}{{- tool_call.arguments | tojson }}{%- endif %}{{- '}\\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\\n' }}
    {%- elif message.role == "tool" %}
        {%- if loop.first or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\\n<tool_response>\\n' }}{{- message.content }}{{- '\\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}{{- '<|im_end|>\\n' }}{%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}
"""

CHATML_WITH_GENERATION = """{% for message in messages %}
{%- if message['role'] == 'assistant' %}<|im_start|>assistant
{% generation %}{{ message['content'] }}<|im_end|>{% endgeneration %}
{% else %}<|im_start|>{{ message['role'] }}
{{ message['content'] }}<|im_end|>
{% endif %}{% if loop.index > 64 %}{% break %}{% endif %}
{%- endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""

BENIGN = {"llama3": LLAMA3, "qwen3": QWEN3, "chatml": CHATML_WITH_GENERATION}

# ---- hostile templates (inert payloads; nothing is ever rendered) ----------------------------

HOSTILE = {
    "template-reference":
        "{{ self._TemplateReference__context.cycler.__init__.__globals__.os.popen('echo pwned').read() }}",
    "lipsum": "{{ lipsum.__globals__['os'].popen('echo pwned').read() }}",
    "cycler": "{% for m in messages %}{{ cycler.__init__.__globals__.os.popen('echo pwned') }}{% endfor %}",
    "mro": "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "attr-filter-escaped": "{{ messages|attr('\\x5f\\x5fclass\\x5f\\x5f') }}",
    "namespace": "{% set ns = namespace(a=1) %}{{ namespace.__init__.__globals__ }}",
    "computed-key": "{{ messages[('_' * 2) ~ 'class' ~ ('_' * 2)] }}",
    "import": "{% import 'os' as os %}{{ os.popen('echo pwned') }}",
    "joiner-builtins": "{{ joiner.__init__.__globals__.__builtins__.eval('1') }}",
    "flask-request": "{{ request.application }}",
    "flask-config": "{{ config.items() }}",
    "subscript-private": "{{ messages['_private'] }}",
}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def vet_files(tmp_path: Path, files: dict[str, bytes]) -> Report:
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    return vet(LocalSource(tmp_path), [TemplateScanner()], options=VetOptions(workers=1))


def by_rule(report: Report, rule: str) -> list[Finding]:
    return [f for f in report.findings if f.rule == rule]


def worst(report: Report) -> Severity:
    return max((f.severity for f in report.findings), key=lambda s: s.rank, default=Severity.INFO)


# ---- JSON configs and .jinja files -----------------------------------------------------------

@pytest.mark.parametrize("name", sorted(BENIGN))
def test_real_world_templates_are_clean_and_hashed(tmp_path: Path, name: str) -> None:
    config = {"bos_token": "<s>", "chat_template": BENIGN[name], "model_max_length": 8192}
    report = vet_files(tmp_path, {"tokenizer_config.json": json.dumps(config).encode()})
    [info] = report.findings
    assert (info.rule, info.severity, info.member) == ("chat-template", Severity.INFO, "chat_template")
    assert info.evidence == f"chat_template sha256:{sha(BENIGN[name])}"
    assert report.files[0].scanned


def test_named_template_list_and_jinja_files(tmp_path: Path) -> None:
    config = {"chat_template": [{"name": "default", "template": QWEN3},
                                {"name": "tool_use", "template": LLAMA3}]}
    report = vet_files(tmp_path, {
        "tokenizer_config.json": json.dumps(config).encode(),
        "chat_template.jinja": CHATML_WITH_GENERATION.encode(),
        "additional_chat_templates/rag.jinja": LLAMA3.encode(),
        "chat_template.json": json.dumps({"chat_template": QWEN3}).encode(),
    })
    assert worst(report) is Severity.INFO
    members = {(f.path, f.member) for f in by_rule(report, "chat-template")}
    assert members == {
        ("tokenizer_config.json", "chat_template[default]"),
        ("tokenizer_config.json", "chat_template[tool_use]"),
        ("chat_template.jinja", "chat_template.jinja"), ("additional_chat_templates/rag.jinja", "rag.jinja"),
        ("chat_template.json", "chat_template"),
    }


def test_config_without_a_template_is_clean(tmp_path: Path) -> None:
    report = vet_files(tmp_path, {"tokenizer_config.json": b'{"model_max_length": 2048}'})
    assert report.findings == ()
    assert report.files[0].scanned


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_injection_templates_are_critical(tmp_path: Path, name: str) -> None:
    config = {"chat_template": [{"name": "default", "template": QWEN3},
                                {"name": "evil", "template": HOSTILE[name]}]}
    report = vet_files(tmp_path, {"tokenizer_config.json": json.dumps(config).encode()})
    [finding] = by_rule(report, "template-injection")
    assert finding.severity is Severity.CRITICAL
    assert finding.member == "chat_template[evil]"
    assert finding.evidence


def test_templates_keyed_by_name_are_checked(tmp_path: Path) -> None:
    # transformers keeps a {name: template} chat_template as it is and renders "default" from it.
    config = {"chat_template": {"default": HOSTILE["lipsum"], "tool_use": QWEN3}}
    report = vet_files(tmp_path, {"tokenizer_config.json": json.dumps(config).encode()})
    [finding] = by_rule(report, "template-injection")
    assert finding.member == "chat_template[default]"
    assert len(by_rule(report, "chat-template")) == 2


def test_injection_evidence_names_the_gadget(tmp_path: Path) -> None:
    report = vet_files(tmp_path, {"chat_template.jinja": HOSTILE["lipsum"].encode()})
    [finding] = by_rule(report, "template-injection")
    assert finding.evidence is not None
    assert "'__globals__'" in finding.evidence
    assert "call to popen()" in finding.evidence


def test_unparseable_template_is_medium(tmp_path: Path) -> None:
    report = vet_files(tmp_path, {"chat_template.jinja": b"{% for m in %}{{ m }}{% endfor %}"})
    [bad] = by_rule(report, "template-unparseable")
    assert bad.severity is Severity.MEDIUM
    assert "line 1" in bad.message
    assert len(by_rule(report, "chat-template")) == 1  # still hashed


@pytest.mark.parametrize(
    "raw", [b"{not json", b"[1, 2]", b'{"chat_template": 42}', b'{"chat_template": [{"name": "x"}]}'],
)
def test_unreadable_config_is_not_silently_clean(tmp_path: Path, raw: bytes) -> None:
    report = vet_files(tmp_path, {"tokenizer_config.json": raw})
    assert [f.rule for f in report.findings] == ["template-unparseable"]


def test_oversized_template_file_hits_the_limit(tmp_path: Path) -> None:
    (tmp_path / "chat_template.jinja").write_bytes(b"x" * (4 * 1024 * 1024 + 1))
    report = vet(LocalSource(tmp_path), [TemplateScanner()], options=VetOptions(workers=1))
    assert [(f.rule, f.severity) for f in report.findings] == [("limit-exceeded", Severity.HIGH)]


# ---- GGUF ----------------------------------------------------------------------------------

def write_gguf(path: Path, templates: str | list[dict[str, str]], big_endian: bool = False) -> None:
    endian = gguf.GGUFEndian.BIG if big_endian else gguf.GGUFEndian.LITTLE
    writer = gguf.GGUFWriter(path, "llama", endianess=endian)
    writer.add_name("tiny")
    writer.add_token_list([f"tok{i}" for i in range(20_000)])
    writer.add_token_scores([0.0] * 20_000)
    writer.add_chat_template(templates)
    writer.add_tensor("token_embd.weight", np.zeros((256, 1024), dtype=np.float32))
    writer.add_tensor("output_norm.weight", np.zeros(1024, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def test_real_gguf_header_and_templates(tmp_path: Path) -> None:
    write_gguf(tmp_path / "tiny.Q8_0.gguf", [{"name": "default", "template": LLAMA3},
                                              {"name": "tool_use", "template": QWEN3}])
    report = vet(LocalSource(tmp_path), [TemplateScanner()], options=VetOptions(workers=1))
    assert worst(report) is Severity.INFO
    [header] = by_rule(report, "gguf-header")
    assert "GGUF v3 (little-endian): 2 tensors" in header.message
    assert "architecture llama" in header.message
    templates = {f.member: f.evidence for f in by_rule(report, "chat-template")}
    assert templates == {
        "tokenizer.chat_template": f"tokenizer.chat_template sha256:{sha(LLAMA3)}",
        "tokenizer.chat_template.tool_use": f"tokenizer.chat_template.tool_use sha256:{sha(QWEN3)}",
    }
    assert report.stats.bytes_read < report.stats.repo_bytes // 2  # the tensor data is never read


def test_big_endian_gguf(tmp_path: Path) -> None:
    write_gguf(tmp_path / "be.gguf", CHATML_WITH_GENERATION, big_endian=True)
    report = vet(LocalSource(tmp_path), [TemplateScanner()], options=VetOptions(workers=1))
    assert worst(report) is Severity.INFO
    assert "(big-endian)" in by_rule(report, "gguf-header")[0].message


def test_gguf_with_injected_template(tmp_path: Path) -> None:
    write_gguf(tmp_path / "evil.gguf", [{"name": "default", "template": QWEN3},
                                         {"name": "rag", "template": HOSTILE["template-reference"]}])
    report = vet(LocalSource(tmp_path), [TemplateScanner()], options=VetOptions(workers=1))
    [finding] = by_rule(report, "template-injection")
    assert finding.member == "tokenizer.chat_template.rag"


# Hand-built headers for the malformed cases.
def s(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(raw)) + raw


def kv_str(key: str, value: str) -> bytes:
    return s(key) + struct.pack("<I", 8) + s(value)


def tensor(name: str, dims: list[int], ggml_type: int = 0, offset: int = 0) -> bytes:
    shape = b"".join(struct.pack("<Q", d) for d in dims)
    return s(name) + struct.pack("<I", len(dims)) + shape + struct.pack("<IQ", ggml_type, offset)


def gguf_bytes(kvs: list[bytes], tensors: Sequence[bytes] = (), *, version: int = 3,
               counts: tuple[int, int] | None = None, data: int = 0) -> bytes:
    n_tensors, n_kv = counts or (len(tensors), len(kvs))
    body = b"GGUF" + struct.pack("<IQQ", version, n_tensors, n_kv) + b"".join(kvs) + b"".join(tensors)
    return body + bytes(-len(body) % 32) + bytes(data)


ARCH = kv_str("general.architecture", "llama")


def test_hand_built_gguf_is_accepted(tmp_path: Path) -> None:
    data = gguf_bytes([ARCH, kv_str("tokenizer.chat_template", QWEN3)],
                      [tensor("a", [8]), tensor("b", [4], offset=32)], data=64)
    report = vet_files(tmp_path, {"m.gguf": data})
    assert worst(report) is Severity.INFO
    assert len(by_rule(report, "chat-template")) == 1


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (gguf_bytes([ARCH], version=7), "unsupported GGUF version 7"),
        (gguf_bytes([ARCH], counts=(0, 2**40)), "cannot fit in the file"),
        (gguf_bytes([s("general.name") + struct.pack("<I", 8) + struct.pack("<Q", 2**60)]), "claims"),
        (gguf_bytes([s("general.license") + struct.pack("<I", 8) + struct.pack("<Q", 2**60)]), "claims"),
        (gguf_bytes([ARCH, ARCH]), "duplicate metadata key 'general.architecture'"),
        (gguf_bytes([s("x") + struct.pack("<I", 99)]), "unknown value type 99"),
        (gguf_bytes([s("tokenizer.chat_template") + struct.pack("<II", 4, 1)]), "not string"),
        (gguf_bytes([s("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 2**50)]), "more than the file"),
        (gguf_bytes([ARCH], [tensor("t", [1, 1, 1, 1, 1])]), "5 dimensions"),
        (gguf_bytes([ARCH], [tensor("a", [8]), tensor("b", [8], offset=0)], data=64), "expected 32"),
        (gguf_bytes([ARCH], [tensor("a", [1024])], data=64), "past the end of the file"),
        (gguf_bytes([ARCH], [tensor("q", [20], ggml_type=2)], data=64), "multiple of the block size 32"),
        (gguf_bytes([ARCH], [tensor("a", [8]), tensor("a", [8], offset=32)], data=64), "duplicate tensor"),
        (b"GGUF\x03\x00\x00\x00" + bytes(4), "too short"),
    ],
)
def test_malformed_gguf_headers(tmp_path: Path, data: bytes, expected: str) -> None:
    report = vet_files(tmp_path, {"m.gguf": data})
    [finding] = report.findings
    assert (finding.rule, finding.severity) == ("malformed-gguf", Severity.HIGH)
    assert expected in finding.message


def test_gguf_template_longer_than_the_limit(tmp_path: Path) -> None:
    huge = s("tokenizer.chat_template") + struct.pack("<I", 8) + struct.pack("<Q", 5 * 2**20)
    data = gguf_bytes([ARCH, huge], data=5 * 2**20)
    report = vet_files(tmp_path, {"m.gguf": data})
    assert [(f.rule, f.severity) for f in report.findings] == [("limit-exceeded", Severity.HIGH)]
