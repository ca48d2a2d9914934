"""The text rules for strings embedded in weight files (safetensors ``__metadata__``, GGUF metadata).

Nothing loads these strings as code, but cards, conversion scripts and UIs show and copy them:
a URL to a personal release, a ``curl | sh`` line or a template exploit placed there is the same
instruction as in a README. Each string is checked with the links scanner's URL and shell rules
and the chat-template checks, and every finding names the key it came from.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.core.findings import FindingSink, RuleInfo, RuleKind, Severity
from app.core.scanners.text_rules import shell_rules as sh
from app.core.scanners.text_rules.upstreams import Upstreams, UpstreamsError, load_upstreams
from app.core.scanners.text_rules.url_rules import classify_url, extract_urls

MAX_LINKS = 20  # info-level links reported per file
_QUIET = {"upstream-link", "external-link"}

RULES: tuple[RuleInfo, ...] = (
    RuleInfo("download-and-execute", Severity.CRITICAL, "a metadata string holds curl|sh or similar",
             kind=RuleKind.EXECUTION),
    RuleInfo("template-injection", Severity.CRITICAL,
             "a metadata string is a Jinja template reaching Python internals", kind=RuleKind.EXECUTION),
    RuleInfo("binary-download", Severity.HIGH, "a metadata string links a prebuilt binary from an unknown source",
             kind=RuleKind.DANGEROUS_CAPABILITY),
    RuleInfo("forked-code", Severity.HIGH, "a metadata string links a fork of a known runtime",
             kind=RuleKind.DANGEROUS_CAPABILITY),
    RuleInfo("external-link", Severity.INFO, "a metadata string links a host that is not a known upstream",
             kind=RuleKind.REFERENCE),
    RuleInfo("upstream-link", Severity.INFO, "a metadata string links an official upstream", kind=RuleKind.REFERENCE),
)


def check_strings(items: Iterable[tuple[str, str]], sink: FindingSink) -> None:
    """``items`` are (where, text): where is the key, e.g. ``__metadata__['source']``."""
    try:
        upstreams = load_upstreams()
    except (UpstreamsError, OSError) as exc:
        sink.add("scan-error", Severity.HIGH, f"upstream data unreadable, metadata text not checked: {exc}")
        return
    links = 0
    for where, text in items:
        links += _urls(where, text, upstreams, sink, quiet=links >= MAX_LINKS)
        why = sh.download_and_execute(text)
        if why:
            sink.add("download-and-execute", Severity.CRITICAL, f"{where}: {why}", evidence=_evidence(where, text))
        _template(where, text, sink)


def _urls(where: str, text: str, up: Upstreams, sink: FindingSink, quiet: bool) -> int:
    reported = 0
    for url in dict.fromkeys(extract_urls(text)):
        hit = classify_url(url, "download" if sh.download_and_execute(text) else "link", up)
        if hit is None or (quiet and hit.rule in _QUIET):
            continue
        reported += hit.rule in _QUIET
        sink.add(hit.rule, hit.severity, f"{where}: {hit.message}: {url[:200]}", evidence=_evidence(where, url))
    return reported


def _template(where: str, text: str, sink: FindingSink) -> None:
    if "{{" not in text and "{%" not in text:
        return
    import jinja2  # only for text that looks like a template

    from app.core.scanners.text_rules.jinja_checks import injection_evidence, parse

    try:
        evidence = injection_evidence(parse(text))
    except (jinja2.TemplateSyntaxError, RecursionError):
        return  # metadata that merely contains braces is no template
    if evidence:
        sink.add("template-injection", Severity.CRITICAL,
                 f"{where} is a template that reaches Python internals: {evidence[0]}",
                 evidence="; ".join(evidence))


def _evidence(where: str, text: str) -> str:
    return f"{where}: {text[:300]}"
