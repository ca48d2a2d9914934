"""``auto_map`` / ``custom_pipelines`` in config files: the code ``trust_remote_code`` would import.

transformers resolves ``"AutoModel": "modeling_x.XModel"`` to ``modeling_x.py`` in the same repo,
and ``"other/repo--modeling_x.XModel"`` to that file in *another* repo (a different, unvetted
revision). Tokenizers list ``[slow, fast]`` class references, either of which may be null.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

CONFIG_NAMES = frozenset({
    "config.json", "tokenizer_config.json", "preprocessor_config.json", "processor_config.json",
    "generation_config.json", "feature_extractor_config.json", "image_processor_config.json",
    "video_preprocessor_config.json",
})
_MODULE = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
_REPO = re.compile(r"^[\w.-]+/[\w.-]+(?:@[\w./-]+)?$")


@dataclass(frozen=True)
class ClassRef:
    key: str  # where in the config, e.g. "auto_map.AutoModel"
    raw: str
    repo: str | None = None  # another repo, for "org/name--module.Class"
    module: str | None = None  # dotted module, e.g. "modeling_x"
    problem: str | None = None  # why the reference is malformed

    def module_paths(self, config_path: str) -> tuple[str, ...]:
        """Where the module file may live: next to the config, or at the repo root."""
        if not self.module:
            return ()
        rel = self.module.replace(".", "/") + ".py"
        here = posixpath.join(posixpath.dirname(config_path), rel)
        return (here, rel) if here != rel else (rel,)


def class_refs(config: Any) -> list[ClassRef]:
    """Every class reference in ``auto_map`` and ``custom_pipelines`` of a parsed config."""
    if not isinstance(config, dict):
        return []
    return list(_auto_map(config.get("auto_map"))) + list(_pipelines(config.get("custom_pipelines")))


def _auto_map(section: Any) -> Iterator[ClassRef]:
    if section is None:
        return
    if not isinstance(section, dict):
        yield ClassRef("auto_map", repr(section)[:120], problem="auto_map is not an object")
        return
    for name, value in section.items():
        key = f"auto_map.{name}"
        values = value if isinstance(value, list) else [value]
        for item in values:
            if item is not None:  # a null slow/fast tokenizer slot
                yield parse_ref(key, item)


def _pipelines(section: Any) -> Iterator[ClassRef]:
    if not isinstance(section, dict):
        return
    for task, spec in section.items():
        impl = spec.get("impl") if isinstance(spec, dict) else spec
        if impl is not None:
            yield parse_ref(f"custom_pipelines.{task}.impl", impl)


def parse_ref(key: str, value: Any) -> ClassRef:
    if not isinstance(value, str):
        return ClassRef(key, repr(value)[:120], problem="class reference is not a string")
    repo, sep, reference = value.partition("--")
    if not sep:
        repo, reference = "", value
    module, dot, _cls = reference.rpartition(".")
    if not dot or not _MODULE.match(module) or not _cls.isidentifier():
        return ClassRef(key, value, problem="not a 'module.Class' reference")
    if sep and not _REPO.match(repo):
        return ClassRef(key, value, module=module, problem=f"bad repo id {repo!r} before '--'")
    return ClassRef(key, value, repo=repo or None, module=module)
