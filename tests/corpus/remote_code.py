"""Remote code and encoded binaries (issue 12, items 2 and 7), registered from ``tests/samples/remote_corpus.py``.

The cases, with the reasoning beside each, live in that module, where
``tests/unit/core/scanners/test_remote_corpus.py`` also holds each hostile one to its verdict and
message; here they join the registry so the benign test and the side-by-side table see them.
"""

from __future__ import annotations

from tests.corpus.registry import Case, Files, VendorVerdict, register_all
from tests.samples import remote_corpus as rc

# Benign cases: the default policy's verdict for a vendor-official repo, and for a review the rule why.
_VENDOR: dict[str, tuple[VendorVerdict, str | None]] = {
    "vendor-multimodal-processor": ("review", "other-finding"),  # remote-code-unlinked, high
    "plain-model-with-load-hooks": ("review", "remote-code-auto-map"),
    "vendor-card-system-preload": ("approve", None),
    "tiktoken-tokenizer": ("approve", None),
    "vendor-inference-script": ("review", "other-finding"),  # dynamic-repo, medium
    "hex-digest-list": ("approve", None),
}
_FAMILIES = (("remote-code", rc.CONSTANT_TARGETS + rc.LOAD_TIME + rc.NATIVE_AND_REPOS),
             ("encoded-binaries", rc.ENCODED))


def _files(case: rc.Case) -> Files:
    return lambda: {path: data.encode() if isinstance(data, str) else data for path, data in case.files.items()}


def _hostile(family: str, case: rc.Case) -> Case:
    return Case(family, case.name, "hostile", _files(case), case.why, rule=next(iter(case.expected.rules)))


def _benign(case: rc.Case) -> Case:
    vendor, reason = _VENDOR[case.name]
    return Case("remote-code-benign", case.name, "benign", _files(case), case.why, vendor=vendor, reason=reason)


register_all([_hostile(family, case) for family, cases in _FAMILIES for case in cases]
             + [_benign(case) for case in rc.HARD_BENIGN if case.name in _VENDOR])
