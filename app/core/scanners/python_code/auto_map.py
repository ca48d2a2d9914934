"""``auto_map`` / ``custom_pipelines`` in config files: the code ``trust_remote_code`` would import.

transformers resolves ``"AutoModel": "modeling_x.XModel"`` to ``modeling_x.py`` in the same repo,
and ``"other/repo--modeling_x.XModel"`` to that file in *another* repo (a different, unvetted
revision). Tokenizers list ``[slow, fast]`` class references, either of which may be null.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from app.core.loaders.class_ref import ClassRef, parse_ref

CONFIG_NAMES = frozenset({
    "config.json", "tokenizer_config.json", "preprocessor_config.json", "processor_config.json",
    "generation_config.json", "feature_extractor_config.json", "image_processor_config.json",
    "video_preprocessor_config.json",
})


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
