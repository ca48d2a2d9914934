"""ONNX models written byte by byte (protobuf wire format), for tests: no onnx package.

Field numbers from onnx/onnx.proto (see app/core/formats/onnx_model.py). Only what the tests
need: graphs of nodes, initializers inline or external, local functions, subgraph attributes.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

FLOAT = 1  # TensorProto.DataType


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field_varint(number: int, value: int) -> bytes:
    return varint(number << 3) + varint(value)


def field_bytes(number: int, data: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(data)) + data


def field_text(number: int, text: str) -> bytes:
    return field_bytes(number, text.encode())


def tensor(name: str, dims: Iterable[int], raw: bytes | None = None,
           external: dict[str, str] | None = None) -> bytes:
    """A float TensorProto: ``raw`` bytes inline, or ``external`` entries with data_location EXTERNAL."""
    out = b"".join(field_varint(1, d) for d in dims) + field_varint(2, FLOAT) + field_text(8, name)
    if raw is not None:
        out += field_bytes(9, raw)
    if external is not None:
        out += b"".join(field_bytes(13, field_text(1, k) + field_text(2, v)) for k, v in external.items())
        out += field_varint(14, 1)
    return out


def floats(count: int, first: float = 0.5) -> bytes:
    return struct.pack(f"<{count}f", *(first + i / 8 for i in range(count)))


def attribute_graph(name: str, graph_bytes: bytes) -> bytes:
    return field_text(1, name) + field_varint(20, 5) + field_bytes(6, graph_bytes)  # type GRAPH = 5


def attribute_tensor(name: str, tensor_bytes: bytes) -> bytes:
    return field_text(1, name) + field_varint(20, 4) + field_bytes(5, tensor_bytes)  # type TENSOR = 4


def node(op_type: str, inputs: Iterable[str], outputs: Iterable[str], name: str = "", domain: str = "",
         attributes: Iterable[bytes] = ()) -> bytes:
    out = b"".join(field_text(1, i) for i in inputs) + b"".join(field_text(2, o) for o in outputs)
    out += (field_text(3, name) if name else b"") + field_text(4, op_type)
    out += b"".join(field_bytes(5, a) for a in attributes)
    return out + (field_text(7, domain) if domain else b"")


def value_info(name: str) -> bytes:
    return field_text(1, name)


def graph(nodes: Iterable[bytes], initializers: Iterable[bytes] = (), name: str = "main",
          inputs: Iterable[str] = ("x",), outputs: Iterable[str] = ("y",)) -> bytes:
    out = b"".join(field_bytes(1, n) for n in nodes) + field_text(2, name)
    out += b"".join(field_bytes(5, t) for t in initializers)
    out += b"".join(field_bytes(11, value_info(i)) for i in inputs)
    return out + b"".join(field_bytes(12, value_info(o)) for o in outputs)


def function(name: str, domain: str, nodes: Iterable[bytes]) -> bytes:
    return field_text(1, name) + b"".join(field_bytes(7, n) for n in nodes) + field_text(10, domain)


def model(graph_bytes: bytes, opsets: Iterable[tuple[str, int]] = (("", 17),),
          functions: Iterable[bytes] = (), producer: str = "pytorch") -> bytes:
    out = field_varint(1, 8) + field_text(2, producer) + field_text(3, "2.3.0")
    out += field_bytes(7, graph_bytes)
    out += b"".join(field_bytes(8, (field_text(1, d) if d else b"") + field_varint(2, v)) for d, v in opsets)
    return out + b"".join(field_bytes(25, f) for f in functions)


def conv_net(external: dict[str, str] | None = None, weights: int = 3 * 3 * 3 * 8) -> bytes:
    """An ordinary Conv -> Relu -> GlobalAveragePool net; its weight inline or in ``external``."""
    weight = (tensor("conv.weight", (8, 3, 3, 3), external=external) if external is not None
              else tensor("conv.weight", (8, 3, 3, 3), raw=floats(weights)))
    bias = tensor("conv.bias", (8,), raw=floats(8))
    nodes = [node("Conv", ("x", "conv.weight", "conv.bias"), ("c",), name="conv"),
             node("Relu", ("c",), ("r",), name="relu"),
             node("GlobalAveragePool", ("r",), ("y",), name="pool")]
    return model(graph(nodes, (weight, bias)))
