"""Hard-benign text: real-world shapes of files shipped beside weights whose first bytes
happen to be pickle opcodes (``c`` GLOBAL, ``(`` MARK, ``]`` EMPTY_LIST, ``0`` POP, ``I`` INT,
``t`` TUPLE, ``.`` STOP...). None of them is a pickle any loader would take; each must come out
with nothing above low. Built at test time; plain strings only.
"""

from __future__ import annotations

# Class names of a classifier, one per line, as ImageNet/CIFAR label files ship them.
_ANIMALS = ["cat", "dog", "bird", "horse", "sheep", "cow", "elephant", "bear", "zebra", "giraffe"]
_IMAGENET_HEAD = ["tench", "goldfish", "great white shark", "tiger shark", "hammerhead", "electric ray"]


def _big_labels() -> str:
    # "class_0\nclass_1\n..." is GLOBAL after GLOBAL for pages (a consistent stack past the
    # 4096-byte sniff window), then "bird" is BUILD on an imported name and INST with no MARK.
    return "".join(f"class_{i}\n" for i in range(800)) + "\n".join(_ANIMALS) + "\n"


def _vocab() -> str:
    specials = ["[PAD]"] + [f"[unused{i}]" for i in range(99)] + ["[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    return "\n".join(specials + list("!\"#$%&'()*+,-./0123456789") + ["the", "of", "and"]) + "\n"


SHAPES: dict[str, str] = {
    # requirement files, pinned and not (pip's format; `t` TUPLE, `a` APPEND, `d` DICT...)
    "requirements.txt": "torch==2.7\n",
    "requirements-pinned.txt": "torch==2.7.0\ntransformers==4.50.0\naccelerate>=1.2\n",
    "requirements-unpinned.txt": "torch\ntransformers\naccelerate\nsentencepiece\n",
    "requirements-gpu.txt": "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch\n",
    "requirements-cuda.txt": "cuda-python\ncupy-cuda12x\n",
    "requirements-comments.txt": "# inference only\ntorch>=2.1  # cpu wheels are fine\n",
    # label files: "0 cat" (POP), bare names starting with c (GLOBAL "at" "dog" then BUILD)
    "labels.txt": "0 cat\n1 dog\n",
    "labels-names.txt": "\n".join(_ANIMALS) + "\n",
    "classes.txt": "cat\ndog\nbird\n",
    "class_names.txt": "car\nbus\ntruck\nbicycle\n",
    "imagenet_classes.txt": "\n".join(_IMAGENET_HEAD) + "\n",
    "labels-big.txt": _big_labels(),
    "id2label.tsv": "0\tcat\n1\tdog\n2\tbird\n",
    # tokenizer side files
    "vocab.txt": _vocab(),
    "merges.txt": "#version: 0.2\n\u0120 t\n\u0120 a\nh e\ni n\n",
    "spiece.vocab": "<unk>\t0\n<s>\t0\n</s>\t0\n\u2581t\t-2.5\n",
    # repo plumbing and data
    ".gitattributes": "*.7z filter=lfs diff=lfs merge=lfs -text\n*.bin filter=lfs diff=lfs merge=lfs -text\n",
    "data.csv": "id,label\n0,cat\n1,dog\n",
    "cols.csv": "category,count\ncat,3\ndog,5\n",
    "scores.tsv": "(model)\tscore\nbase\t0.71\n",
    "config.yaml": "(a): 1\nb: [1, 2]\n",
    "params.yaml": "]\n",
    "README.md": "(this model card starts with a parenthesis)\n",
    "NOTES.md": "]]] bracketed\n",
    "dims.txt": "I0\nI1\n",
    "tuple.txt": "(1, 2)\n",
    "cls.txt": "cls\nsep\npad\n",
    "eos.txt": "(\nt.\n",  # MARK, TUPLE, STOP: data only, imports nothing
}
