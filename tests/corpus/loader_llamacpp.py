"""llama.cpp surfaces (app/core/loaders/map/llamacpp.yaml). Inert text only.

Read from llama-cpp-python 0.3.36: ``Llama.__init__`` reads ``tokenizer.chat_template`` from the GGUF
metadata and formats every chat request with it (``llama_chat_format.Jinja2ChatFormatter``). The benign
case is ``hard-benign/gguf-with-chat-template``.
"""

from __future__ import annotations

from tests.corpus.metadata_text import gguf
from tests.corpus.registry import Case, register_all
from tests.corpus.repo_templates import HOSTILE

FAMILY = "loader-llamacpp"


def gguf_chat_template_ssti() -> dict[str, bytes]:
    template = HOSTILE["set-variable-key"][0]
    return {"tiny-Q4_K_M.gguf": gguf({"general.architecture": "llama", "general.name": "tiny",
                                      "tokenizer.chat_template": template})}


register_all([
    Case(FAMILY, "gguf-chat-template-ssti", "hostile", gguf_chat_template_ssti, rule="template-injection",
         why="Llama.__init__ renders the GGUF's tokenizer.chat_template for each chat request: a sandbox escape"),
])
