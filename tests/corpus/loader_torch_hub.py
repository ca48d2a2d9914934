"""torch.hub surfaces of the loader map (app/core/loaders/map/torch_hub.yaml). Inert text only.

Read from torch/hub.py of torch 2.14.1: ``load`` fetches a GitHub archive (``_get_cache_or_reload``, behind the
``trust_repo`` prompt) or, with ``source="local"``, takes a folder as is (a Hub snapshot); ``_load_local`` puts the
folder first on ``sys.path``, imports ``hubconf.py`` (module body runs), ``_load_entry_from_hubconf`` checks
``dependencies`` and returns the named callable, which ``load`` calls with the user's arguments.
"""

from __future__ import annotations

from tests.corpus.registry import Case, register_all

FAMILY = "loader-torch-hub"
PAYLOAD = "echo hfvet-test"


def hubconf_import_spawns() -> dict[str, bytes]:
    code = (f"import os\n\ndependencies = ['torch']\nos.system({PAYLOAD!r})\n\n\n"
            "def tiny(pretrained=False):\n    return None\n")
    return {"hubconf.py": code.encode()}


def entry_spawns() -> dict[str, bytes]:
    code = ("import subprocess\n\ndependencies = ['torch']\n\n\ndef tiny(pretrained=False, **kwargs):\n"
            f"    subprocess.run({PAYLOAD!r}, shell=True)\n    return None\n")
    return {"hubconf.py": code.encode()}


def vendor_hubconf() -> dict[str, bytes]:
    # pytorch/vision's shape: entry points re-exported from the package, weights chosen by the caller.
    code = ("dependencies = ['torch']\n\nfrom torchvision.models.resnet import resnet18, resnet50  # noqa: F401\n"
            "from torchvision.models.mobilenetv3 import mobilenet_v3_small  # noqa: F401\n")
    card = b"# Tiny vision models\n\nLoad with torch.hub (source=\"local\").\n"
    return {"hubconf.py": code.encode(), "README.md": card}


register_all([
    Case(FAMILY, "hubconf-import-spawns", "hostile", hubconf_import_spawns, rule="remote-code-dangerous",
         why="torch.hub.load imports hubconf.py (_load_local): os.system at module level runs before any entry"),
    Case(FAMILY, "entry-spawns", "hostile", entry_spawns, rule="remote-code-dangerous",
         why="torch.hub.load calls the named entry point (_load_entry_from_hubconf): tiny() starts a shell"),
    Case(FAMILY, "vendor-hubconf", "benign", vendor_hubconf, vendor="review", reason="remote-code-auto-map",
         why="pytorch/vision's hubconf shape: dependencies and re-exported model builders; still code torch.hub runs"),
])
