"""Issue 23: what the loader map costs a vet of a code-heavy repo, against another source tree.

    python bench/bench_loader_closure.py [--py 400] [--yaml 200] [--repeat 5] [--src TREE ...]

Generates a repo of N Python modules (plain torch modules), M Hydra-style YAML configs, JSON configs,
an auto_map config, a diffusers model_index.json, an Endpoints handler.py and a card with serving
commands, then vets it with every scanner (2 workers) in fresh processes, alternating between the
source trees (`--src`, default: this checkout), and prints the median wall seconds per tree and the
ratio to the first. Nothing is written outside a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VET = """
import sys, time
from pathlib import Path
from app.core.pipeline import vet
from app.core.scanners import all_scanners
from app.sources.local import LocalSource
started = time.monotonic()
report = vet(LocalSource(Path(sys.argv[1])), all_scanners(), workers=2)
print(round(time.monotonic() - started, 3), len(report.findings), len(getattr(report, 'closure', ())))
"""
MODULE = ("import os\nimport torch\n\n\nclass Block{i}(torch.nn.Module):\n    def __init__(self):\n"
          "        super().__init__()\n        self.cache = os.path.join('cache', 'b{i}')\n\n"
          "    def forward(self, x):\n        return x * 2\n")
HANDLER = ("from transformers import pipeline\n\n\nclass EndpointHandler:\n    def __init__(self, path=''):\n"
           "        self.pipe = pipeline('text-generation', model=path)\n\n    def __call__(self, data):\n"
           "        return self.pipe(data['inputs'])\n")


def generate(folder: Path, modules: int, yamls: int) -> None:
    for i in range(modules):
        target = folder / f"pkg{i % 20}" / f"mod{i}.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(MODULE.format(i=i))
    for i in range(yamls):
        (folder / f"conf{i}.yaml").write_text(f"model:\n  _target_: nemo.collections.asr.models.EncDecCTCModel\n"
                                              f"  layers: {i}\n")
        (folder / f"cfg{i}.json").write_text(json.dumps({"index": i}))
    (folder / "config.json").write_text(json.dumps({"model_type": "x", "auto_map": {"AutoModel": "pkg0.mod0.Block0"}}))
    (folder / "model_index.json").write_text(json.dumps({"_class_name": "P", "unet": ["diffusers", "UNet"]}))
    (folder / "handler.py").write_text(HANDLER)
    (folder / "README.md").write_text("```bash\nvllm serve me/model --tokenizer me/model --trust-remote-code\n```\n")


def run(tree: Path, repo: Path) -> float:
    out = subprocess.run([sys.executable, "-c", VET, str(repo)], cwd=tree, env=os.environ | {"PYTHONPATH": str(tree)},
                         check=True, capture_output=True, text=True).stdout.split()
    return float(out[0])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--py", type=int, default=400)
    parser.add_argument("--yaml", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--src", type=Path, action="append", default=[])
    args = parser.parse_args(argv)
    trees = args.src or [ROOT]
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        generate(repo, args.py, args.yaml)
        times: dict[Path, list[float]] = {t: [] for t in trees}
        for _ in range(args.repeat):
            for tree in trees:
                times[tree].append(run(tree, repo))
    first = statistics.median(times[trees[0]])
    for tree in trees:
        median = statistics.median(times[tree])
        print(f"{tree}: median {median:.2f} s over {args.repeat} ({', '.join(f'{t:.2f}' for t in times[tree])}); "
              f"ratio {median / first:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
