"""False positives of the loader map's readers on real vendor text (issue 23, bench/vendor_text_fp.py).

Each text is generated here in the shape of a line seen in a vendor's published docs (cited); the
repo ids are the vendors' own public ones, and nothing here is loaded or run.
"""

from __future__ import annotations

from app.core.closure import Gate, Kind
from app.core.loaders.readers import read_surface
from app.core.loaders.schema import Form, Read, Source, Surface
from app.core.loaders.view import FileView

SOURCE = Source(repo="example/runtime", file="loader.py", function="load", version="1.0")


def flags_surface(*fields: str) -> Surface:
    return Surface(id="rt.serve", runtime="rt", what="test", files=("*",), read=Read.FLAGS, fields=fields,
                   form=Form.REPO_ID, kind=Kind.REPO, gate=Gate.OPT_IN, carries_trust=True, source=SOURCE, cases=())


def repos(s: Surface, text: str, present: tuple[str, ...] = ()) -> set[tuple[str | None, bool]]:
    view = FileView("README.md", text, frozenset(("README.md", *present)), "me/model")
    return {(i.repo, i.carries_trust) for i in read_surface(s, view)}


SCOPED = flags_surface("vllm serve", "vllm serve --model", "vllm.entrypoints.openai.api_server --model",
                       "sglang.launch_server --model-path", "sglang.launch_server --model")


def test_a_scoped_flag_is_read_only_after_its_command() -> None:
    # NVIDIA/NeMo-Skills docs/evaluation/index.md: a hosted API's model name on NeMo-Skills' own CLI.
    api = ("ns eval \\\n  --cluster=local \\\n  --server_type=openai \\\n  --model=meta/llama-3.1-8b-instruct \\\n"
           "  --server_address=https://integrate.api.nvidia.com/v1\n")
    # huggingface/diffusers docs/source/en/optimization/onnx.md: another tool's --model.
    export = ("optimum-cli export onnx --model stabilityai/stable-diffusion-xl-base-1.0 "
              "--task stable-diffusion-xl out/\n")
    assert repos(SCOPED, api) == set()
    assert repos(SCOPED, export) == set()
    assert repos(flags_surface("--model"), api) == {("meta/llama-3.1-8b-instruct", False)}  # unscoped: read


def test_a_scoped_flag_after_its_command_is_read_with_the_lines_trust() -> None:
    # QwenLM/Qwen3 examples/gcu-support/README.md and InternLM/InternLM ecosystem/README.md shapes.
    api_server = ("python -m vllm.entrypoints.openai.api_server --served-model-name Qwen2.5-7B-Instruct "
                  "--model Qwen/Qwen2.5-7B-Instruct --device gcu\n")
    sglang = ("python3 -m sglang.launch_server --model internlm/internlm3-8b-instruct --trust-remote-code "
              "--chat-template internlm2-chat\n")
    assert repos(SCOPED, api_server) == {("Qwen/Qwen2.5-7B-Instruct", False)}
    assert repos(SCOPED, sglang) == {("internlm/internlm3-8b-instruct", True)}


def test_a_scoped_flag_before_its_command_or_in_another_command_is_not_read() -> None:
    text = "python train.py --model someone/base && vllm serve me/model\n"
    assert repos(SCOPED, text) == set()
    # a longer name that merely starts with the command is another program
    assert repos(SCOPED, "python -m sglang.launch_server_router --model-path someone/x\n") == set()


def test_a_command_field_still_takes_its_first_argument() -> None:
    # zai-org/GLM-4.5 README.md: `vllm serve` with dotted speculative flags after the repo id.
    text = ("vllm serve zai-org/GLM-4.7-FP8 \\\n     --tensor-parallel-size 4 \\\n"
            "     --speculative-config.method mtp \\\n     --tool-call-parser glm47\n")
    assert repos(SCOPED, text) == {("zai-org/GLM-4.7-FP8", False)}


def test_shell_placeholders_and_local_paths_name_no_repo() -> None:
    # NVIDIA/TensorRT-Model-Optimizer examples and NVIDIA/NeMo-Skills docs: variables, angle-bracket
    # placeholders and absolute or ./ paths in place of the model.
    text = ("vllm serve $MODEL --port 8000\nvllm serve ${MODEL_PATH}\nvllm serve <org>/<model>\n"
            "vllm serve ./llama3-fp4-qlora-hf/base_model\nvllm serve /hf_models/Qwen3-4B\n"
            "vllm serve [org]/[model]\nvllm serve {model_id}\n")
    assert repos(SCOPED, text) == set()
