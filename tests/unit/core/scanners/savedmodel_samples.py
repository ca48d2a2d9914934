"""A tiny protobuf writer and SavedModel builders: bytes laid out as TensorFlow writes them.

Field numbers are TensorFlow's (see app/core/scanners/savedmodel_graph.py); no tensorflow and
no protobuf package is needed, and nothing built here is ever loaded.
"""

from __future__ import annotations


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def tag(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


def int_field(number: int, value: int) -> bytes:
    return tag(number, 0) + varint(value)


def len_field(number: int, payload: bytes | str) -> bytes:
    raw = payload.encode() if isinstance(payload, str) else payload
    return tag(number, 2) + varint(len(raw)) + raw


def func_attr(key: str, function: str) -> bytes:
    """A NodeDef attr map entry whose AttrValue.func names ``function``."""
    return len_field(5, len_field(1, key) + len_field(2, len_field(10, len_field(1, function))))


def node(name: str, op: str, *extra: bytes) -> bytes:
    return len_field(1, name) + len_field(2, op) + b"".join(extra)


def inputs(*names: str) -> bytes:
    """NodeDef.input entries (field 3): "node", "node:1", "node:out:0", "^control"."""
    return b"".join(len_field(3, name) for name in names)


def function(name: str, *nodes: bytes, args: tuple[str, ...] = ()) -> bytes:
    """A FunctionDef: signature (OpDef.name, OpDef.input_arg[].name) and node_def entries."""
    signature = len_field(1, name) + b"".join(len_field(2, len_field(1, arg)) for arg in args)
    return len_field(1, signature) + b"".join(len_field(3, n) for n in nodes)


def graph(*nodes: bytes, functions: tuple[bytes, ...] = ()) -> bytes:
    """A GraphDef: nodes (field 1) and a function library (field 2)."""
    body = b"".join(len_field(1, n) for n in nodes)
    if functions:
        body += len_field(2, b"".join(len_field(1, f) for f in functions))
    return body + len_field(4, int_field(1, 1808))  # versions.producer, as TF writes it


def saved_model(*graphs: bytes) -> bytes:
    """SavedModel: schema version 1 and one MetaGraphDef (meta_info_def, graph_def) per graph."""
    metas = b"".join(len_field(2, len_field(1, len_field(1, "v1")) + len_field(2, g)) for g in graphs)
    return int_field(1, 1) + metas


def benign_graph() -> bytes:
    return graph(node("x", "Placeholder"), node("w", "Const"), node("mm", "MatMul"), node("y", "Relu"))


def hostile_graph() -> bytes:
    return graph(node("x", "Const"), node("cb", "PyFunc"), node("out", "WriteFile"))
