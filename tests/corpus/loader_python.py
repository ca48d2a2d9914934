"""CPython start-up surfaces (app/core/loaders/map/python.yaml). Inert text only.

``Lib/site.py`` (3.11): ``execsitecustomize``/``execusercustomize`` import ``sitecustomize`` and
``usercustomize`` from the path on every interpreter start; ``addpackage`` exec()s each ``.pth`` line
that starts with ``import`` (other lines are path entries).
"""

from __future__ import annotations

from tests.corpus.registry import Case, register_all

FAMILY = "loader-python"


def sitecustomize_at_root() -> dict[str, bytes]:
    return {"sitecustomize.py": b"import os\nos.environ.setdefault('HFVET_TEST', 'echo hfvet-test')\n",
            "config.json": b'{"model_type": "llama"}'}


def usercustomize_at_root() -> dict[str, bytes]:
    return {"usercustomize.py": b"import atexit\natexit.register(print, 'hfvet-test')\n"}


def pth_import_line() -> dict[str, bytes]:
    return {"extras.pth": b"./vendored\nimport os; os.environ.setdefault('HFVET_TEST', '1')\n",
            "config.json": b'{"model_type": "llama"}'}


def pth_paths_only() -> dict[str, bytes]:
    return {"extras.pth": b"./vendored\n# a comment: importing nothing\n", "config.json": b'{"model_type": "llama"}'}


register_all([
    Case(FAMILY, "sitecustomize-at-root", "hostile", sitecustomize_at_root, rule="startup-hook",
         why="with the snapshot on PYTHONPATH, every interpreter imports sitecustomize.py at start-up"),
    Case(FAMILY, "usercustomize-at-root", "hostile", usercustomize_at_root, rule="startup-hook",
         why="site.execusercustomize imports usercustomize.py from the path when user site-packages are on"),
    Case(FAMILY, "pth-import-line", "hostile", pth_import_line, rule="startup-hook",
         why="site.addpackage exec()s a .pth line starting with 'import' in a site directory"),
    Case(FAMILY, "pth-paths-only", "benign", pth_paths_only, vendor="approve",
         why="a .pth of path entries only: site adds them to sys.path, runs nothing"),
])
