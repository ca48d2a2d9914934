"""Hard-benign corpus (issue 11): files real repos ship, written the way their libraries write them.

Each case must never be rejected, at any tier. Under the default policy a vendor-official repo is
approved where the content is plainly data (state dicts, arrays, labels, metadata) and goes to
review, for the stated policy rule, where a load really would call classes no allowlist vouches
for (a Trainer's ``training_args.bin``, a scikit-learn estimator). Built at test time; payloads
are ordinary values; nothing is ever loaded.
"""

from __future__ import annotations

import argparse
import bz2
import collections
import datetime
import gzip
import io
import json
import pathlib
import pickle
import random
import struct
import tarfile
import tempfile
import typing
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from tests.corpus import flax_writer, joblib_writer, torch_writer
from tests.corpus.registry import Case, one_file, register_all
from tests.corpus.stand_ins import Device, instance, modules, stand_in, stand_in_enum
from tests.corpus.torch_writer import Tensor

FAMILY = "hard-benign"
UNKNOWN_CALLS = "unknown-pickle-global"  # the default policy's rule for calls no allowlist vouches for


# -- transformers Trainer: training_args.bin is torch.save(self.args) of the TrainingArguments dataclass
def _training_args() -> tuple[Any, tuple[Any, ...]]:
    """TrainingArguments as a Trainer saves it: a dataclass whose __dict__ holds str enums
    (ExplicitEnum pickles as ``cls(value)``), lists, dicts, paths, a nested AcceleratorConfig
    dataclass, the cached ``_setup_devices`` torch.device and accelerate's PartialState (a Borg
    whose shared __dict__ holds the DistributedType enum and the device)."""
    utils = "transformers.trainer_utils"
    interval = stand_in_enum(utils, "IntervalStrategy", {"NO": "no", "STEPS": "steps", "EPOCH": "epoch"})
    save = stand_in_enum(utils, "SaveStrategy", {"STEPS": "steps", "BEST": "best"})
    hub = stand_in_enum(utils, "HubStrategy", {"EVERY_SAVE": "every_save", "END": "end"})
    scheduler = stand_in_enum(utils, "SchedulerType", {"LINEAR": "linear", "COSINE": "cosine"})
    optim = stand_in_enum("transformers.training_args", "OptimizerNames", {"ADAMW_TORCH": "adamw_torch"})
    dist = stand_in_enum("accelerate.utils.dataclasses", "DistributedType", {"MULTI_GPU": "MULTI_GPU"})
    args_cls = stand_in("transformers.training_args", "TrainingArguments")
    accel_cls = stand_in("transformers.trainer_pt_utils", "AcceleratorConfig")
    state_cls = stand_in("accelerate.state", "PartialState")
    device = Device("cuda", 0)
    state = instance(state_cls, _cpu=False, backend="nccl", device=device, debug=False,
                     distributed_type=dist.MULTI_GPU, num_processes=2, process_index=0,  # type: ignore[attr-defined]
                     local_process_index=0, fork_launched=False)
    accel = instance(accel_cls, split_batches=False, dispatch_batches=None, even_batches=True,
                     use_seedable_sampler=True, non_blocking=False, gradient_accumulation_kwargs=None,
                     use_configured_state=False)
    out = "/root/autodl-tmp/outputs/bert-base-chinese-finetuned"  # cloud notebooks run as root
    args = instance(
        args_cls, output_dir=out, overwrite_output_dir=False, do_train=True, do_eval=True,
        eval_strategy=interval.STEPS, save_strategy=save.STEPS, logging_strategy=interval.STEPS,  # type: ignore[attr-defined]
        hub_strategy=hub.EVERY_SAVE, lr_scheduler_type=scheduler.LINEAR, optim=optim.ADAMW_TORCH,  # type: ignore[attr-defined]
        learning_rate=5e-5, weight_decay=0.01, adam_beta1=0.9, adam_beta2=0.999, num_train_epochs=3.0,
        max_steps=-1, warmup_ratio=0.0, lr_scheduler_kwargs={}, logging_dir=f"{out}/runs/Dec01_10-00-00_gpu-0",
        logging_steps=500, save_steps=500, save_total_limit=2, seed=42, bf16=True, fp16=False,
        report_to=["tensorboard", "wandb"], run_name=out, hub_model_id="acme/bert-base-chinese-finetuned",
        hub_token=None, push_to_hub=True, resume_from_checkpoint=None, fsdp=[], debug=[],
        fsdp_config={"min_num_params": 0, "xla": False, "xla_fsdp_v2": False, "xla_fsdp_grad_ckpt": False},
        accelerator_config=accel, deepspeed=None, deepspeed_plugin=None, ddp_timeout=1800,
        dataloader_num_workers=4, label_names=None, include_for_metrics=[], torch_compile=False,
        _n_gpu=1, _setup_devices=device, distributed_state=state,
    )
    return args, (args_cls, accel_cls, state_cls, interval, save, hub, scheduler, optim, dist, Device)


