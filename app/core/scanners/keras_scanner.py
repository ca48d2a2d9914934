"""Keras model configs: Lambda layers and references to code outside Keras.

A Keras model config names every object to rebuild by module and class. ``Lambda`` layers
carry marshalled Python bytecode, and references outside the Keras packages make the
loader import other code (the safe_mode bypasses of CVE-2025-1550, -8747 and -9906). The
config is read from ``config.json`` in a ``.keras`` zip, from the ``model_config``
attribute of a Keras HDF5 file, from a top-level ``config.json`` (keras-hub presets), or
from each object's metadata JSON in a TF-Keras SavedModel's ``keras_metadata.pb``.
The whole JSON tree is walked, so nested Functional/Sequential models and wrappers count.
Layers rebuilt at load time that load files (``TFSMLayer``, lookup layers with a vocabulary
path) and any config value that is a path or URL are findings too: the loader reads or fetches
what this vet never saw.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import json
import posixpath
import re
import zipfile
from collections.abc import Callable
from functools import partial
from typing import Any, ClassVar

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.blobs import BudgetBlob, open_blob
from app.core.formats.detect import Format
from app.core.formats.protobuf_wire import Message, WireError
from app.core.limits import LimitExceeded
from app.core.manifest import ManifestFile
from app.core.scanners.base import ScanContext
from app.core.scanners.peers.capped import open_capped_member
from app.core.scanners.peers.engine_run import EngineRun, run_engine

NAME = "keras"
LAMBDA = "keras-lambda"
EXTERNAL = "keras-external-module"
DANGEROUS = "keras-dangerous-reference"
LOADING_LAYER = "keras-loading-layer"
CONFIG_PATH = "keras-config-path"
# Layers whose construction loads another model from a path (keras/src/export/tfsm_layer.py).
LOADING_LAYERS = frozenset({"TFSMLayer"})
# Lookup layers read `vocabulary` (and TextVectorization `vocabulary`/`idf_weights`) from a file
# path when it is a string (keras/src/layers/preprocessing/index_lookup.py: file_io.GFile).
LOOKUP_LAYERS = frozenset({"StringLookup", "IntegerLookup", "TextVectorization"})
_PATHLIKE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|/|~/|\.\.?/|[A-Za-z]:[\\/]|\\\\)"
                       r"|^[\w.-]+(?:/[\w.-]+)*/[\w.-]+\.[A-Za-z0-9]{1,8}$")
KERAS_PACKAGES = frozenset({"keras", "keras_hub", "keras_nlp", "keras_cv", "tf_keras"})
DANGEROUS_MODULES = frozenset({
    "os", "posix", "nt", "subprocess", "builtins", "__builtin__", "sys", "runpy", "importlib",
    "pickle", "_pickle", "marshal", "shutil", "socket", "ctypes", "pty", "code", "codeop",
})
# Keras functions a config can call while loading: file download and switching safe_mode off.
DANGEROUS_FUNCTIONS = frozenset({"get_file", "enable_unsafe_deserialization"})
SAVED_METADATA = "keras_metadata.pb"  # tf_keras loads it by name, next to saved_model.pb
# keras/protobuf/saved_metadata.proto: SavedMetadata.nodes = 1, SavedObject.node_path = 3,
# SavedObject.metadata = 5 (a JSON string)
METADATA_NODES, NODE_PATH, NODE_METADATA = 1, 3, 5
H5_SKIP = "H5 not inspected: reading its Keras model config needs h5py, which is not installed"


class KerasScanner:
    name: ClassVar[str] = NAME
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo(LAMBDA, Severity.HIGH, "a Keras model has a Lambda layer: Python bytecode that runs "
                 "when the model is loaded or called", kind=RuleKind.DANGEROUS_CAPABILITY),
        RuleInfo(EXTERNAL, Severity.MEDIUM, "a Keras config references a module or registered object "
                 "outside the Keras packages: loading needs (and imports) other code", kind=RuleKind.EXECUTION),
        RuleInfo(DANGEROUS, Severity.HIGH, "a Keras config references a system module (os, subprocess, "
                 "builtins...) or a Keras function abused to bypass safe_mode", kind=RuleKind.EXECUTION),
        RuleInfo(LOADING_LAYER, Severity.HIGH, "a Keras layer that loads another model when built "
                 "(TFSMLayer: a SavedModel from a path), or a lookup layer whose vocabulary is a file",
                 kind=RuleKind.DANGEROUS_CAPABILITY),
        RuleInfo(CONFIG_PATH, Severity.HIGH, "a Keras config value is a file path or URL: loading may "
                 "read or fetch something the vet never saw", kind=RuleKind.EXECUTION),
        RuleInfo.limit("the Keras config is larger than hfvet's text limit"),
        RuleInfo.scan_error("the Keras config could not be read or parsed"),
    )

    def handles(self, file: ManifestFile) -> bool:
        if file.format in (Format.KERAS, Format.HDF5) or posixpath.basename(file.path) == SAVED_METADATA:
            return True
        return file.format == Format.TEXT and posixpath.basename(file.path) == "config.json"

    def version(self) -> str:
        try:
            return f"1.0 (h5py {importlib.metadata.version('h5py')})"
        except importlib.metadata.PackageNotFoundError:
            return "1.0 (no h5py: H5 configs not inspected)"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        if ctx.file.format == Format.HDF5 and importlib.util.find_spec("h5py") is None:
            return ScanOutcome.skipped(NAME, ctx.file.path, H5_SKIP)
        if posixpath.basename(ctx.file.path) == SAVED_METADATA:
            return run_engine(NAME, ctx, partial(_scan_saved_metadata, ctx))
        scan = _SCANS.get(ctx.file.format, _scan_preset_config)
        return run_engine(NAME, ctx, partial(scan, ctx))


def _scan_keras_zip(ctx: ScanContext, budget: BudgetBlob, run: EngineRun) -> None:
    with zipfile.ZipFile(open_blob(budget)) as zf:
        # Every entry named config.json: zip readers disagree on which duplicate wins.
        configs = [info for info in zf.infolist() if info.filename == "config.json"]
        if not configs:
            run.errors.append("no config.json in the Keras archive")
        for info in configs:
            with open_capped_member(zf, info, ctx.limits.max_text_bytes) as member:
                text = member.read()
            _check_config(_parse(text, run), run.sink, "config.json")


def _scan_h5(ctx: ScanContext, budget: BudgetBlob, run: EngineRun) -> None:
    h5py: Any = importlib.import_module("h5py")
    with open_blob(budget) as stream, h5py.File(stream, "r") as h5:
        raw = h5.attrs.get("model_config")
    if raw is None:
        return  # weights only (e.g. transformers' tf_model.h5): nothing is rebuilt from code
    text = raw.encode() if isinstance(raw, str) else bytes(raw)
    if len(text) > ctx.limits.max_text_bytes:
        raise LimitExceeded(f"model_config is longer than {ctx.limits.max_text_bytes} bytes")
    _check_config(_parse(text, run), run.sink, None)


def _scan_preset_config(ctx: ScanContext, budget: BudgetBlob, run: EngineRun) -> None:
    if ctx.file.size > ctx.limits.max_text_bytes:
        raise LimitExceeded(f"config.json is longer than {ctx.limits.max_text_bytes} bytes")
    try:
        config = json.loads(budget.read(0, ctx.file.size))
    except (ValueError, RecursionError):
        return  # not JSON, so no Keras loader can rebuild anything from it
    if _is_keras_object(config):
        _check_config(config, run.sink, None)


def _scan_saved_metadata(ctx: ScanContext, budget: BudgetBlob, run: EngineRun) -> None:
    """Every SavedObject's metadata JSON is a layer config (class_name, config...)."""
    if ctx.file.size > ctx.limits.max_read_bytes_per_file:
        raise LimitExceeded(f"keras_metadata.pb is longer than {ctx.limits.max_read_bytes_per_file} bytes")
    with ctx.budget().reserve(ctx.file.size):
        top = Message.top(budget.read(0, ctx.file.size))
        try:
            nodes = [node for node in top.fields() if node.number == METADATA_NODES]
            for node in nodes:
                _check_saved_object(top.nested(node), run)
        except WireError as exc:
            run.errors.append(f"keras_metadata.pb is not a protobuf SavedMetadata: {exc}")
            return
    if not nodes:
        run.errors.append("keras_metadata.pb has no Keras objects: not a SavedMetadata a loader would use")


