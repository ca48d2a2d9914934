"""bench/trace_memory.py's sitecustomize: the figures it reports from inside a server are read, not zeros."""

from __future__ import annotations

import importlib.util
import json
import sys
import threading
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[3]
SITE = ROOT / "bench" / "trace_memory_site" / "sitecustomize.py"


def load_site() -> ModuleType:
    """The module under another name (without HFVET_TRACE_DIR it starts nothing)."""
    spec = importlib.util.spec_from_file_location("trace_memory_site_under_test", SITE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pymalloc_figures_are_parsed_from_debugmallocstats() -> None:
    figures = load_site()._pymalloc()
    assert figures["pymalloc_arenas"] >= figures["pymalloc_used"] > 1024 * 1024  # this interpreter has objects
    assert figures["threads"] >= 1


def test_an_answer_carries_every_figure_and_what_a_collection_freed() -> None:
    answer = load_site()._answer({"collect": 1})
    wanted = {"freed", "off", "enabled", "count", "objects", "garbage", "traced", "sqlite", "malloc_used",
              "malloc_free", "pymalloc_arenas", "pymalloc_used", "threads"}
    assert wanted <= set(answer)
    assert answer["objects"] > 1000 and answer["enabled"] and len(answer["count"]) == 3


def test_a_request_file_is_answered_with_json(tmp_path: Path) -> None:
    site, stop = load_site(), threading.Event()
    serving = threading.Thread(target=site._serve, args=(tmp_path, stop), daemon=True)
    serving.start()
    (tmp_path / "000001.req").write_text(json.dumps({}))
    answer = tmp_path / "000001.json"
    deadline = time.monotonic() + 30
    while not answer.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert json.loads(answer.read_text())["objects"] > 1000
    assert not (tmp_path / "000001.req").exists()
    stop.set()
    serving.join(5)
    assert not serving.is_alive()


def test_only_the_server_answers_not_its_vet_processes() -> None:
    """A vet process, spawned with the server's environment, must not answer with its own (small) figures."""
    site = load_site()
    spawned = [sys.executable, "-B", "-c", "from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, "
               "pipe_handle=7)", "--multiprocessing-fork"]
    tracker = [sys.executable, "-B", "-c", "from multiprocessing.resource_tracker import main;main(5)"]
    assert site._is_server([sys.executable, "-m", "app", "serve", "--port", "8000"])
    assert not site._is_server(spawned) and not site._is_server(tracker)