def training_args_raw() -> bytes:
    args, classes = _training_args()
    with modules(*classes):
        return pickle.dumps(args, protocol=2)  # torch.save's protocol


def training_args_zip() -> bytes:
    """torch >= 1.6 writes the same pickle as training_args/data.pkl in a zip (no tensors)."""
    args, classes = _training_args()
    with modules(*classes):
        return torch_writer.save_zip(args, "training_args")


# -- scikit-learn models, written by joblib.dump and by pickle.dump
def _sklearn_pipeline() -> tuple[Any, tuple[Any, ...]]:
    """Pipeline([("scaler", StandardScaler()), ("clf", LogisticRegression())]) after fit():
    BaseEstimator.__getstate__ adds _sklearn_version; fitted attributes end in "_";
    classes_ of string labels and feature_names_in_ (fit on a DataFrame) are object arrays."""
    pipe_cls = stand_in("sklearn.pipeline", "Pipeline")
    scaler_cls = stand_in("sklearn.preprocessing._data", "StandardScaler")
    logreg_cls = stand_in("sklearn.linear_model._logistic", "LogisticRegression")
    features = np.array(["sepal_length", "sepal_width", "petal_length", "petal_width"], dtype=object)
    scaler = instance(scaler_cls, with_mean=True, with_std=True, copy=True, feature_names_in_=features,
                      n_features_in_=4, n_samples_seen_=np.int64(150), mean_=np.linspace(1, 6, 4),
                      var_=np.linspace(0.1, 3, 4), scale_=np.sqrt(np.linspace(0.1, 3, 4)),
                      _sklearn_version="1.5.2")
    clf = instance(logreg_cls, penalty="l2", dual=False, tol=1e-4, C=1.0, fit_intercept=True,
                   intercept_scaling=1, class_weight=None, random_state=0, solver="lbfgs", max_iter=100,
                   multi_class="deprecated", verbose=0, warm_start=False, n_jobs=None, l1_ratio=None,
                   n_features_in_=4, classes_=np.array(["setosa", "versicolor", "virginica"], dtype=object),
                   n_iter_=np.array([17], dtype=np.int32), coef_=np.arange(12, dtype="f8").reshape(3, 4),
                   intercept_=np.zeros(3), _sklearn_version="1.5.2")
    pipe = instance(pipe_cls, steps=[("scaler", scaler), ("clf", clf)], memory=None, verbose=False,
                    _sklearn_version="1.5.2")
    return pipe, (pipe_cls, scaler_cls, logreg_cls)


def sklearn_joblib() -> bytes:
    pipe, classes = _sklearn_pipeline()
    return joblib_writer.dump(pipe, *classes)


def sklearn_joblib_compressed(kind: str) -> bytes:
    """joblib.dump(..., compress=3 | "gzip" | "bz2" | "xz"): the same stream, compressed whole."""
    raw = sklearn_joblib()
    packers = {"zlib": lambda: zlib.compress(raw, 3), "gzip": lambda: gzip.compress(raw),
               "bz2": lambda: bz2.compress(raw), "xz": lambda: __import__("lzma").compress(raw)}
    return packers[kind]()


def sklearn_pickle() -> bytes:
    pipe, classes = _sklearn_pipeline()
    with modules(*classes):
        return pickle.dumps(pipe, protocol=4)


