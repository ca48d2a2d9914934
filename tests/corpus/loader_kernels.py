"""kernels surfaces (app/core/loaders/map/kernels.yaml). Inert text only.

Read from the kernels 0.17.2 wheel: ``load.py`` get_kernel downloads the repo and ``importer.py``
_import_from_path executes its ``__init__.py`` (which loads the compiled ops); ``hf_hub.py``
_check_trust_remote_code lets any repo through with ``trust_remote_code=True``, otherwise only orgs the
Hub marks as trusted kernel publishers.
"""

from __future__ import annotations

import json

from tests.corpus.registry import Case, register_all

FAMILY = "loader-kernels"
CONFIG = json.dumps({"model_type": "llama"}).encode()


def get_kernel_untrusted_publisher() -> dict[str, bytes]:
    modeling = ("import torch\nfrom kernels import get_kernel\n\n"
                "fast = get_kernel(\"speed-ops/fused-rmsnorm\", version=1, trust_remote_code=True)\n\n\n"
                "def rms_norm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:\n"
                "    return fast.rms_norm(x, w, 1e-6)\n")
    return {"ops.py": modeling.encode(), "config.json": CONFIG}


def kernels_community_activation() -> dict[str, bytes]:
    # The kernels README example: a kernel of a Hub-trusted publisher, loaded without trust_remote_code.
    card = ("# Using hub kernels\n\n```python\nimport torch\nfrom kernels import get_kernel\n\n"
            "activation = get_kernel(\"kernels-community/activation\", version=1)\n"
            "x = torch.randn((10, 10), dtype=torch.float16, device=\"cuda\")\ny = torch.empty_like(x)\n"
            "activation.gelu_fast(y, x)\n```\n")
    return {"README.md": card.encode(), "config.json": CONFIG}


register_all([
    Case(FAMILY, "get-kernel-untrusted-publisher", "hostile", get_kernel_untrusted_publisher,
         rule="third-party-unvetted-code-reference",
         why="get_kernel(..., trust_remote_code=True) skips the publisher check: speed-ops' __init__.py and .so run"),
    Case(FAMILY, "kernels-community-activation", "benign", kernels_community_activation, vendor="approve",
         why="the kernels README example: a trusted-publisher kernel, no trust_remote_code (kernels' own gate)"),
])
