"""False positives of the loader model on real vendor text (issue 23).

The Hub is out of reach here, but vendors publish the same cards, configs, serving instructions and
handler/pipeline code on GitHub. Given a folder of git mirrors (``<owner>+<name>/repo``, as the
``fetch`` tool leaves them, or any bare or normal git directory), this builds for each one a "vendor
repo": only what a Hub model repo would carry (cards and other ``*.md``, config JSON/YAML, the
Python files a model repo ships — handler.py, pipeline.py, hubconf.py, modeling/configuration/
tokenization/processing modules, root-level scripts, modules beside a config.json —, ``*.sh``,
``*.ipynb``, requirements.txt), capped in size, read as blobs with ``git cat-file`` (never imported
or executed). Folders inside a mirror
that look like a Hub repo of their own (a ``handler.py``, or a ``config.json`` beside modelling
code) are also vetted re-rooted, as their own repo.

Each vendor repo is vetted by hfvet's real pipeline (every scanner) under the default policy,
once, with the decision taken twice: as vendor-official (the Hub org of the GitHub owner when the
policy's tiers list it, else ``nvidia``) and as a third party (``vendor-fp/<name>``). Per repo it
reports the verdicts, the policy reasons and every finding of the loader model's rules.

    python bench/vendor_text_fp.py MIRRORS [--only deepseek-ai+DeepSeek-V3,...] [--json out.json]

``MIRRORS`` is a folder of bare git mirrors named ``owner+name`` (e.g. what the project's fetch tool
leaves); nothing fetched is imported, executed or committed.

Prints a markdown table (and the loader findings per repo with ``--details``).
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import json
import posixpath
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import vet_as_vendor_and_third_party

THIRD_PARTY_ORG = "vendor-fp"
FALLBACK_VENDOR_ORG = "nvidia"
# GitHub owner -> the org the same vendor publishes under on the Hub.
HUB_ORG = {"QwenLM": "Qwen", "google-deepmind": "google", "MoonshotAI": "moonshotai", "InternLM": "internlm",
           "NVIDIA": "nvidia", "UKPLab": "sentence-transformers", "OpenGVLab": "OpenGVLab"}
LOADER_RULES = ("repo-reference", "runtime-code", "runtime-code-missing", "startup-hook", "import-target-dangerous",
                "import-target-unlisted", "runtime-install")
# Policy rules whose firing the loader model causes (`remote-code-auto-map` also reads transformers' auto-map
# finding; a start-up hook or dangerous import target shows in the loader findings themselves).
LOADER_POLICY_RULES = ("remote-code-auto-map", "referenced-repo-elsewhere", "third-party-unvetted-code-reference")
MODEL_PY = ("handler.py", "pipeline.py", "hubconf.py", "sitecustomize.py", "usercustomize.py", "modeling_*.py",
            "configuration_*.py", "tokenization_*.py", "processing_*.py", "image_processing_*.py",
            "feature_extraction_*.py", "video_processing_*.py", "generate.py")
TEXT_NAMES = ("*.md", "*.json", "*.yaml", "*.yml", "*.sh", "*.ipynb", "requirements*.txt", "*.pth")
SKIP_DIRS = (".github", ".git", "node_modules", "docs/_build", "site-packages")
MAX_FILE = 1 << 20  # bytes per file kept
MAX_FILES = 400  # files per vendor repo
MAX_BYTES = 24 << 20  # bytes per vendor repo
MAX_SUBREPOS = 12  # re-rooted sub-repos per mirror


def config_folders(rows: list[tuple[str, int]]) -> set[str]:
    """Folders holding a transformers config: the code its ``auto_map`` names sits beside it."""
    return {posixpath.dirname(p) for p, _ in rows if posixpath.basename(p) in ("config.json", "tokenizer_config.json")}


def keeps(path: str, size: int, beside_config: bool = False) -> bool:
    """Whether a Hub model repo would carry a file at ``path`` (and it is small enough to be one)."""
    parts = PurePosixPath(path).parts
    if size > MAX_FILE or any(p in SKIP_DIRS or p.startswith(".") for p in parts):
        return False
    name = parts[-1]
    if any(fnmatch.fnmatch(name, p) for p in TEXT_NAMES):
        return True
    if name.endswith(".py"):
        return len(parts) == 1 or beside_config or any(fnmatch.fnmatch(name, p) for p in MODEL_PY)
    return False


@dataclass
class VendorRepo:
    mirror: str  # `owner+name`
    subdir: str  # "" for the whole mirror
    org: str  # the vendor-official org it is vetted under
    name: str
    files: dict[str, int] = field(default_factory=dict)  # kept path -> size
    dropped: int = 0

    @property
    def label(self) -> str:
        return self.mirror + (f":{self.subdir}" if self.subdir else "")


def listing(git_dir: Path) -> list[tuple[str, int]]:
    out = subprocess.run(["git", "-C", str(git_dir), "ls-tree", "-r", "-l", "HEAD"], check=True,
                         capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        meta, _, path = line.partition("\t")
        parts = meta.split()
        if len(parts) == 4 and parts[1] == "blob" and parts[3].isdigit():
            rows.append((path, int(parts[3])))
    return rows


def hub_org(owner: str, vendor_orgs: set[str]) -> str:
    org = HUB_ORG.get(owner, owner)
    return org if org.casefold() in vendor_orgs else FALLBACK_VENDOR_ORG


def plan(mirror: str, rows: list[tuple[str, int]], org: str, subrepos: bool) -> list[VendorRepo]:
    """The whole mirror as one vendor repo, plus folders that look like a Hub repo of their own."""
    name = mirror.split("+", 1)[-1]
    whole = VendorRepo(mirror, "", org, name)
    repos = [whole]
    if subrepos:
        names = {r[0] for r in rows}
        roots = sorted({posixpath.dirname(p) for p in names if _hub_root(p, names)} - {""})
        for root in roots[:MAX_SUBREPOS]:
            repos.append(VendorRepo(mirror, root, org, f"{name}-{root.replace('/', '-')}"[:96]))
    configs = config_folders(rows)
    for repo in repos:
        prefix = repo.subdir + "/" if repo.subdir else ""
        total = 0
        for path, size in rows:
            if not path.startswith(prefix):
                continue
            rel = path[len(prefix):]
            if not keeps(rel, size, posixpath.dirname(path) in configs):
                continue
            if len(repo.files) >= MAX_FILES or total + size > MAX_BYTES:
                repo.dropped += 1
                continue
            repo.files[rel] = size
            total += size
    return repos


def _hub_root(path: str, names: set[str]) -> bool:
    """A folder that is a Hub repo of its own: an Endpoints handler (not a library package's module), or
    a config.json beside modelling code."""
    folder, base = posixpath.split(path)
    if base in ("handler.py", "pipeline.py"):
        return posixpath.join(folder, "__init__.py") not in names
    return base == "config.json" and any(n.startswith(posixpath.join(folder, "modeling_")) for n in names)


def materialize(git_dir: Path, repo: VendorRepo, dest: Path) -> None:
    """Write the kept files under ``dest``, read as blobs with ``git cat-file --batch`` (nothing is run).

    A mirror may lack its largest blobs: those are skipped (counted as dropped)."""
    prefix = repo.subdir + "/" if repo.subdir else ""
    paths = sorted(repo.files)
    request = "".join(f"HEAD:{prefix}{p}\n" for p in paths).encode()
    proc = subprocess.run(["git", "-C", str(git_dir), "cat-file", "--batch"], input=request, check=True,
                          capture_output=True)
    out, at = proc.stdout, 0
    for rel in paths:
        header_end = out.index(b"\n", at)
        header = out[at:header_end].split()
        at = header_end + 1
        if len(header) != 3 or header[1] != b"blob":
            repo.files.pop(rel)
            repo.dropped += 1
            continue
        size = int(header[2])
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(out[at:at + size])
        at += size + 1


@dataclass
class Result:
    label: str
    vendor_repo: str
    files: int
    dropped: int
    seconds: float
    verdicts: dict[str, str]
    reasons: dict[str, list[str]]
    loader: list[dict[str, Any]]  # loader-rule findings: rule, path, message, evidence
    surfaces: dict[str, int]  # closure items per surface
    notable: list[str]  # every medium-or-worse finding (what the policy reasons rest on)
    probes: list[dict[str, Any]] = field(default_factory=list)  # what the serving probes read (not vetted)


def vet_one(folder: Path, repo: VendorRepo, workers: int) -> Result:
    from app.core.findings import Severity

    vendor_id = f"{repo.org}/{repo.name}"
    report, decisions, seconds = vet_as_vendor_and_third_party(
        folder, vendor_id, f"{THIRD_PARTY_ORG}/{repo.name}", workers=workers, vet_seconds=600)
    loader = [{"rule": f.rule, "path": f.path, "severity": f.severity.value, "message": f.message,
               "evidence": f.evidence} for f in report.findings if f.rule in LOADER_RULES]
    surfaces: Counter[str] = Counter()
    for f in report.findings:
        if f.rule == "load-closure":
            surfaces[json.loads(f.evidence or "{}").get("surface", "?")] += 1
    notable = [f"{f.severity.value} {f.rule} {f.path}: {f.message[:160]}" for f in report.findings
               if f.severity.rank >= Severity.MEDIUM.rank]
    return Result(repo.label, vendor_id, len(repo.files), repo.dropped, round(seconds, 2),
                  {k: d.verdict.value for k, d in decisions.items()},
                  {k: sorted({r.rule for r in d.reasons}) for k, d in decisions.items()}, loader, dict(surfaces),
                  notable)


# Serving surfaces being mapped on other branches (vLLM, SGLang), read here with main's readers so
# their false positives on real text show before they merge: probes, not part of the verdict.
# Each flags probe twice: bare flags (any command's `--model`) and scoped to the runtime's commands.
_VLLM = ("vllm serve", "vllm.entrypoints.openai.api_server")
_SGLANG = ("sglang.launch_server",)
PROBES: tuple[dict[str, Any], ...] = (
    {"id": "probe.vllm-serve", "read": "flags", "fields": ["vllm serve", "--model", "--tokenizer"]},
    {"id": "probe.vllm-serve-scoped", "read": "flags",
     "fields": ["vllm serve", *(f"{c} {f}" for c in _VLLM for f in ("--model", "--tokenizer"))]},
    {"id": "probe.sglang-launch", "read": "flags", "fields": ["--model-path", "--tokenizer-path"]},
    {"id": "probe.sglang-launch-scoped", "read": "flags",
     "fields": [f"{c} {f}" for c in _SGLANG for f in ("--model-path", "--model", "--tokenizer-path")]},
    {"id": "probe.vllm-llm-call", "read": "calls", "fields": ["LLM", "LLM(tokenizer)"]},
)


def probe_surfaces() -> list[Any]:
    from app.core.loaders.schema import Surface
    source = {"repo": "-", "file": "-", "function": "-", "version": "-"}
    return [Surface.model_validate({"runtime": "probe", "what": "probe", "form": "repo-id", "kind": "repo",
                                    "gate": "opt-in", "carries_trust": True, "source": source, "cases": [],
                                    "files": ["README.md", "*.md", "*.sh", "*.ipynb", "*.py", "*.yaml", "*.yml"],
                                    **p}) for p in PROBES]


def probe(folder: Path, repo: VendorRepo) -> list[dict[str, Any]]:
    """Items the probe surfaces find, each with the line that names it (to judge by eye)."""
    from app.core.loaders.loader_map import closure_of

    def read_text(path: str) -> str | None:
        return (folder / path).read_text(encoding="utf-8", errors="replace")

    from app.core.loaders.text_shapes import commands

    fields = {p["id"]: [f.partition("(")[0].split(" -")[-1] for f in p["fields"]] for p in PROBES}
    found = []
    for item in closure_of(sorted(repo.files), read_text, f"{repo.org}/{repo.name}", probe_surfaces()):
        lines = list(commands(read_text(item.path) or ""))
        line = next((ln.strip() for ln in lines if item.target in ln and any(f in ln for f in fields[item.surface])),
                    next((ln.strip() for ln in lines if item.target in ln), ""))
        found.append({"surface": item.surface, "path": item.path, "repo": item.target, "trust": item.carries_trust,
                      "line": line[:200]})
    return found


def mirrors_in(root: Path, only: set[str] | None) -> list[tuple[str, Path]]:
    found = []
    for entry in sorted(root.iterdir()):
        git_dir = entry / "repo" if (entry / "repo").is_dir() else entry
        if "+" in entry.name and (only is None or entry.name in only):
            found.append((entry.name, git_dir))
    return found


def short(finding: dict[str, Any]) -> str:
    evidence = finding["evidence"] or ""
    try:
        data = json.loads(evidence)
        evidence = data.get("repo", evidence) + (" code" if data.get("code") else "")
    except (ValueError, AttributeError):
        pass
    return f"{finding['rule']} {finding['path']}: {evidence}"


def table(results: list[Result]) -> str:
    rows = ["| vendor repo (GitHub mirror[:folder]) | files | vetted as | vendor | third party | loader findings "
            "(rule: count) | policy reasons (vendor / third party) |",
            "|---|---:|---|---|---|---|---|"]
    for r in results:
        counts = Counter(f["rule"] for f in r.loader)
        found = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "—"
        reasons = f"{', '.join(r.reasons['vendor']) or '—'} / {', '.join(r.reasons['third-party']) or '—'}"
        rows.append(f"| {r.label} | {r.files} | {r.vendor_repo} | {r.verdicts['vendor']} | "
                    f"{r.verdicts['third-party']} | {found} | {reasons} |")
    return "\n".join(rows)


def summary(results: list[Result]) -> str:
    verdicts = Counter((r.verdicts["vendor"], r.verdicts["third-party"]) for r in results)
    closure_review = [r.label for r in results if r.verdicts["vendor"] != "approve"
                      and set(r.reasons["vendor"]) & set(LOADER_POLICY_RULES)]
    lines = [f"repos: {len(results)}; (vendor, third party) verdicts: "
             + ", ".join(f"{v}/{t}: {n}" for (v, t), n in sorted(verdicts.items())),
             f"loader findings: {sum(len(r.loader) for r in results)} "
             f"({dict(sorted(Counter(f['rule'] for r in results for f in r.loader).items()))})",
             f"vendor not approved with a closure-related reason: {len(closure_review)}",
             "serving probe items (not vetted): " + str(dict(sorted(Counter(
                 p["surface"] for r in results for p in r.probes).items())))]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mirrors", type=Path, help="folder of git mirrors named owner+name")
    parser.add_argument("--only", default="", help="comma-separated owner+name to take")
    parser.add_argument("--no-subrepos", action="store_true", help="only the whole mirror, no re-rooted folders")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--details", action="store_true", help="list every loader finding per repo")
    parser.add_argument("--json", type=Path, help="write every result as JSON here")
    args = parser.parse_args()
    from app.services.policies import policy_for
    from app.settings import Settings

    policy = policy_for(None, Settings())
    assert policy is not None
    vendor_orgs = {o.casefold() for o in policy.model.tiers.vendor_official}
    only = {o for o in args.only.split(",") if o} or None
    results: list[Result] = []
    for mirror, git_dir in mirrors_in(args.mirrors, only):
        owner = mirror.split("+", 1)[0]
        for repo in plan(mirror, listing(git_dir), hub_org(owner, vendor_orgs), not args.no_subrepos):
            with tempfile.TemporaryDirectory() as tmp:
                materialize(git_dir, repo, Path(tmp))
                results.append(vet_one(Path(tmp), repo, args.workers))
                results[-1].probes = probe(Path(tmp), repo)
            print(f"vetted {repo.label}: {results[-1].verdicts}", file=sys.stderr)
    print(table(results))
    print()
    print(summary(results))
    if args.details:
        for r in results:
            if r.loader or r.notable or r.probes:
                print(f"\n{r.label}")
                for finding in r.loader:
                    print(f"  {short(finding)}")
            for line in r.notable:
                print(f"  ! {line}")
            for found in r.probes:
                print(f"  ? {found['surface']} {found['path']}: {found['repo']}"
                      f"{' (trust)' if found['trust'] else ''} <- {found['line']}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([dataclasses.asdict(r) for r in results], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
