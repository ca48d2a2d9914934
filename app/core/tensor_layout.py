"""A compact, deterministic summary of a safetensors file's tensor layout, kept in the report.

Three digests tell a copy, a re-quantization and an unrelated model apart without keeping
every tensor name (a large MoE has tens of thousands): over the tensor names, over names with
shapes, and over names with shapes and dtypes. Each digest is the sum modulo 2**256 of a
sha256 per tensor, so it is independent of tensor order and of how the tensors are split
into shards: a repo's digest is the sum of its files'. Not collision-resistant against
someone choosing names to collide, and it need not be: matching names prove nothing an
attacker could not copy for free (docs/provenance.md).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

_MOD = 2**256


@dataclass(frozen=True)
class TensorLayout:
    tensors: int  # how many tensors
    names: str  # 64-hex digest of the tensor names
    shapes: str  # ... of (name, shape)
    typed: str  # ... of (name, shape, dtype)
    dtypes: tuple[str, ...]  # the distinct dtypes, sorted

    def dump(self) -> dict[str, Any]:
        return {"tensors": self.tensors, "names": self.names, "shapes": self.shapes, "typed": self.typed,
                "dtypes": list(self.dtypes)}

    @classmethod
    def load(cls, doc: Mapping[str, Any]) -> TensorLayout:
        return cls(int(doc["tensors"]), str(doc["names"]), str(doc["shapes"]), str(doc["typed"]),
                   tuple(str(d) for d in doc.get("dtypes") or ()))


def layout_of_header(header: Mapping[str, Any]) -> TensorLayout:
    """The layout of a validated safetensors header (``__metadata__`` is not a tensor)."""
    names, shapes, typed = 0, 0, 0
    dtypes: set[str] = set()
    count = 0
    for name, entry in header.items():
        if name == "__metadata__" or not isinstance(entry, Mapping):
            continue
        shape = json.dumps(entry.get("shape"), separators=(",", ":"))
        dtype = str(entry.get("dtype"))
        names += _h(name)
        shapes += _h(f"{name}\0{shape}")
        typed += _h(f"{name}\0{shape}\0{dtype}")
        dtypes.add(dtype)
        count += 1
    return TensorLayout(count, _hex(names), _hex(shapes), _hex(typed), tuple(sorted(dtypes)))


def combine(layouts: Iterable[TensorLayout]) -> TensorLayout | None:
    """The layout of several files together (a sharded checkpoint); None for none."""
    found = list(layouts)
    if not found:
        return None
    names, shapes, typed = (_hex(sum(int(getattr(x, part), 16) for x in found))
                            for part in ("names", "shapes", "typed"))
    dtypes = sorted({d for x in found for d in x.dtypes})
    return TensorLayout(sum(x.tensors for x in found), names, shapes, typed, tuple(dtypes))


def _h(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest(), "big")


def _hex(value: int) -> str:
    return f"{value % _MOD:064x}"