# -- torch checkpoints
def _bert_state_dict(layers: int) -> collections.OrderedDict[str, Tensor]:
    """A BERT-style state dict: 5 embedding tensors, 16 per layer, a pooler: 16 * layers + 7."""
    hidden = 8  # tiny tensors: the shape of the pickle matters, not the size of the weights
    names: list[tuple[str, tuple[int, ...]]] = [
        ("bert.embeddings.word_embeddings.weight", (32, hidden)),
        ("bert.embeddings.position_embeddings.weight", (16, hidden)),
        ("bert.embeddings.token_type_embeddings.weight", (2, hidden)),
        ("bert.embeddings.LayerNorm.weight", (hidden,)), ("bert.embeddings.LayerNorm.bias", (hidden,)),
    ]
    for i in range(layers):
        pre = f"bert.encoder.layer.{i}"
        for part in ("attention.self.query", "attention.self.key", "attention.self.value",
                     "attention.output.dense", "intermediate.dense", "output.dense"):
            names += [(f"{pre}.{part}.weight", (hidden, hidden)), (f"{pre}.{part}.bias", (hidden,))]
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            names += [(f"{pre}.{norm}.weight", (hidden,)), (f"{pre}.{norm}.bias", (hidden,))]
    names += [("bert.pooler.dense.weight", (hidden, hidden)), ("bert.pooler.dense.bias", (hidden,))]
    state = collections.OrderedDict((name, Tensor(shape, fill=i % 251)) for i, (name, shape) in enumerate(names))
    state._metadata = collections.OrderedDict([("", {"version": 1})])  # type: ignore[attr-defined]
    return state


def legacy_pytorch_model_bin() -> bytes:
    """A pre-1.6 pytorch_model.bin: 24 layers, 391 tensors, one storage each."""
    return torch_writer.save_legacy(_bert_state_dict(24))


def zip_checkpoint_with_optimizer() -> bytes:
    """A training checkpoint: model, AdamW state (step, exp_avg, exp_avg_sq per parameter),
    param_groups, scheduler state, epoch and step counters, as people torch.save them."""
    model = _bert_state_dict(2)
    state = {i: {"step": Tensor((), fill=10), "exp_avg": Tensor(t.shape), "exp_avg_sq": Tensor(t.shape)}
             for i, t in enumerate(list(model.values())[:6])}
    group = {"lr": 5e-5, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.01, "amsgrad": False,
             "foreach": None, "maximize": False, "capturable": False, "differentiable": False,
             "fused": None, "params": list(range(6))}
    scheduler = {"base_lrs": [5e-5], "last_epoch": 1000, "_step_count": 1001, "verbose": False,
                 "_get_lr_called_within_step": False, "_last_lr": [4.2e-5], "lr_lambdas": [None]}
    checkpoint = {"model": model, "optimizer": {"state": state, "param_groups": [group]},
                  "lr_scheduler": scheduler, "epoch": 3, "global_step": 1000, "best_metric": 0.91}
    return torch_writer.save_zip(checkpoint, "checkpoint")


def fp8_state_dict_zip() -> bytes:
    """An FP8-quantized pytorch_model.bin (torch >= 2.1): float8 weights as UntypedStorage +
    _rebuild_tensor_v3 with the dtype, per-tensor float32 scales beside them."""
    state: collections.OrderedDict[str, Tensor] = collections.OrderedDict()
    for i in range(4):
        pre = f"model.layers.{i}.mlp.down_proj"
        state[f"{pre}.weight"] = Tensor((16, 16), storage="float8_e4m3fn", fill=i + 1)
        state[f"{pre}.weight_scale"] = Tensor((), storage="FloatStorage")
        state[f"{pre}.input_scale"] = Tensor((), storage="FloatStorage")
    state["lm_head.weight"] = Tensor((8, 16), storage="float8_e5m2")
    return torch_writer.save_zip(state, "pytorch_model")


def rng_state_pth() -> bytes:
    """Trainer's rng_state.pth: python's random state (ints), numpy's (an array, by numpy's own
    reduce), torch's CPU generator state (a ByteTensor)."""
    np_state = np.random.RandomState(0).get_state()
    rng = {"python": random.Random(0).getstate(), "numpy": np_state,
           "cpu": Tensor((5056,), storage="ByteStorage", fill=7)}
    return torch_writer.save_zip(rng, "rng_state")


