"""Walk an ONNX ``ModelProto`` to what a runtime would resolve or open, without onnx.

What loading a model reaches, from onnx/onnx.proto and onnx/external_data_helper.py
(``_get_all_tensors``: initializers, and tensors in node attributes, in every subgraph):
- every node's ``(domain, op_type)``: onnxruntime looks each up among its kernels, the
  model's local functions, then custom-op libraries the application registered;
- every tensor's external data (``data_location = EXTERNAL``, key/value entries ``location``,
  ``offset``, ``length``): the runtime opens ``location`` relative to the model's folder;
- graphs in node attributes (``If``'s branches, ``Loop``/``Scan`` bodies), in local functions
  and in ``training_info`` are walked like the main graph.
Tensor bytes (``raw_data`` and the typed data fields) are jumped over, never read.

Field numbers (onnx.proto, unchanged since they were added):
  ModelProto   ir_version 1, graph 7, opset_import 8, training_info 20, functions 25
  OperatorSetIdProto  domain 1, version 2
  GraphProto   node 1, name 2, initializer 5, sparse_initializer 15
  NodeProto    name 3, op_type 4, attribute 5, domain 7
  AttributeProto  t 5, g 6, tensors 10, graphs 11, sparse_tensor 22, sparse_tensors 23
  TensorProto  name 8, external_data 13 (StringStringEntryProto key 1, value 2), data_location 14
  SparseTensorProto  values 1, indices 2
  FunctionProto  name 1, node 7, opset_import 9, domain 10
  TrainingInfoProto  initialization 1, algorithm 2
A message field that occurs twice is merged by protobuf and a repeated one adds elements, so
visiting every occurrence sees what the runtime sees; every value of a repeated key is kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from app.core.formats.protobuf_wire import LEN, VARINT
from app.core.formats.ranged_wire import RangeField, RangeMessage, Walk

MODEL_IR_VERSION, MODEL_GRAPH, MODEL_OPSET, MODEL_TRAINING, MODEL_FUNCTIONS = 1, 7, 8, 20, 25
OPSET_DOMAIN, OPSET_VERSION = 1, 2
GRAPH_NODE, GRAPH_NAME, GRAPH_INITIALIZER, GRAPH_SPARSE = 1, 2, 5, 15
NODE_NAME, NODE_OP_TYPE, NODE_ATTRIBUTE, NODE_DOMAIN = 3, 4, 5, 7
ATTR_T, ATTR_G, ATTR_TENSORS, ATTR_GRAPHS, ATTR_SPARSE, ATTR_SPARSES = 5, 6, 10, 11, 22, 23
TENSOR_NAME, TENSOR_EXTERNAL, TENSOR_LOCATION = 8, 13, 14
ENTRY_KEY, ENTRY_VALUE = 1, 2
SPARSE_VALUES, SPARSE_INDICES = 1, 2
FUNCTION_NAME, FUNCTION_NODE, FUNCTION_OPSET, FUNCTION_DOMAIN = 1, 7, 9, 10
TRAINING_INITIALIZATION, TRAINING_ALGORITHM = 1, 2
EXTERNAL = 1  # TensorProto.DataLocation
ONNX_DOMAIN_ALIAS = "ai.onnx"  # the same domain as "" (onnx's NormalizeDomain)


@dataclass(frozen=True)
class ExternalData:
    """One tensor's external data entries, as the loader reads them."""

    tensor: str
    where: str
    entries: tuple[tuple[str, str], ...]
    external: bool  # data_location == EXTERNAL: only then does a loader open the location

    def values(self, key: str) -> list[str]:
        return [value for name, value in self.entries if name == key]


@dataclass
class OnnxModel:
    ir_version: int | None = None
    graphs: int = 0
    opsets: list[tuple[str, int]] = field(default_factory=list)
    ops: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (domain, op) -> where (first few)
    op_counts: dict[tuple[str, str], int] = field(default_factory=dict)
    functions: set[tuple[str, str]] = field(default_factory=set)  # (domain, name) of local functions
    external: list[ExternalData] = field(default_factory=list)

    def add_op(self, domain: str, op_type: str, where: str) -> None:
        key = (normal_domain(domain), op_type)
        self.op_counts[key] = self.op_counts.get(key, 0) + 1
        if key not in self.ops:
            self.ops[key] = [where]


def _fields(message: RangeMessage, varints: tuple[int, ...] = ()) -> Iterator[RangeField]:
    """The fields of ``message`` with the wire type their schema gives them: a parser keeps one of
    another wire type as an unknown field, so the walk passes over it too."""
    for item in message.fields():
        if item.wire_type == (VARINT if item.number in varints else LEN):
            yield item


def normal_domain(domain: str) -> str:
    return "" if domain == ONNX_DOMAIN_ALIAS else domain


