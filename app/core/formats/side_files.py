"""Raw weight blobs: files a loader of the repo's layout reads as bytes, never unpickles.

A float array can start with ``0x80 0x02``, which is also how a protocol-2 pickle starts, so
the head alone calls such a blob a pickle (``detect.looks_like_pickle``), and walking it as one
finds a "broken pickle" in every ONNX external-data file or OpenVINO ``.bin`` that happens to
start so. What decides is who reads the file (issue 22, item 5): here a blob is ``raw-data``
only when all three hold, each from the loader's source:
- a loader of the layout reads it as bytes: onnxruntime / ``onnx.load`` for a location named
  by an ONNX model's external data (``formats.onnx_model``); OpenVINO's ``read_model`` for the
  ``.bin`` beside an IR ``.xml`` (``<net ...>``); TensorFlow's ``BundleReader`` for the
  ``.data-NNNNN-of-NNNNN`` shards beside a checkpoint ``.index``; Core ML for the weight files of
  an ``.mlpackage``; TensorFlow.js for the ``paths`` of a ``model.json`` weights manifest; MLC/TVM
  for the ``dataPath`` of an ``ndarray-cache.json``;
- no pickle loader reaches it by name: not a ``.pt``/``.pkl``/``.npy``... file, not one of the
  ``.bin`` names transformers, peft, diffusers and Trainer pass to ``torch.load``
  (``pytorch_model*.bin``, ``adapter_model.bin``, ``training_args.bin``...), not a shard a
  ``*.bin.index.json`` names;
- the bytes themselves run nothing as a pickle: the stream breaks (or stops) before any import,
  call or persistent-load hook (``pickle_sniff.acts_before_break``).
Anything else stays a pickle and is walked as one.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Sequence

from app.core.formats.blobs import BudgetBlob
from app.core.formats.detect import Format
from app.core.formats.external_paths import escape_reason, resolve
from app.core.formats.onnx_model import OnnxModel, walk_model
from app.core.formats.pickle_sniff import acts_before_break
from app.core.formats.ranged_wire import Walk
from app.core.formats.window import ByteWindow
from app.core.limits import Limits
from app.core.manifest import ManifestFile
from app.core.ports import Blob

OpenBlob = Callable[[str], Blob]

_PICKLE_SUFFIX = re.compile(r"\.(pt|pth|ckpt|pkl|pickle|joblib|dill|sav|npy|npz|tar)$", re.IGNORECASE)
# .bin names that transformers (modeling_utils WEIGHTS_NAME, Trainer TRAINING_ARGS_NAME), peft
# (adapter_model.bin), diffusers (diffusion_pytorch_model.bin, pytorch_lora_weights.bin) and
# sentence-transformers pass to torch.load.
_TORCH_BIN = re.compile(
    r"^(pytorch_model|diffusion_pytorch_model|adapter_model|training_args|optimizer|scheduler|scaler|"
    r"rng_state|pytorch_lora_weights|learned_embeds|model_state|custom_checkpoint)([-_.][^/]*)?\.bin$",
    re.IGNORECASE)
_TF_SHARD = re.compile(r"^(?P<prefix>.+)\.data-\d{5}-of-\d{5}$")
_MAX_MODELS = 16  # ONNX models read to find who names one blob
_MAX_JSON = 4 * 1024 * 1024


def side_file_format(path: str, head: bytes, size: int, fmt: str, files: Sequence[ManifestFile],
                     open_blob: OpenBlob, limits: Limits) -> str:
    """``Format.RAW_DATA`` for a pickle-looking blob a layout reads raw; ``fmt`` otherwise."""
    if fmt != Format.PICKLE or acts_before_break(head, size):
        return fmt
    try:
        if unpickled_by_name(path, files, open_blob) or not raw_reader(path, files, open_blob, limits):
            return fmt
    except Exception:  # noqa: BLE001 - a layout file that cannot be read claims nothing: stay a pickle
        return fmt
    return Format.RAW_DATA


def unpickled_by_name(path: str, files: Sequence[ManifestFile], open_blob: OpenBlob) -> bool:
    name = posixpath.basename(path)
    if _PICKLE_SUFFIX.search(name) or _TORCH_BIN.match(name):
        return True
    folder = posixpath.dirname(path)
    for entry in files:
        if posixpath.dirname(entry.path) == folder and entry.path.endswith(".bin.index.json"):
            index = _json(entry, open_blob)
            weight_map = index.get("weight_map") if isinstance(index, dict) else None
            if isinstance(weight_map, dict) and name in {str(v) for v in weight_map.values()}:
                return True
    return False


def raw_reader(path: str, files: Sequence[ManifestFile], open_blob: OpenBlob, limits: Limits) -> str | None:
    """The loader that reads ``path`` as raw bytes by the repo's layout, or None."""
    paths = {f.path: f for f in files}
    for check in (_openvino, _tf_checkpoint, _coreml_package):
        found = check(path, paths, open_blob)
        if found:
            return found
    return _manifest_json(path, paths, open_blob) or _onnx_external(path, files, open_blob, limits)