def lightning_ckpt() -> bytes:
    """A PyTorch Lightning 1.x ``.ckpt`` (torch.save of a dict): with omegaconf installed, 1.x
    saved ``model.hparams`` itself, an AttributeDict (a dict subclass: NEWOBJ, then SETITEMS
    through its own __setitem__) holding paths; ModelCheckpoint's state holds more paths."""
    attribute_dict = stand_in("pytorch_lightning.utilities.parsing", "AttributeDict", (dict,))
    hparams = attribute_dict(lr=1e-3, model_name="bert-base-uncased", data_dir="/root/data/glue",
                             cache_dir="~/.cache/huggingface", batch_size=32)
    best = "/root/checkpoints/epoch=3-step=1000.ckpt"
    callback = {"monitor": "val_loss", "best_model_score": Tensor((), fill=1), "best_model_path": best,
                "current_score": Tensor((), fill=1), "dirpath": "/root/checkpoints",
                "best_k_models": {best: Tensor(())},
                "kth_best_model_path": best, "kth_value": Tensor(()), "last_model_path": ""}
    checkpoint = {
        "epoch": 3, "global_step": 1000, "pytorch-lightning_version": "1.1.8",
        "state_dict": _bert_state_dict(1),
        "callbacks": {"ModelCheckpoint{'monitor': 'val_loss', 'mode': 'min'}": callback},
        "optimizer_states": [{"state": {}, "param_groups": [{"lr": 1e-3, "params": [0, 1]}]}],
        "lr_schedulers": [], "hparams_name": "kwargs", "hyper_parameters": hparams,
    }
    with modules(attribute_dict):
        return torch_writer.save_zip(checkpoint, "last")


def checkpoint_with_plain_python_values() -> bytes:
    """What scripts put beside the weights: argparse args holding pathlib paths (PosixPath
    pickles as ``pathlib.PosixPath('/root', 'out')``: a call with path arguments), datetimes,
    a timedelta and numpy scalars (``numpy._core.multiarray.scalar(dtype, bytes)``)."""
    args = argparse.Namespace(output_dir=pathlib.PurePosixPath("/root/out/run1"),
                              data=pathlib.PosixPath("data/x.jsonl"), seed=42, fp16=True)
    checkpoint = {"model": _bert_state_dict(1), "args": args, "saved_at": datetime.datetime(2024, 5, 1, 12, 0),
                  "timeout": datetime.timedelta(seconds=1800), "best_metric": np.float64(0.91), "step": np.int64(1000)}
    return torch_writer.save_zip(checkpoint, "model")


def numpy_random_states() -> bytes:
    """Estimators keep ``random_state_``: a RandomState and a Generator pickle through
    ``numpy.random._pickle`` constructors that take a bit-generator name."""
    return pickle.dumps({"random_state_": np.random.RandomState(0), "rng": np.random.default_rng(0)}, protocol=4)


def _npy_pickled(value: object) -> bytes:
    out = io.BytesIO()
    np.save(out, np.array(value, dtype=object), allow_pickle=True)  # an object array: a pickle after the header
    return out.getvalue()


def tree_nodes_pickle() -> bytes:
    """sklearn's tree nodes: a structured array of 8 fields, pickled by numpy's own reduce."""
    nodes = np.zeros(7, dtype=[("left_child", "<i8"), ("right_child", "<i8"), ("feature", "<i8"),
                               ("threshold", "<f8"), ("impurity", "<f8"), ("n_node_samples", "<i8"),
                               ("weighted_n_node_samples", "<f8"), ("missing_go_to_left", "u1")])
    return pickle.dumps({"nodes": nodes, "values": np.zeros((7, 1, 3))}, protocol=4)


def nemo_dictconfig_ckpt() -> bytes:
    """A NeMo/Lightning 2.x ``.ckpt`` whose hyper_parameters is an omegaconf DictConfig (saved
    as is when it is a Container): NEWOBJ + BUILD of its __getstate__ dict, nodes holding paths."""
    dict_config = stand_in("omegaconf.dictconfig", "DictConfig")
    metadata = stand_in("omegaconf.base", "ContainerMetadata")
    any_node = stand_in("omegaconf.nodes", "AnyNode")
    config = dict_config.__new__(dict_config)

    def node(key: str, value: object) -> Any:
        meta = instance(metadata, ref_type=typing.Any, object_type=None, optional=True, key=key, flags={})
        return instance(any_node, _val=value, _metadata=meta, _parent=config)

    config.__dict__.update(
        _content={"train_ds": node("train_ds", "/root/data/train_manifest.json"), "lr": node("lr", 1e-3),
                  "tokenizer_dir": node("tokenizer_dir", "~/tokenizers/spe")},
        _metadata=instance(metadata, ref_type=typing.Any, object_type=dict, optional=True, key=None, flags={},
                           key_type=typing.Any, element_type=typing.Any),
        _parent=None, _flags_cache=None)
    checkpoint = {"state_dict": _bert_state_dict(1), "hyper_parameters": config, "pytorch-lightning_version": "2.0.7"}
    with modules(dict_config, metadata, any_node):
        return torch_writer.save_zip(checkpoint, "megatron")


