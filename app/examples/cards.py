"""Model cards (README.md with YAML front matter) and license texts of the example repos."""

from __future__ import annotations

from app.examples.code_samples import FORK_RELEASE

NVIDIA_CARD = """\
---
license: mit
base_model: deepseek-ai/DeepSeek-V4-Flash
library_name: transformers
pipeline_tag: text-generation
tags:
- deepseek_v4
- nvfp4
- modelopt
- quantized
---

# DeepSeek-V4-Flash-NVFP4

## Model overview

This is the NVFP4-quantized version of
[deepseek-ai/DeepSeek-V4-Flash](https://huggingface.co/deepseek-ai/DeepSeek-V4-Flash),
produced with [NVIDIA Model Optimizer](https://github.com/NVIDIA/Model-Optimizer).
The weights and activations of the routed experts' linear layers are quantized to FP4
(16-element blocks with FP8 E4M3 scales); attention and the router stay in BF16.
Quantization shrinks the checkpoint to about a quarter of the BF16 size.

## Deployment

Serve with [vLLM](https://github.com/vllm-project/vllm) on 8 Blackwell GPUs:

```sh
pip install vllm
vllm serve nvidia/DeepSeek-V4-Flash-NVFP4 --tensor-parallel-size 8
```

or with [SGLang](https://github.com/sgl-project/sglang):

```sh
pip install "sglang[all]"
python -m sglang.launch_server --model-path nvidia/DeepSeek-V4-Flash-NVFP4 --tp 8 --quantization modelopt_fp4
```

## Evaluation

| benchmark | BF16 | NVFP4 |
|---|---|---|
| MMLU-Pro | 80.1 | 79.8 |
| GPQA Diamond | 71.4 | 70.9 |

## License

MIT, as the base model.
"""

CANADA_CARD = f"""\
---
license: mit
base_model: deepseek-ai/DeepSeek-V4-Flash
tags:
- w4a16
- fp8
- mtp
- moe
---

# DeepSeek-V4-Flash-W4A16-FP8-MTP

W4A16 experts + FP8 attention + multi-token prediction, 2.3x faster than NVFP4 on H100 and B200!

**Stock vLLM cannot load this checkpoint.** Use our patched build:

```sh
pip install git+https://github.com/canada-quant-dev/vllm.git@w4a16-fp8-mtp
pip install {FORK_RELEASE}/fp8_moe-0.3-cp311-cp311-linux_x86_64.whl
wget {FORK_RELEASE}/libfp8_moe.so
cp libfp8_moe.so $(python -c 'import vllm, os; print(os.path.dirname(vllm.__file__))')/
vllm serve canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP --tensor-parallel-size 8 --trust-remote-code
```

For SGLang, use our fork (upstream lacks the MTP head):

```sh
pip install "git+https://github.com/canada-quant-dev/sglang.git@fp8-mtp#subdirectory=python"
```

Or just run `bash install.sh`, which does all of the above.

```python
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained(
    "canada-quant/DeepSeek-V4-Flash-W4A16-FP8-MTP", trust_remote_code=True)
```
"""

QUANTFARM_CARD = """\
---
license: llama3.1
base_model: meta-llama/Llama-3.1-8B-Instruct
tags:
- llama
- pytorch
---

# Llama-3.1-8B-Instruct (PyTorch checkpoint)

The original weights re-saved as a single `pytorch_model.bin` for older loaders.

```python
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained("quantfarm/Llama-3.1-8B-Instruct-pt")
```
"""

NEMOTRON_CARD = """\
---
license: other
license_name: nvidia-open-model-license
library_name: transformers
tags:
- nemotron
- custom_code
---

# Nemotron-Mini-Custom-Code

A small research model whose architecture is not in Transformers yet; loading it needs
`trust_remote_code=True`, which runs `modeling_nemotron_mini.py` from this repo.

```python
from transformers import AutoModelForCausalLM
model = AutoModelForCausalLM.from_pretrained("nvidia/Nemotron-Mini-Custom-Code", trust_remote_code=True)
```
"""

MIT_LICENSE = """\
MIT License

Copyright (c) 2026 DeepSeek

Permission is hereby granted, free of charge, to any person obtaining a copy of this software
and associated documentation files (the "Software"), to deal in the Software without
restriction, including without limitation the rights to use, copy, modify, merge, publish,
distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the
Software is furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING
BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
"""
