"""A class reference as transformers reads one: ``module.Class`` in this repo, ``org/name--module.Class`` in another.

``dynamic_module_utils.get_class_from_dynamic_module`` splits on ``--``; the module part is a dotted path
to a ``.py`` file next to the config (or at the repo root).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Any

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
