"""Remote code written in Python 3.12+ grammar (PEP 695 generics, PEP 701 f-strings).

transformers' ``dynamic_module_utils.get_class_from_dynamic_module`` imports an ``auto_map``
module on the user's interpreter, which reads this grammar; hfvet's 3.11 ``ast`` does not, so it
reads such modules through ``python_code/modern_syntax``. The modules themselves live in
``tests/unit/core/scanners/test_modern_python.py`` (each hostile one beside its 3.11 twin).
"""

from __future__ import annotations

import json

from tests.corpus.registry import Case, register_all
from tests.unit.core.scanners.test_modern_python import BENIGN_MODERN, HOSTILE

FAMILY = "remote-code-modern-grammar"
_CONFIG = json.dumps({"auto_map": {"AutoModel": "modeling_x.XModel"}}).encode()


def _repo(module: str) -> dict[str, bytes]:
    return {"config.json": _CONFIG, "modeling_x.py": module.encode()}


register_all(
    [Case(FAMILY, name, "hostile", lambda m=module: _repo(m),
          why="the module's import-time command, written in 3.12 grammar", rule="remote-code-dangerous")
     for name, (module, _twin) in sorted(HOSTILE.items())]
    + [Case(FAMILY, "benign-generics-and-fstrings", "benign", lambda: _repo(BENIGN_MODERN),
            why="PEP 695 generics and PEP 701 f-strings in ordinary modelling code",
            vendor="review", reason="remote-code-auto-map")])
