"""Walk a TF ``SavedModel`` proto to every op name a loader could run, without TensorFlow.

The path: SavedModel -> meta_graphs -> graph_def -> node (NodeDef.op), and the graph's
function library (FunctionDef.node_def). TensorFlow resolves a node's op in the library
first, then as a built-in op, and a function-valued attr (``StatefulPartitionedCall``'s
``f``, ``While``'s ``body``...) names either, so those names are collected too.

Field numbers, from tensorflow/core/protobuf and tensorflow/core/framework:
  saved_model.proto  SavedModel.meta_graphs = 2
  meta_graph.proto   MetaGraphDef.graph_def = 2
  graph.proto        GraphDef.node = 1, GraphDef.library = 2
  function.proto     FunctionDefLibrary.function = 1; FunctionDef.signature = 1 (OpDef.name = 1),
                     FunctionDef.node_def = 3
  node_def.proto     NodeDef.name = 1, NodeDef.op = 2, NodeDef.attr = 5 (map entry: key 1, value 2)
  attr_value.proto   AttrValue.list = 1 (ListValue.func = 9), AttrValue.func = 10;
                     NameAttrList.name = 1, NameAttrList.attr = 2
A singular message field that occurs twice is merged by protobuf, and a repeated one adds
elements, so visiting every occurrence sees what the loader sees. A singular string that
occurs twice keeps the last value; every value is reported, so none hides behind another.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from app.core.formats.protobuf_wire import Message
from app.core.scanners.savedmodel_ops import CHECKPOINT_OPS, FED_BY_LOADER

SAVED_MODEL_META_GRAPHS = 2
META_GRAPH_GRAPH_DEF = 2
GRAPH_NODE, GRAPH_LIBRARY = 1, 2
LIBRARY_FUNCTION = 1
FUNCTION_SIGNATURE, FUNCTION_NODE_DEF = 1, 3
OP_DEF_NAME, OP_DEF_INPUT_ARG = 1, 2  # op_def.proto; ArgDef.name = 1
ARG_DEF_NAME = 1
NODE_NAME, NODE_OP, NODE_INPUT, NODE_ATTR = 1, 2, 3, 5
MAP_KEY, MAP_VALUE = 1, 2
ATTR_LIST, ATTR_FUNC = 1, 10
LIST_FUNC = 9
NAME_ATTR_LIST_NAME, NAME_ATTR_LIST_ATTR = 1, 2


@dataclass(frozen=True)
class OpUse:
    """One op (or function) name a node asks for, and where."""

    name: str
    where: str
    fed: bool = False  # a checkpoint op whose path input comes from a placeholder or argument


@dataclass
class GraphOps:
    ops: list[OpUse] = field(default_factory=list)
    functions: set[str] = field(default_factory=set)  # names defined in a function library
    meta_graphs: int = 0


@dataclass
class Scope:
    """The nodes of one graph or function, for tracing a checkpoint op's path input."""

    inputs: dict[str, list[str]] = field(default_factory=dict)  # node name -> data inputs
    ops: dict[str, str] = field(default_factory=dict)  # node name -> op
    arguments: set[str] = field(default_factory=set)  # a function's input args
    checkpoint: list[tuple[int, str]] = field(default_factory=list)  # (index in GraphOps.ops, node)


def walk_saved_model(top: Message, found: GraphOps) -> None:
    """Collect every op name of every meta graph into ``found``; raises WireError on bad bytes
    (what was collected before the error stays in ``found``)."""
    for meta in top.fields():
        if meta.number != SAVED_MODEL_META_GRAPHS:
            continue
        meta_message = top.nested(meta)
        where = f"meta_graphs[{found.meta_graphs}]"
        found.meta_graphs += 1
        scope = Scope()  # graph_def occurrences of one meta graph are merged into one graph
        for graph in meta_message.fields():
            if graph.number == META_GRAPH_GRAPH_DEF:
                _graph_def(meta_message.nested(graph), where, found, scope)
        _trace_checkpoint_paths(scope, found)


def _graph_def(graph: Message, where: str, found: GraphOps, scope: Scope) -> None:
    nodes = 0
    for item in graph.fields():
        if item.number == GRAPH_NODE:
            _node(graph.nested(item), f"{where}.graph_def.node[{nodes}]", found, scope)
            nodes += 1
        elif item.number == GRAPH_LIBRARY:
            _library(graph.nested(item), where, found)


