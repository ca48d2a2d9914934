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

from dataclasses import dataclass, field

from app.core.formats.protobuf_wire import Message

SAVED_MODEL_META_GRAPHS = 2
META_GRAPH_GRAPH_DEF = 2
GRAPH_NODE, GRAPH_LIBRARY = 1, 2
LIBRARY_FUNCTION = 1
FUNCTION_SIGNATURE, FUNCTION_NODE_DEF = 1, 3
OP_DEF_NAME = 1
NODE_NAME, NODE_OP, NODE_ATTR = 1, 2, 5
MAP_KEY, MAP_VALUE = 1, 2
ATTR_LIST, ATTR_FUNC = 1, 10
LIST_FUNC = 9
NAME_ATTR_LIST_NAME, NAME_ATTR_LIST_ATTR = 1, 2


@dataclass(frozen=True)
class OpUse:
    """One op (or function) name a node asks for, and where."""

    name: str
    where: str


@dataclass
class GraphOps:
    ops: list[OpUse] = field(default_factory=list)
    functions: set[str] = field(default_factory=set)  # names defined in a function library
    meta_graphs: int = 0


def walk_saved_model(top: Message, found: GraphOps) -> None:
    """Collect every op name of every meta graph into ``found``; raises WireError on bad bytes
    (what was collected before the error stays in ``found``)."""
    for meta in top.fields():
        if meta.number != SAVED_MODEL_META_GRAPHS:
            continue
        meta_message = top.nested(meta)
        where = f"meta_graphs[{found.meta_graphs}]"
        found.meta_graphs += 1
        for graph in meta_message.fields():
            if graph.number == META_GRAPH_GRAPH_DEF:
                _graph_def(meta_message.nested(graph), where, found)


def _graph_def(graph: Message, where: str, found: GraphOps) -> None:
    nodes = 0
    for item in graph.fields():
        if item.number == GRAPH_NODE:
            _node(graph.nested(item), f"{where}.graph_def.node[{nodes}]", found)
            nodes += 1
        elif item.number == GRAPH_LIBRARY:
            _library(graph.nested(item), where, found)


def _library(library: Message, where: str, found: GraphOps) -> None:
    for item in library.fields():
        if item.number == LIBRARY_FUNCTION:
            _function(library.nested(item), where, found)


def _function(function: Message, where: str, found: GraphOps) -> None:
    names = [_signature_name(function.nested(item)) for item in function.fields()
             if item.number == FUNCTION_SIGNATURE]
    label = names[-1] if names else "?"
    found.functions.update(name for name in names if name)
    nodes = 0
    for item in function.fields():
        if item.number == FUNCTION_NODE_DEF:
            _node(function.nested(item), f"{where} function {label!r} node_def[{nodes}]", found)
            nodes += 1


def _signature_name(op_def: Message) -> str:
    names = [item.text() for item in op_def.fields() if item.number == OP_DEF_NAME]
    return names[-1] if names else ""


def _node(node: Message, where: str, found: GraphOps) -> None:
    names, ops, attrs = [], [], []
    for item in node.fields():  # one pass: a graph can have hundreds of thousands of nodes
        if item.number == NODE_NAME:
            names.append(item.text())
        elif item.number == NODE_OP:
            ops.append(item.text())
        elif item.number == NODE_ATTR:
            attrs.append(item)
    label = f"{where} {names[-1]!r}" if names else where
    found.ops.extend(OpUse(op, label) for op in ops or [""])  # no op field: the empty op
    for item in attrs:
        _attr_entry(node.nested(item), label, found)


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