def walk_model(walk: Walk, found: OnnxModel) -> None:
    """Collect ``found`` from the whole file; raises WireError/LimitExceeded on bad bytes
    (what was collected before stays in ``found``)."""
    top = walk.top()
    for item in _fields(top, varints=(MODEL_IR_VERSION,)):
        if item.number == MODEL_IR_VERSION :
            found.ir_version = item.value
        elif item.number == MODEL_GRAPH:
            found.graphs += 1
            _graph(walk, top.nested(item), "graph", found)
        elif item.number == MODEL_OPSET:
            found.opsets.append(_opset(walk, top.nested(item)))
        elif item.number == MODEL_FUNCTIONS:
            _function(walk, top.nested(item), found)
        elif item.number == MODEL_TRAINING:
            training = top.nested(item)
            for part in _fields(training):
                if part.number in (TRAINING_INITIALIZATION, TRAINING_ALGORITHM):
                    _graph(walk, training.nested(part), "training_info graph", found)


def _opset(walk: Walk, opset: RangeMessage) -> tuple[str, int]:
    domain, version = "", 0
    for item in _fields(opset, varints=(OPSET_VERSION,)):
        if item.number == OPSET_DOMAIN:
            domain = item.text(walk)
        elif item.number == OPSET_VERSION :
            version = item.value
    return domain, version


def _graph(walk: Walk, graph: RangeMessage, where: str, found: OnnxModel) -> None:
    nodes = tensors = 0
    for item in _fields(graph):
        if item.number == GRAPH_NODE:
            _node(walk, graph.nested(item), f"{where} node[{nodes}]", found)
            nodes += 1
        elif item.number == GRAPH_INITIALIZER:
            _tensor(walk, graph.nested(item), f"{where} initializer[{tensors}]", found)
            tensors += 1
        elif item.number == GRAPH_SPARSE:
            _sparse(walk, graph.nested(item), f"{where} sparse_initializer", found)


def _function(walk: Walk, function: RangeMessage, found: OnnxModel) -> None:
    names, domains, nodes = [], [], []
    for item in _fields(function):
        if item.number == FUNCTION_NAME:
            names.append(item.text(walk))
        elif item.number == FUNCTION_DOMAIN:
            domains.append(item.text(walk))
        elif item.number == FUNCTION_NODE:
            nodes.append(item)
    name, domain = (names or [""])[-1], (domains or [""])[-1]
    found.functions.add((normal_domain(domain), name))
    for index, item in enumerate(nodes):
        _node(walk, function.nested(item), f"function {domain}::{name} node[{index}]", found)


def _node(walk: Walk, node: RangeMessage, where: str, found: OnnxModel) -> None:
    ops, domains, names, attributes = [], [], [], []
    for item in _fields(node):
        if item.number == NODE_OP_TYPE:
            ops.append(item.text(walk))
        elif item.number == NODE_DOMAIN:
            domains.append(item.text(walk))
        elif item.number == NODE_NAME:
            names.append(item.text(walk))
        elif item.number == NODE_ATTRIBUTE:
            attributes.append(item)
    label = f"{where} {names[-1]!r}" if names else where
    for op in ops or [""]:
        for domain in domains or [""]:  # protobuf keeps the last value; every one is judged
            found.add_op(domain, op, label)
    for item in attributes:
        _attribute(walk, node.nested(item), label, found)


def _attribute(walk: Walk, attribute: RangeMessage, where: str, found: OnnxModel) -> None:
    for item in _fields(attribute):
        if item.number in (ATTR_G, ATTR_GRAPHS):
            _graph(walk, attribute.nested(item), f"{where} subgraph", found)
        elif item.number in (ATTR_T, ATTR_TENSORS):
            _tensor(walk, attribute.nested(item), f"{where} attribute tensor", found)
        elif item.number in (ATTR_SPARSE, ATTR_SPARSES):
            _sparse(walk, attribute.nested(item), f"{where} attribute sparse tensor", found)


def _sparse(walk: Walk, sparse: RangeMessage, where: str, found: OnnxModel) -> None:
    for item in _fields(sparse):
        if item.number in (SPARSE_VALUES, SPARSE_INDICES):
            _tensor(walk, sparse.nested(item), where, found)


def _tensor(walk: Walk, tensor: RangeMessage, where: str, found: OnnxModel) -> None:
    names: list[str] = []
    entries: list[tuple[str, str]] = []
    external = False
    for item in _fields(tensor, varints=(TENSOR_LOCATION,)):  # raw_data and the typed data fields are jumped over
        if item.number == TENSOR_NAME:
            names.append(item.text(walk))
        elif item.number == TENSOR_EXTERNAL:
            entries.append(_entry(walk, tensor.nested(item)))
        elif item.number == TENSOR_LOCATION :
            external = item.value == EXTERNAL
    if entries or external:
        name = names[-1] if names else ""
        found.external.append(ExternalData(name, f"{where} {name!r}", tuple(entries), external))


def _entry(walk: Walk, entry: RangeMessage) -> tuple[str, str]:
    key = value = ""
    for item in _fields(entry):
        if item.number == ENTRY_KEY:
            key = item.text(walk)
        elif item.number == ENTRY_VALUE:
            value = item.text(walk)
    return key, value