def _check_saved_object(saved_object: Message, run: EngineRun) -> None:
    fields = list(saved_object.fields())
    paths = [f.text() for f in fields if f.number == NODE_PATH]
    for item in fields:
        if item.number == NODE_METADATA:
            _check_config(_parse(bytes(item.payload()), run), run.sink, paths[-1] if paths else None)


def _is_keras_object(config: object) -> bool:
    return isinstance(config, dict) and "class_name" in config and (
        "module" in config or "registered_name" in config
    )


def _parse(text: bytes, run: EngineRun) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        run.errors.append(f"Keras model config is not valid JSON: {exc}")
        return None


def _check_config(config: object, sink: FindingSink, member: str | None) -> None:
    """Walk the whole JSON tree (iteratively: hostile nesting must not recurse)."""
    reported: set[tuple[str, str]] = set()
    stack: list[tuple[object, str]] = [(config, "$")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            _check_object(node, where, sink, member, reported)
            stack.extend((value, f"{where}.{key}") for key, value in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((value, f"{where}[{i}]") for i, value in reversed(list(enumerate(node))))


def _check_object(
    node: dict[str, Any], where: str, sink: FindingSink, member: str | None, reported: set[tuple[str, str]]
) -> None:
    if node.get("class_name") == "Lambda":
        layer = _layer_name(node)
        sink.add(LAMBDA, Severity.HIGH, f"Lambda layer {layer!r} holds Python code that runs when the "
                 "model is loaded or called", member=member, evidence=where)
    for rule, ref, message in _load_time_effects(node):
        if (rule, ref) not in reported:
            reported.add((rule, ref))
            sink.add(rule, Severity.HIGH, message, member=member, evidence=where)
    judged = _judge(node)
    if judged is not None and judged[:2] not in reported:
        rule, ref, message = judged
        reported.add((rule, ref))
        severity = Severity.HIGH if rule == DANGEROUS else Severity.MEDIUM
        sink.add(rule, severity, message, member=member, evidence=where)


def _judge(node: dict[str, Any]) -> tuple[str, str, str] | None:
    """(rule, reference, message) for the worst reference one config object makes."""
    refs = _references(node)
    called = node.get("config") if node.get("class_name") == "function" else node.get("registered_name")
    if called in DANGEROUS_FUNCTIONS:
        ref = f"{node.get('module')}.{called}"
        return DANGEROUS, ref, f"Keras config calls {ref} while loading (a known safe_mode bypass)"
    for ref in refs:
        if ref.split(".", 1)[0] in DANGEROUS_MODULES:
            return DANGEROUS, ref, f"Keras config references system module {ref!r}: the loader imports it"
    for ref in refs:
        if ref.split(".", 1)[0] not in KERAS_PACKAGES:
            return EXTERNAL, ref, (f"Keras config references {ref!r} (class {node.get('class_name')!r}): "
                                   "loading imports code outside Keras")
    return None


def _load_time_effects(node: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Layers that load files when rebuilt, and any path/URL among the object's config values."""
    found: list[tuple[str, str, str]] = []
    config = node.get("config")
    values = config if isinstance(config, dict) else {}
    cls = node.get("class_name")
    if cls in LOADING_LAYERS:
        target = str(values.get("filepath", "?"))[:200]
        found.append((LOADING_LAYER, f"{cls}:{target}", f"{cls} layer {_layer_name(node)!r} loads a SavedModel "
                      f"from {target!r} when the model is loaded"))
    if cls in LOOKUP_LAYERS and isinstance(values.get("vocabulary"), str):
        vocab = values["vocabulary"][:200]
        found.append((LOADING_LAYER, f"{cls}:{vocab}", f"{cls} layer {_layer_name(node)!r} reads its vocabulary "
                      f"from {vocab!r} when the model is loaded"))
    for key, value in [*node.items(), *values.items()]:
        if isinstance(value, str) and _PATHLIKE.match(value) and not _is_module_name(key):
            found.append((CONFIG_PATH, value[:200], f"Keras config value {key}={value[:200]!r} is a path or URL"))
    return found


def _is_module_name(key: str) -> bool:
    return key in ("module", "registered_name", "class_name")


def _layer_name(node: dict[str, Any]) -> str:
    config = node.get("config")
    name = config.get("name") if isinstance(config, dict) else None
    return str(name or node.get("name") or "?")


def _references(node: dict[str, Any]) -> list[str]:
    refs = []
    if isinstance(node.get("module"), str):
        refs.append(node["module"])
    registered = node.get("registered_name")
    if isinstance(registered, str) and ">" in registered:
        refs.append(registered.split(">", 1)[0])  # "package>Name" from register_keras_serializable
    return refs


_SCANS: dict[str, Callable[[ScanContext, BudgetBlob, EngineRun], None]] = {
    Format.KERAS: _scan_keras_zip,
    Format.HDF5: _scan_h5,
}
