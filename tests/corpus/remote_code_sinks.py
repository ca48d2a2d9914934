"""Remote code whose sinks are derived, not listed, and load-time methods read from the loaders (issue 23
item 3). Generated source text only; payloads are harmless strings.

- cffi: ``FFI.dlopen`` loads a native library through the C backend (``_cffi_backend.load_library``).
- numpy: ``numpy.ctypeslib.load_library`` is ``ctypes.cdll[path]`` (numpy/ctypeslib.py).
- timeit: ``Timer.__init__`` compiles and ``exec``s the statement it is given (Lib/timeit.py).
- code: ``InteractiveInterpreter.runsource`` compiles and runs source (Lib/code.py ``runcode`` -> exec).
- transformers' ``get_class_in_module`` returns ``getattr(module, class_name)``: a module-level
  ``__getattr__`` (PEP 562) supplying the class runs while the class is loaded.
- ``PretrainedConfig.from_dict`` logs ``f"Model config {config}"``: ``__repr__`` -> ``to_json_string``
  -> ``to_dict`` run while the config loads; an override of any of them runs then.
"""

from __future__ import annotations

import json

from tests.corpus.registry import Case, register_all

FAMILY = "remote-code-sinks"
RULE = "remote-code-dangerous"
CONFIG = json.dumps({"model_type": "tiny", "auto_map": {"AutoConfig": "configuration_tiny.TinyConfig",
                                                        "AutoModel": "modeling_tiny.TinyModel"}}).encode()
CONFIGURATION = (b"from transformers import PretrainedConfig\n\n\nclass TinyConfig(PretrainedConfig):\n"
                 b"    model_type = 'tiny'\n")


def _repo(modeling: str, configuration: bytes = CONFIGURATION) -> dict[str, bytes]:
    return {"config.json": CONFIG, "configuration_tiny.py": configuration, "modeling_tiny.py": modeling.encode()}


def _model(init_body: str, imports: str) -> str:
    return (f"{imports}\nfrom transformers import PreTrainedModel\n\n\nclass TinyModel(PreTrainedModel):\n"
            f"    def __init__(self, config):\n        super().__init__(config)\n{init_body}")


def cffi_dlopen() -> dict[str, bytes]:
    return _repo(_model("        ffi = cffi.FFI()\n        self.lib = ffi.dlopen('./libfast.so')\n", "import cffi"))


def ctypeslib_load() -> dict[str, bytes]:
    return _repo(_model("        self.lib = np.ctypeslib.load_library('libfast', '.')\n", "import numpy as np"))


def timeit_statement() -> dict[str, bytes]:
    return _repo(_model("        timeit.timeit(config.warmup, number=1)\n", "import timeit"))


def interpreter_runsource() -> dict[str, bytes]:
    return _repo(_model("        code.InteractiveInterpreter().runsource(config.init_script)\n", "import code"))


def module_getattr_class() -> dict[str, bytes]:
    modeling = ("import subprocess\n\n\ndef __getattr__(name):\n"
                "    subprocess.run(['sh', '-c', 'echo hfvet-test'])\n"
                "    from transformers import PreTrainedModel\n    return type(name, (PreTrainedModel,), {})\n")
    return _repo(modeling)


def config_to_dict_override() -> dict[str, bytes]:
    configuration = (b"from transformers import PretrainedConfig\n\n\nclass TinyConfig(PretrainedConfig):\n"
                     b"    model_type = 'tiny'\n\n    def to_dict(self):\n"
                     b"        exec(self.__dict__.get('hook', 'pass'))\n        return super().to_dict()\n")
    return _repo(_model("        pass\n", "import torch"), configuration)


register_all([
    Case(FAMILY, "cffi-dlopen", "hostile", cffi_dlopen, rule=RULE,
         why="cffi.FFI().dlopen loads a native library in __init__ (C backend load_library)"),
    Case(FAMILY, "numpy-ctypeslib", "hostile", ctypeslib_load, rule=RULE,
         why="numpy.ctypeslib.load_library is ctypes.cdll[path]: native code at load"),
    Case(FAMILY, "timeit-statement", "hostile", timeit_statement, rule=RULE,
         why="timeit.Timer.__init__ compiles and execs a statement taken from the config"),
    Case(FAMILY, "interactive-interpreter", "hostile", interpreter_runsource, rule=RULE,
         why="code.InteractiveInterpreter.runsource runs source from the config"),
    Case(FAMILY, "module-getattr-class", "hostile", module_getattr_class, rule=RULE,
         why="get_class_in_module getattr()s TinyModel from the module: its __getattr__ spawns a shell"),
    Case(FAMILY, "config-to-dict-override", "hostile", config_to_dict_override, rule=RULE,
         why="PretrainedConfig.from_dict logs the config: __repr__ -> to_json_string -> to_dict execs"),
])
