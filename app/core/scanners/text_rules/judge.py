"""Judge one ``Declared`` source with the links scanner's rules: one small function per kind,
chosen from a table, each returning the findings (as ``Judgement``) the source deserves.

- git / url: ``classify_url`` in the "install" context (forked-code, unknown-code-install,
  redirect-url, binary-download; an official upstream is an upstream-link);
- index: untrusted-package-index unless ``official_source``; a bare host (``--trusted-host``)
  is never official;
- channel: as the scanner's conda check (a URL by ``official_source``, a name by the upstreams'
  conda channels);
- image: untrusted-container-image unless ``Upstreams.official_image``;
- package (PyPI names only: a conda environment's own specs are another namespace, not judged here
  yet): ``package_judgement``: typosquat-package when the name is one or two edits from a known one;
  else, allowlist first, unknown-package when no runtime owns it and it is not among the most
  downloaded PyPI projects, dependency-confusion when an extra index sits beside PyPI;
- hub: nothing here (the scanner records it as a `repo-reference` with code).

``key`` is what the scanner dedupes on (with the rule), the same key its line checks use, so a
source found both ways is reported once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from app.core.findings import Severity
from app.core.scanners.text_rules.declared import Declared
from app.core.scanners.text_rules.shell_rules import package_name
from app.core.scanners.text_rules.upstreams import Upstreams, image_source
from app.core.scanners.text_rules.url_rules import classify_url, official_source, source_of

# Rules whose finding names no install source: the policy judges them by rule alone.
NO_SOURCE = frozenset({"upstream-link", "external-link"})


@dataclass(frozen=True)
class Judgement:
    rule: str
    severity: Severity
    message: str
    key: str
    source: str | None = None


def judge(declared: Declared, upstreams: Upstreams, extra_index: bool = False) -> list[Judgement]:
    """``extra_index``: an extra index beside PyPI is in effect where the source is declared."""
    if declared.kind == "package":
        return _package(declared, upstreams, extra_index)
    return _JUDGES[declared.kind](declared, upstreams)


def _code(declared: Declared, up: Upstreams) -> list[Judgement]:
    url = declared.value
    hit = classify_url(url, "install", up)
    if hit is None:
        return []
    source = None if hit.rule in NO_SOURCE else source_of(url)
    return [Judgement(hit.rule, hit.severity, f"{hit.message}: {url[:200]} ({declared.via})", url, source)]


def _index(declared: Declared, up: Upstreams) -> list[Judgement]:
    index = declared.value
    if "://" in index and official_source(index, up):
        return []
    source = source_of(index) if "://" in index else index[:200]
    return [Judgement("untrusted-package-index", Severity.MEDIUM,
                      f"package index {index[:120]} ({declared.via}) is not an official package source", index, source)]


def _channel(declared: Declared, up: Upstreams) -> list[Judgement]:
    channel = declared.value
    url = "://" in channel
    if (url and official_source(channel, up)) or (not url and up.conda_channel_official(channel)):
        return []
    source = source_of(channel) if url else f"anaconda.org/{channel.strip('/')}"
    return [Judgement("untrusted-package-index", Severity.MEDIUM,
                      f"conda channel {channel[:120]} ({declared.via}) is not an official channel", channel, source)]


def _image(declared: Declared, up: Upstreams) -> list[Judgement]:
    image = declared.value
    if up.official_image(image):
        return []
    scheme, _, rest = image.rpartition("://")  # library:// and shub:// are no registry: kept
    source = f"{scheme}://{image_source(rest).removeprefix('docker.io/')}" if scheme else image_source(image)
    return [Judgement("untrusted-container-image", Severity.MEDIUM,
                      f"container image {image} ({declared.via}) is not from an official namespace", image, source)]


def _package(declared: Declared, up: Upstreams, extra_index: bool) -> list[Judgement]:
    if "conda dependencies" in declared.via:
        return []
    name = package_name(declared.value)
    found = package_judgement(name, up, extra_index, declared.via) if name else None
    return [found] if found else []


def package_judgement(name: str, up: Upstreams, extra_index: bool, via: str) -> Judgement | None:
    """The one judgement of a PyPI name, wherever it is installed from (a command or a declaration)."""
    squatted = up.typosquat_of(name)
    source = f"pypi.org/project/{name.lower()}"
    if squatted:
        return Judgement("typosquat-package", Severity.HIGH,
                         f"package {name!r} ({via}) looks like a typosquat of {squatted!r}", name)
    if up.vouched(name):
        return None
    if extra_index:  # pip merges every index and takes the highest version: whoever registers the name wins
        return Judgement("dependency-confusion", Severity.HIGH,
                         f"package {name!r} ({via}) is no known project and an extra index sits beside PyPI: pip "
                         "installs the highest version either offers, so whoever registers the name on PyPI wins",
                         name, source)
    return Judgement("unknown-package", Severity.MEDIUM,
                     f"package {name!r} ({via}) is no known runtime's and not among the most downloaded PyPI "
                     "projects: nobody vouches for it", name, source)


def _nothing(_declared: Declared, _up: Upstreams) -> list[Judgement]:
    return []


_JUDGES: dict[str, Callable[[Declared, Upstreams], list[Judgement]]] = {
    "git": _code, "url": _code, "index": _index, "channel": _channel, "image": _image,
    "hub": _nothing,
}
