"""NeMo / Hydra surfaces (app/core/loaders/map/nemo.yaml). Inert text only.

Read from hydra-core 1.3.8 (``_internal/instantiate/_instantiate2.py``: ``_target_`` resolved by
``_internal/utils.py`` _locate and called with the node's keys, ``_args_`` positional, ``_partial_``
returning a partial) and nemo-toolkit 3.0.0 (``core/classes/common.py`` safe_instantiate: only
ALLOWED_TARGET_PREFIXES for model configs; plain Hydra and older releases call anything).
"""

from __future__ import annotations

import io
import tarfile

from tests.corpus.registry import Case, register_all

FAMILY = "loader-nemo"
PAYLOAD = "echo hfvet-test"


def target_os_system() -> dict[str, bytes]:
    config = ("name: tiny-asr\nmodel:\n  sample_rate: 16000\n  preprocessor:\n"
              "    _target_: os.system\n    _args_: [\"" + PAYLOAD + "\"]\n")
    return {"config.yaml": config.encode()}


def target_partial_subprocess() -> dict[str, bytes]:
    config = ("trainer:\n  callbacks:\n    - _target_: subprocess.run\n      _partial_: true\n"
              "      args: [\"sh\", \"-c\", \"" + PAYLOAD + "\"]\n")
    return {"conf/train.yaml": config.encode()}


def target_local_callback() -> dict[str, bytes]:
    config = ("exp_manager:\n  callbacks:\n    - _target_: callbacks.warmup.WarmupCallback\n      steps: 10\n")
    callback = ("import os\n\n\nclass WarmupCallback:\n    def __init__(self, steps=10):\n"
                "        os.system(" + repr(PAYLOAD) + ")\n        self.steps = steps\n")
    return {"config.yaml": config.encode(), "callbacks/warmup.py": callback.encode(),
            "callbacks/__init__.py": b'"""Training callbacks."""\n'}


def vendor_asr_model_config() -> dict[str, bytes]:
    # The shape of NeMo's FastConformer CTC configs (examples/asr/conf/fastconformer).
    config = ("name: FastConformer-CTC-BPE\nmodel:\n  sample_rate: 16000\n  tokenizer:\n    dir: tokenizer\n"
              "    type: bpe\n  preprocessor:\n"
              "    _target_: nemo.collections.asr.modules.AudioToMelSpectrogramPreprocessor\n"
              "    sample_rate: 16000\n    features: 80\n  spec_augment:\n"
              "    _target_: nemo.collections.asr.modules.SpectrogramAugmentation\n    freq_masks: 2\n"
              "  encoder:\n    _target_: nemo.collections.asr.modules.ConformerEncoder\n    feat_in: 80\n"
              "    n_layers: 17\n  decoder:\n    _target_: nemo.collections.asr.modules.ConvASRDecoder\n"
              "    feat_in: 512\n  optim:\n    name: adamw\n    lr: 0.001\n    sched:\n      name: CosineAnnealing\n"
              "trainer:\n  devices: -1\n  callbacks:\n    - _target_: lightning.pytorch.callbacks.LearningRateMonitor\n"
              "  logger:\n    _target_: lightning.pytorch.loggers.TensorBoardLogger\n    save_dir: logs\n")
    return {"model_config.yaml": config.encode()}


def _nemo(config: str) -> bytes:
    """A `.nemo` as NeMo writes it (SaveRestoreConnector._make_nemo_file_from_folder: an uncompressed tar)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in (("./model_config.yaml", config.encode()), ("./tokenizer/vocab.txt", b"a\nb\n")):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def archive_target_os_system() -> dict[str, bytes]:
    config = "sample_rate: 16000\npreprocessor:\n  _target_: os.system\n  _args_: [\"" + PAYLOAD + "\"]\n"
    return {"model.nemo": _nemo(config)}


def vendor_archive_asr() -> dict[str, bytes]:
    config = ("sample_rate: 16000\npreprocessor:\n"
              "  _target_: nemo.collections.asr.modules.AudioToMelSpectrogramPreprocessor\n  features: 80\n"
              "encoder:\n  _target_: nemo.collections.asr.modules.ConformerEncoder\n  feat_in: 80\n")
    return {"parakeet-ctc.nemo": _nemo(config)}


register_all([
    Case(FAMILY, "target-os-system", "hostile", target_os_system, rule="import-target-dangerous",
         why="instantiate imports os and calls system(*_args_): a shell runs (hydra < 1.3.8 has no blocklist)"),
    Case(FAMILY, "target-partial-subprocess", "hostile", target_partial_subprocess, rule="import-target-dangerous",
         why="_partial_ defers the call, but the trainer calls each callback: subprocess.run still runs"),
    Case(FAMILY, "target-local-callback", "hostile", target_local_callback, rule="remote-code-dangerous",
         why="_locate imports callbacks/warmup.py from the repo on sys.path and builds WarmupCallback: os.system"),
    Case(FAMILY, "archive-target-os-system", "hostile", archive_target_os_system, rule="import-target-dangerous",
         why="restore_from untars model.nemo and instantiates model_config.yaml: _target_ os.system runs"),
    Case(FAMILY, "vendor-archive-asr", "benign", vendor_archive_asr, vendor="approve",
         why="a .nemo whose model_config.yaml targets only NeMo modules (the shape of nvidia's ASR checkpoints)"),
    Case(FAMILY, "vendor-asr-model-config", "benign", vendor_asr_model_config, vendor="approve",
         why="NeMo's FastConformer config: every _target_ in NeMo's own allowlist (nemo.collections, lightning)"),
])