def nemo_archive(compressed: bool) -> bytes:
    """A ``.nemo`` file: a tar (gzipped or not) of model_config.yaml, model_weights.ckpt (a torch
    zip of the state dict) and the tokenizer's files, as NeMo's save_to writes it."""
    members = {
        "./model_config.yaml": b"target: nemo.collections.asr.models.EncDecCTCModelBPE\nsample_rate: 16000\n",
        "./model_weights.ckpt": torch_writer.save_zip(_bert_state_dict(1), "model_weights"),
        "./tokenizer.model": SENTENCEPIECE_HEAD,
    }
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz" if compressed else "w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


# -- numpy, GGUF, safetensors
def _npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array, allow_pickle=False)
    return out.getvalue()


def embeddings_npz() -> bytes:
    """np.savez_compressed of sentence embeddings, their ids and a label vocabulary."""
    out = io.BytesIO()
    np.savez_compressed(out, embeddings=np.ones((64, 32), dtype="f2"), ids=np.arange(64, dtype="i8"),
                        labels=np.array(["neg", "neu", "pos"]), mask=np.ones(64, dtype=bool))
    return out.getvalue()


def gguf_with_metadata() -> bytes:
    """A llama.cpp GGUF: architecture keys, a token list and the Llama-3 chat template."""
    import gguf

    template = ("{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>"
                "\\n\\n' + message['content'] | trim + '<|eot_id|>' }}{% endfor %}"
                "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.gguf"
        writer = gguf.GGUFWriter(str(path), "llama")
        writer.add_name("Tiny Llama")
        writer.add_context_length(2048)
        writer.add_tokenizer_model("gpt2")
        writer.add_token_list(["<|begin_of_text|>", "hello", "world", "<|eot_id|>"])
        writer.add_chat_template(template)
        writer.add_string("general.source.url", "https://huggingface.co/meta-llama/Llama-3.2-1B")
        writer.add_tensor("token_embd.weight", np.ones((4, 8), dtype=np.float32))
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        return path.read_bytes()


def safetensors_with_metadata() -> bytes:
    """safetensors as save_file writes it, with __metadata__ the way PEFT/mergekit fill it."""
    tensors = {"model.embed_tokens.weight": ("BF16", [4, 8]), "lm_head.weight": ("F32", [4, 8])}
    header: dict[str, Any] = {"__metadata__": {
        "format": "pt", "base_model": "meta-llama/Llama-3.2-1B",
        "mergekit": json.dumps({"merge_method": "slerp", "models": ["https://huggingface.co/a/b"]})}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = shape[0] * shape[1] * (2 if dtype == "BF16" else 4)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # safetensors pads the header to 8 bytes with spaces
    return struct.pack("<Q", len(raw)) + raw + b"\x00" * offset


# -- binary files beside the weights (none a pickle; several start with opcode bytes)
_NOISE = bytes((i * 131 + 7) % 256 for i in range(4000))
SENTENCEPIECE_HEAD = b"\n\x0b\n\x05<unk>\x15\x00\x00\x00\x00\x18\x02"  # ModelProto.pieces[0]


def _png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + bytes(range(48)) for _ in range(16))
    header = struct.pack(">IIBBBBB", 16, 16, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


ASSETS = {  # a model card's images, audio samples and paper: 0x89 NEWFALSE, R REDUCE, I INT...
    "assets/architecture.png": _png(),
    "assets/sample.wav": b"RIFF" + struct.pack("<I", 4036) + b"WAVEfmt "
    + struct.pack("<IHHIIHH", 16, 1, 1, 16000, 32000, 2, 16) + b"data" + _NOISE,
    "assets/speech.mp3": b"ID3\x03\x00\x00\x00\x00\x00\x0f" + _NOISE,
    "assets/paper.pdf": b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n" + _NOISE,
    "tokenizer.model": SENTENCEPIECE_HEAD + _NOISE,
    "model.onnx": b"\x08\x07\x12\x07pytorch\x1a\x052.1.0" + _NOISE,
}
GGML = {  # llama.cpp's pre-GGUF files, magic little-endian: "tjgg" is TUPLE then LONG_BINGET
    "ggml-model-q4_0.bin": b"tjgg" + struct.pack("<I8i", 3, 32000, 4096, 256, 32, 32, 128, 2, 0) + _NOISE,
    "ggml-model-f16.bin": b"lmgg" + struct.pack("<7i", 32000, 4096, 256, 32, 32, 128, 1) + _NOISE,
    "ggml-adapter-model.bin": b"algg" + struct.pack("<3i", 1, 8, 16) + _NOISE,
}
SPACY = {  # spaCy/thinc serialize with msgpack: component "model" files and vocab tables
    "ner/model": flax_writer.pack({"weights": b"\x00" * 64, "shapes": [4, 16]}),
    "vocab/key2row": flax_writer.pack({"cat": 0, "dog": 1, "bird": 2}),
    "vocab/strings.json": b'["cat", "dog", "bird"]',
}


# -- text beside the weights whose first bytes are pickle opcodes (c GLOBAL, ( MARK, 0 POP, I INT...)
TEXT = {
    # `ctranslate2\nsentencepiece\n` is GLOBAL translate2.sentencepiece, then EOF: an unpinned
    # requirements file of a CTranslate2 conversion
    "requirements.txt": "ctranslate2\nsentencepiece\ntransformers\ntorch\n",
    "requirements-dev.txt": "-r requirements.txt\ncolorama\ncython\n(optional) see README\n",
    "labels.txt": "(background)\nperson\nbicycle\ncar\nmotorcycle\n",
    "class_names.txt": "cls_0\ncls_1\ncls_2\n",
    "vocab.txt": "c\nca\ncat\n##s\n[UNK]\n",  # a WordPiece vocab sorted so "c..." comes first
    "merges.txt": "c at\nca t\nI n\n0 0\n",
    "synset_words.txt": "n01440764 tench, Tinca tinca\nn01443537 goldfish, Carassius auratus\n",
    "label_map.pbtxt": "item {\n  id: 1\n  name: 'cat'\n}\n",
}


def _text(name: str) -> Case:
    return Case(FAMILY, f"text-{name}", "benign", one_file(name, lambda: TEXT[name].encode()),
                why="text whose first bytes parse as pickle opcodes", vendor="approve")


register_all([
    Case(FAMILY, "trainer-training-args-zip", "benign", one_file("training_args.bin", training_args_zip),
         why="torch.save(self.args): TrainingArguments, enums, AcceleratorConfig, PartialState",
         vendor="review", reason=UNKNOWN_CALLS),
    Case(FAMILY, "trainer-training-args-raw", "benign", one_file("training_args.bin", training_args_raw),
         why="the same pickle as a bare protocol-2 stream (torch.save(..., _use_new_zipfile_serialization=False))",
         vendor="review", reason=UNKNOWN_CALLS),
    Case(FAMILY, "sklearn-pipeline-joblib", "benign", one_file("model.joblib", sklearn_joblib),
         why="joblib.dump(Pipeline): NumpyArrayWrapper + raw arrays, object arrays as nested pickles",
         vendor="approve"),
    Case(FAMILY, "sklearn-pipeline-pickle", "benign", one_file("sklearn_model.pkl", sklearn_pickle),
         why="pickle.dump(Pipeline, protocol=4): numpy arrays by numpy's own reduce",
         vendor="approve"),
    Case(FAMILY, "legacy-pytorch-model-bin-391-tensors", "benign",
         one_file("pytorch_model.bin", legacy_pytorch_model_bin),
         why="pre-1.6 torch.save: five pickles then raw storages", vendor="approve"),
    Case(FAMILY, "zip-checkpoint-with-optimizer", "benign", one_file("checkpoint.pt", zip_checkpoint_with_optimizer),
         why="model + AdamW state + scheduler state", vendor="approve"),
    Case(FAMILY, "fp8-pytorch-model-bin", "benign", one_file("pytorch_model.bin", fp8_state_dict_zip),
         why="float8 tensors: UntypedStorage, _rebuild_tensor_v3, torch.float8_e4m3fn", vendor="approve"),
    Case(FAMILY, "trainer-rng-state", "benign", one_file("rng_state.pth", rng_state_pth),
         why="python/numpy/torch RNG states", vendor="approve"),
    Case(FAMILY, "lightning-1x-ckpt", "benign", one_file("last.ckpt", lightning_ckpt),
         why="hyper_parameters as an AttributeDict of paths; ModelCheckpoint paths",
         vendor="review", reason=UNKNOWN_CALLS),
    Case(FAMILY, "checkpoint-with-paths-datetimes-numpy-scalars", "benign",
         one_file("model.pt", checkpoint_with_plain_python_values),
         why="pathlib, datetime and numpy scalar reductions beside a state dict", vendor="approve"),
    Case(FAMILY, "numpy-random-states", "benign", one_file("random_state.pkl", numpy_random_states),
         why="numpy.random._pickle constructors", vendor="approve"),
    Case(FAMILY, "npy-object-labels", "benign",
         one_file("label_classes.npy", lambda: _npy_pickled(["negative", "neutral", "positive"])),
         why="np.save(LabelEncoder.classes_): an object array, so a pickle of strings", vendor="approve"),
    Case(FAMILY, "npy-pickled-dict", "benign",
         one_file("config.npy", lambda: _npy_pickled({"vocab": ["a", "b"], "dim": 300})),
         why="np.save of a dict (a 0-d object array)", vendor="approve"),
    Case(FAMILY, "sklearn-tree-nodes", "benign", one_file("tree.pkl", tree_nodes_pickle),
         why="a structured dtype with 8 fields", vendor="approve"),
    *(Case(FAMILY, f"flax-msgpack-{n}-modules", "benign", one_file("flax_model.msgpack",
                                                                  lambda n=n: flax_writer.bert_params(n)),
           why=f"a msgpack map of {n} starts with byte {0x80 | n:#x}, a pickle opcode", vendor="approve")
      for n in (1, 2, 3)),
    *(Case(FAMILY, f"sklearn-pipeline-joblib-{kind}", "benign",
           one_file(f"model_{kind}.joblib", lambda kind=kind: sklearn_joblib_compressed(kind)),
           why="joblib.dump with compression", vendor="approve")
      for kind in ("zlib", "gzip", "bz2", "xz")),
    Case(FAMILY, "nemo-dictconfig-ckpt", "benign", one_file("megatron.ckpt", nemo_dictconfig_ckpt),
         why="omegaconf DictConfig hyper-parameters with paths in BUILD state", vendor="review", reason=UNKNOWN_CALLS),
    Case(FAMILY, "nemo-archive-tar", "benign", one_file("model.nemo", lambda: nemo_archive(False)), vendor="approve"),
    Case(FAMILY, "nemo-archive-tar-gz", "benign", one_file("model.nemo", lambda: nemo_archive(True)),
         vendor="approve"),
    Case(FAMILY, "binary-assets", "benign", lambda: dict(ASSETS), why="images, audio, a PDF, protobufs",
         vendor="approve"),
    Case(FAMILY, "legacy-ggml-bins", "benign", lambda: dict(GGML), why="GGML/GGJT/GGLA magic bytes", vendor="approve"),
    Case(FAMILY, "spacy-msgpack-files", "benign", lambda: dict(SPACY), why="msgpack maps without a file suffix",
         vendor="approve"),
    Case(FAMILY, "npy-float16-matrix", "benign", one_file("embeddings.npy", lambda: _npy(np.ones((128, 16), "f2"))),
         vendor="approve"),
    Case(FAMILY, "npy-fortran-order", "benign",
         one_file("projection.npy", lambda: _npy(np.asfortranarray(np.ones((8, 4))))), vendor="approve"),
    Case(FAMILY, "npz-compressed-embeddings", "benign", one_file("embeddings.npz", embeddings_npz),
         vendor="approve"),
    Case(FAMILY, "gguf-with-chat-template", "benign", one_file("model-Q4_K_M.gguf", gguf_with_metadata),
         why="GGUF metadata with a Llama-3 chat template and a source URL", vendor="approve"),
    Case(FAMILY, "safetensors-with-metadata", "benign", one_file("model.safetensors", safetensors_with_metadata),
         why="__metadata__ with base_model and a mergekit JSON holding a URL", vendor="approve"),
    *(_text(name) for name in TEXT),
    Case(FAMILY, "trainer-output-repo", "benign",
         lambda: {"config.json": b'{"architectures": ["BertForSequenceClassification"], "id2label": {"0": "neg"}}',
                  "model.safetensors": safetensors_with_metadata(), "training_args.bin": training_args_zip(),
                  "vocab.txt": TEXT["vocab.txt"].encode(),
                  "README.md": b"# bert-finetuned\n\npip install transformers\n"},
         why="what Trainer.push_to_hub uploads", vendor="review", reason=UNKNOWN_CALLS),
])
