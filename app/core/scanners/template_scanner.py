"""Jinja chat templates (threat model item 5) and the GGUF header that may carry them.

Templates come from ``tokenizer_config.json`` / ``chat_template.json`` / ``processor_config.json``
(``chat_template`` as a string, a list of ``{name, template}`` or a ``{name: template}`` object),
``preprocessor_config.json``, any other JSON with a top-level ``chat_template`` key (found by
content), ``*.jinja`` files, and GGUF metadata (``tokenizer.chat_template[.<name>]``). Each is
parsed, never rendered, and hashed so a changed template shows up between revisions; strings it
builds at render time are folded (``jinja_fold``) before the checks.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from typing import TYPE_CHECKING, Any, ClassVar

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.blobs import BudgetBlob
from app.core.formats.detect import HEAD_BYTES, Format
from app.core.formats.text_encoding import decode, reading_encoding
from app.core.limits import LimitExceeded
from app.core.manifest import ManifestFile
from app.core.ports import Blob, SourceError
from app.core.scanners.base import ScanContext
from app.core.scanners.text_rules import embedded_text
from app.core.scanners.text_rules.text_lines import read_whole

if TYPE_CHECKING:
    from app.core.formats.gguf_header import GGUFHeader

TEMPLATE_JSON_FILES = frozenset({"tokenizer_config.json", "chat_template.json", "processor_config.json",
                                 "preprocessor_config.json"})
# Any other JSON is read for a top-level ``chat_template`` too (found by content, not by name):
# processors and custom code load templates from configs under other names. Bytes that cannot
# hold the key (not even JSON-escaped) are not parsed.
_KEY_HINTS = (b"chat_template", b"\\u")
TEMPLATE_SUFFIXES = (".jinja", ".jinja2")
MAX_JSON_BYTES = 64 * 1024 * 1024  # tokenizer configs with big vocabularies reach several MB
UNPARSEABLE = "template-unparseable"


class _Unparseable(Exception):
    """A template container that cannot be read as one."""


class TemplateScanner:
    name: ClassVar[str] = "chat-templates"
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo("template-injection", Severity.CRITICAL,
                 "chat template reaching Python internals (dunder walks, gadget globals, imports, os/eval)",
                 kind=RuleKind.EXECUTION),
        RuleInfo("template-render-cost", Severity.HIGH,
                 "chat template whose render, for a realistic chat, can exhaust CPU or memory "
                 "(nested loops, string repetition, recursion; bounded statically)", kind=RuleKind.EXECUTION),
        RuleInfo(UNPARSEABLE, Severity.MEDIUM, "chat template (or its JSON container) that does not parse",
                 kind=RuleKind.MALFORMED),
        RuleInfo("chat-template", Severity.INFO, "every chat template with its sha256, to diff revisions",
                 kind=RuleKind.NOTE),
        RuleInfo("gguf-header", Severity.INFO, "GGUF version, counts and architecture of a checked header",
                 kind=RuleKind.NOTE),
        RuleInfo("malformed-gguf", Severity.HIGH,
                 "GGUF header a loader would choke on: counts, lengths, types, offsets",
                 kind=RuleKind.MALFORMED_WEIGHTS),
        RuleInfo("parser-differential", Severity.CRITICAL,
                 "GGUF whose general.alignment makes loaders (llama.cpp, gguf, candle) read tensor data from "
                 "different offsets", kind=RuleKind.MALFORMED),
        RuleInfo.limit("template or config larger than the configured limits"),
        RuleInfo.scan_error("the file could not be read"),
    )

    def handles(self, file: ManifestFile) -> bool:
        base = file.path.rsplit("/", 1)[-1].lower()
        named = base in TEMPLATE_JSON_FILES or base.endswith(TEMPLATE_SUFFIXES)
        return file.format == Format.GGUF or named or (file.format == Format.TEXT and base.endswith(".json"))

    def version(self) -> str:
        return f"1.0 (jinja2 {importlib.metadata.version('jinja2')})"  # jinja2 loads only for a template

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        sink = FindingSink(ctx.file.path, self.name)
        blob = BudgetBlob(ctx.blob, ctx.limits.max_read_bytes_per_file)
        try:
            templates = self._templates(ctx, blob, sink)
        except LimitExceeded as exc:
            sink.add("limit-exceeded", Severity.HIGH, str(exc))
            templates = {}
        except _Unparseable as exc:
            sink.add(UNPARSEABLE, Severity.MEDIUM, f"{exc}: its chat templates could not be checked")
            templates = {}
        except SourceError as exc:
            return ScanOutcome.failed(self.name, ctx.file.path, str(exc), sink.findings)
        for name, source in templates.items():
            check_template(name, source, sink)
        return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)

    def _templates(self, ctx: ScanContext, blob: Blob, sink: FindingSink) -> dict[str, str]:
        base = ctx.file.path.rsplit("/", 1)[-1].lower()
        if base.endswith(TEMPLATE_SUFFIXES):
            return _file_templates(read_whole(blob, ctx.limits.max_text_bytes), base)
        cap = min(MAX_JSON_BYTES, ctx.limits.max_read_bytes_per_file)
        if base in TEMPLATE_JSON_FILES:
            return json_templates(read_whole(blob, cap), base)
        if base.endswith(".json"):
            return _other_json_templates(read_whole(blob, cap), base)
        return _gguf_templates(blob, ctx.limits.max_text_bytes, sink)


def check_template(name: str, source: str, sink: FindingSink) -> None:
    digest = hashlib.sha256(source.encode("utf-8", errors="surrogatepass")).hexdigest()
    sink.add("chat-template", Severity.INFO, f"chat template {name!r} ({len(source)} chars)",
             member=name, evidence=f"{name} sha256:{digest}")
    import jinja2

    from app.core.scanners.text_rules.jinja_checks import injection_evidence, parse
    from app.core.scanners.text_rules.jinja_cost import render_cost
    from app.core.scanners.text_rules.jinja_estimates import MESSAGES, TOOLS

    try:
        tree = parse(source)
    except jinja2.TemplateSyntaxError as exc:
        sink.add(UNPARSEABLE, Severity.MEDIUM, f"chat template {name!r} does not parse: line {exc.lineno}: "
                 f"{exc.message}", member=name)
        return
    except RecursionError:
        sink.add(UNPARSEABLE, Severity.MEDIUM, f"chat template {name!r} nests too deeply to parse",
                 member=name)
        return
    evidence = injection_evidence(tree)
    if evidence:
        sink.add("template-injection", Severity.CRITICAL,
                 f"chat template {name!r} reaches Python internals or runs code: {evidence[0]}",
                 member=name, evidence="; ".join(evidence))
    bound = render_cost(tree)
    if bound.reason is not None:
        sink.add("template-render-cost", Severity.HIGH,
                 f"chat template {name!r} can exhaust CPU or memory when rendered for a chat of {MESSAGES:,} "
                 f"messages and {TOOLS} tools: {bound.reason}", member=name, evidence=bound.reason)


def json_templates(raw: bytes, container: str) -> dict[str, str]:
    """``chat_template`` from a JSON config: a string, a list of ``{name, template}``, or a
    ``{name: template}`` object (transformers keeps that form as it is and renders from it)."""
    try:
        config = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise _Unparseable(f"{container} is not valid JSON ({exc})") from exc
    if not isinstance(config, dict):
        raise _Unparseable(f"{container} is not a JSON object")
    value: Any = config.get("chat_template")
    if value is None:
        return {}
    if isinstance(value, str):
        return {"chat_template": value}
    if isinstance(value, list) and all(_is_named_template(v) for v in value):
        return {f"chat_template[{v['name']}]": v["template"] for v in value}
    if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        return {f"chat_template[{name}]": template for name, template in value.items()}
    raise _Unparseable(f"{container} chat_template is neither a string nor named templates")


def _other_json_templates(raw: bytes, container: str) -> dict[str, str]:
    """A JSON file under any other name: its templates when it has the key, else nothing
    (a file that is not a JSON object is no template container, so not unparseable either)."""
    if not any(hint in raw for hint in _KEY_HINTS):
        return {}
    try:
        config = json.loads(raw)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(config, dict) or "chat_template" not in config:
        return {}
    return json_templates(raw, container)


def _is_named_template(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(value.get(k), str) for k in ("name", "template"))


def _gguf_templates(blob: Blob, max_string: int, sink: FindingSink) -> dict[str, str]:
    from app.core.formats.gguf_header import MalformedGGUF, TooLong, read_gguf  # gguf: only for a GGUF file

    try:
        header = read_gguf(blob, max_string)
    except MalformedGGUF as exc:
        sink.add("malformed-gguf", Severity.HIGH, f"malformed GGUF header: {exc}")
        return {}
    except TooLong as exc:
        raise LimitExceeded(str(exc)) from exc
    facts = json.dumps(_facts(header), sort_keys=True)
    sink.add("gguf-header", Severity.INFO, _describe(header), evidence=facts)
    for differential in header.differentials:
        sink.add("parser-differential", Severity.CRITICAL, f"GGUF loaders disagree: {differential}")
    embedded_text.check_strings(((f"GGUF metadata {key}", text) for key, text in header.strings.items()), sink)
    return header.templates


def _describe(header: GGUFHeader) -> str:
    arch = header.facts.get("general.architecture", "unknown")
    return (f"GGUF v{header.version} ({header.byte_order}-endian): {header.tensor_count} tensors, "
            f"{header.kv_count} metadata keys, architecture {arch}, {len(header.templates)} chat template(s)")


def _facts(header: GGUFHeader) -> dict[str, Any]:
    facts: dict[str, Any] = {"version": header.version, "tensors": header.tensor_count, "kv": header.kv_count}
    facts.update(header.facts)
    if header.unknown_tensor_types:
        facts["unknown_tensor_types"] = sorted(header.unknown_tensor_types)
    return facts


def _file_templates(raw: bytes, name: str) -> dict[str, str]:
    """A template file as UTF-8 (what transformers reads); UTF-16/32 also in its own encoding.
    Both views of wide text: ASCII hidden between the wide characters is template code in UTF-8."""
    encoding = reading_encoding(raw[:HEAD_BYTES])
    if encoding != "utf-8":
        return {name: decode(raw, encoding), f"{name} (read as UTF-8)": decode(raw, "utf-8")}
    try:
        return {name: decode(raw, "utf-8", errors="strict")}
    except UnicodeDecodeError as exc:
        raise _Unparseable(f"{name} is not UTF-8 text") from exc