def _openvino(path: str, paths: dict[str, ManifestFile], open_blob: OpenBlob) -> str | None:
    xml = path[: -len(".bin")] + ".xml" if path.endswith(".bin") else None
    if xml is None or xml not in paths:
        return None
    head = open_blob(xml).read(0, 4096)
    return f"OpenVINO's read_model: the weights of the IR {xml}" if b"<net" in head else None


def _tf_checkpoint(path: str, paths: dict[str, ManifestFile], _open: OpenBlob) -> str | None:
    match = _TF_SHARD.match(path)
    if match and match["prefix"] + ".index" in paths:
        return f"TensorFlow's checkpoint reader (BundleReader): a data shard of {match['prefix']}.index"
    return None


def _coreml_package(path: str, paths: dict[str, ManifestFile], _open: OpenBlob) -> str | None:
    marker = ".mlpackage/Data/com.apple.CoreML/weights/"
    if marker in path:
        package = path[: path.index(marker) + len(".mlpackage")]
        if package + "/Manifest.json" in paths:
            return f"Core ML: a weight file of the package {package}"
    return None


def _manifest_json(path: str, paths: dict[str, ManifestFile], open_blob: OpenBlob) -> str | None:
    """TensorFlow.js ``model.json`` (weightsManifest[].paths) and MLC ``ndarray-cache.json``
    (records[].dataPath) name their raw shards relative to their folder."""
    folder, name = posixpath.dirname(path), posixpath.basename(path)
    for manifest, reader in (("model.json", "TensorFlow.js (model.json weightsManifest)"),
                             ("ndarray-cache.json", "MLC/TVM's ndarray cache (ndarray-cache.json)")):
        entry = paths.get(posixpath.join(folder, manifest))
        if entry is not None and name in _shard_names(_json(entry, open_blob)):
            return reader
    return None


def _shard_names(document: object) -> set[str]:
    names: set[str] = set()
    if not isinstance(document, dict):
        return names
    for group in document.get("weightsManifest") or []:
        if isinstance(group, dict):
            names.update(str(p) for p in group.get("paths") or [])
    for record in document.get("records") or []:
        if isinstance(record, dict) and "dataPath" in record:
            names.add(str(record["dataPath"]))
    return names


def _onnx_external(path: str, files: Sequence[ManifestFile], open_blob: OpenBlob, limits: Limits) -> str | None:
    """An ONNX model at or above the blob's folder whose external data names it."""
    folder = posixpath.dirname(path)
    models = [f for f in files if f.path.lower().endswith(".onnx") and _at_or_above(posixpath.dirname(f.path), folder)]
    for model_file in sorted(models, key=lambda f: f.path)[:_MAX_MODELS]:
        model = OnnxModel()
        try:
            walk_model(Walk(ByteWindow(BudgetBlob(open_blob(model_file.path), limits.max_read_bytes_per_file))),
                       model)
        except Exception:  # noqa: BLE001, S112 - a model that does not parse names nothing (its own scan says so)
            continue
        for tensor in model.external:
            for location in tensor.values("location"):
                if escape_reason(location) is None and resolve(model_file.path, location) == path:
                    return f"onnxruntime / onnx.load: external data of {model_file.path}"
    return None


def _at_or_above(ancestor: str, folder: str) -> bool:
    return ancestor == "" or folder == ancestor or folder.startswith(ancestor + "/")


def _json(entry: ManifestFile, open_blob: OpenBlob) -> object:
    if entry.size > _MAX_JSON:
        return None
    try:
        return json.loads(open_blob(entry.path).read(0, entry.size))
    except (ValueError, UnicodeDecodeError):
        return None