def _library(library: Message, where: str, found: GraphOps) -> None:
    for item in library.fields():
        if item.number == LIBRARY_FUNCTION:
            _function(library.nested(item), where, found)


def _function(function: Message, where: str, found: GraphOps) -> None:
    scope = Scope()
    names = [_signature(function.nested(item), scope) for item in function.fields()
             if item.number == FUNCTION_SIGNATURE]
    label = names[-1] if names else "?"
    found.functions.update(name for name in names if name)
    nodes = 0
    for item in function.fields():
        if item.number == FUNCTION_NODE_DEF:
            _node(function.nested(item), f"{where} function {label!r} node_def[{nodes}]", found, scope)
            nodes += 1
    _trace_checkpoint_paths(scope, found)


def _signature(op_def: Message, scope: Scope) -> str:
    """The function's name; its input arg names go into ``scope``."""
    names = []
    for item in op_def.fields():
        if item.number == OP_DEF_NAME:
            names.append(item.text())
        elif item.number == OP_DEF_INPUT_ARG:
            arg = op_def.nested(item)
            scope.arguments.update(f.text() for f in arg.fields() if f.number == ARG_DEF_NAME)
    return names[-1] if names else ""


def _node(node: Message, where: str, found: GraphOps, scope: Scope) -> None:
    names, ops, attrs, inputs = [], [], [], []
    for item in node.fields():  # one pass: a graph can have hundreds of thousands of nodes
        if item.number == NODE_NAME:
            names.append(item.text())
        elif item.number == NODE_OP:
            ops.append(item.text())
        elif item.number == NODE_INPUT:
            inputs.append(item.text())
        elif item.number == NODE_ATTR:
            attrs.append(item)
    name = names[-1] if names else ""
    label = f"{where} {name!r}" if names else where
    scope.inputs[name] = [_source(i) for i in inputs if not i.startswith("^")]  # ^: control edge
    scope.ops[name] = ops[-1] if ops else ""  # protobuf keeps the last value
    for op in ops or [""]:  # no op field: the empty op
        if op in CHECKPOINT_OPS:
            scope.checkpoint.append((len(found.ops), name))
        found.ops.append(OpUse(op, label))
    for item in attrs:
        _attr_entry(node.nested(item), label, found)


def _source(node_input: str) -> str:
    """The node (or function argument) an input names: "n", "n:1" and "n:out:0" are node n."""
    return node_input.split(":", 1)[0]


def _trace_checkpoint_paths(scope: Scope, found: GraphOps) -> None:
    for index, name in scope.checkpoint:
        paths = CHECKPOINT_OPS[scope.ops[name]]
        if _fed_by_loader(scope, scope.inputs.get(name, [])[:paths]):
            found.ops[index] = replace(found.ops[index], fed=True)


def _fed_by_loader(scope: Scope, path_inputs: list[str]) -> bool:
    """Every path input (prefix, filename; MergeV2Checkpoints' two) reaches a placeholder or
    a function argument: the file the loader names, not one the graph hardcodes."""
    return bool(path_inputs) and all(_reaches_loader(scope, start) for start in path_inputs)


def _reaches_loader(scope: Scope, start: str) -> bool:
    seen, stack = set(), [start]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        if scope.ops.get(name) in FED_BY_LOADER or (name in scope.arguments and name not in scope.ops):
            return True
        stack.extend(scope.inputs.get(name, []))
    return False


def _attr_entry(entry: Message, where: str, found: GraphOps) -> None:
    keys = [item.text() for item in entry.fields() if item.number == MAP_KEY]
    label = f"{where} attr {keys[-1]!r}" if keys else where
    for item in entry.fields():
        if item.number == MAP_VALUE:
            _attr_value(entry.nested(item), label, found)


def _attr_value(value: Message, where: str, found: GraphOps) -> None:
    for item in value.fields():
        if item.number == ATTR_FUNC:
            _name_attr_list(value.nested(item), where, found)
        elif item.number == ATTR_LIST:
            list_value = value.nested(item)
            for element in list_value.fields():
                if element.number == LIST_FUNC:
                    _name_attr_list(list_value.nested(element), where, found)


def _name_attr_list(func: Message, where: str, found: GraphOps) -> None:
    for item in func.fields():
        if item.number == NAME_ATTR_LIST_NAME:
            found.ops.append(OpUse(item.text(), f"{where} (function attr)"))
        elif item.number == NAME_ATTR_LIST_ATTR:
            _attr_entry(func.nested(item), where, found)
