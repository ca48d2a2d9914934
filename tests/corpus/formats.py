"""ONNX, TFLite and raw weight blobs (issue 22 items 3 and 5): hostile models and the benign
layouts they must not be confused with. Every model is written byte by byte at test time
(tests/corpus/onnx_writer, tflite_writer); payloads are inert strings."""

from __future__ import annotations

import json

from tests.corpus import onnx_writer as w
from tests.corpus import tflite_writer as tfl
from tests.corpus.registry import Case, Files, one_file, register_all
from tests.samples import hostile

OPENVINO_XML = b'<?xml version="1.0"?>\n<net name="model" version="11">\n<layers>\n</layers>\n</net>\n'


def _raw_blob() -> bytes:
    """float32 weights whose first bytes read as PROTO 2, then an opcode that does not exist."""
    return b"\x80\x02\x22\x3c" + w.floats(2048)[4:]


def _external(location: str) -> Files:
    return one_file("model.onnx", lambda: w.conv_net(external={"location": location, "offset": "0"}))


def _subgraph_escape() -> bytes:
    constant = w.node("Constant", (), ("k",), attributes=[
        w.attribute_tensor("value", w.tensor("k", (64,), external={"location": "../../../root/.ssh/id_rsa"}))])
    branch = w.graph([constant], name="then", inputs=(), outputs=("k",))
    return w.model(w.graph([w.node("If", ("cond",), ("y",), attributes=[
        w.attribute_graph("then_branch", branch), w.attribute_graph("else_branch", branch)])]))


def _custom_domain() -> bytes:
    return w.model(w.graph([w.node("Conv", ("x", "w"), ("c",)), w.node("FastDecode", ("c",), ("y",),
                                                                       domain="com.example.ops")]),
                   opsets=(("", 17), ("com.example.ops", 1)))


def _contrib_ops() -> bytes:
    """What optimum's exports hold: com.microsoft contrib ops (built into onnxruntime)."""
    return w.model(w.graph([w.node("Attention", ("x", "w", "b"), ("a",), domain="com.microsoft"),
                            w.node("FastGelu", ("a",), ("y",), domain="com.microsoft"),
                            w.node("LayerNormalization", ("y",), ("z",))]),
                   opsets=(("", 17), ("com.microsoft", 1)))


def _with_function() -> bytes:
    body = [w.node("Sigmoid", ("x",), ("s",)), w.node("Mul", ("x", "s"), ("y",))]
    return w.model(w.graph([w.node("Swish", ("x",), ("y",), domain="local.fn")]),
                   opsets=(("", 17), ("local.fn", 1)), functions=[w.function("Swish", "local.fn", body)])


def _sharded_external() -> dict[str, bytes]:
    location = {"location": "model.onnx_data", "offset": "0", "length": "864"}
    return {"onnx/model.onnx": w.conv_net(external=location), "onnx/model.onnx_data": w.floats(512),
            "onnx/config.json": json.dumps({"model_type": "resnet"}).encode()}


register_all([
    # onnx/external_data_helper.py load_external_data_for_tensor: os.path.join(base_dir, location)
    # then open(); onnxruntime tensorprotoutils.cc GetExtDataFromTensorProto does the same.
    Case("onnx", "external-data-parent-escape", "hostile", _external("../../etc/passwd"),
         why="the runtime reads /etc/passwd into the tensor", rule="onnx-external-data-escape"),
    Case("onnx", "external-data-absolute", "hostile", _external("/proc/self/environ"),
         why="an absolute location ignores the model folder", rule="onnx-external-data-escape"),
    Case("onnx", "external-data-drive-letter", "hostile", _external("C:\\Users\\Public\\secret.bin"),
         why="a Windows runtime opens the drive path", rule="onnx-external-data-escape"),
    # onnxruntime kTensorProtoMemoryAddressTag: the offset is taken as a pointer into the process.
    Case("onnx", "external-data-ort-memory-tag", "hostile", _external("*/_ORT_MEM_ADDR_/*"),
         why="onnxruntime (and OpenVINO's ONNX frontend) read memory at the offset", rule="onnx-external-data-escape"),
    # onnx external_data_helper._get_all_tensors walks attribute tensors in subgraphs too.
    Case("onnx", "subgraph-constant-escape", "hostile", one_file("model.onnx", _subgraph_escape),
         why="an If branch's Constant tensor is external data outside the folder", rule="onnx-external-data-escape"),
    # onnxruntime SessionOptions.register_custom_ops_library loads the shipped .so in-process.
    Case("onnx", "custom-domain-with-shared-library", "hostile",
         lambda: {"model.onnx": _custom_domain(), "libfastdecode.so": b"\x7fELF\x02\x01\x01" + bytes(57)},
         why="the custom op needs the shipped library, loaded into the process", rule="onnx-custom-domain"),
    # tensorflow/lite/delegates/flex: Flex<Op> runs TensorFlow's kernel for <Op>.
    Case("tflite", "flex-write-file", "hostile", one_file("model.tflite", lambda: tfl.model([3, "FlexWriteFile"])),
         why="the Flex delegate runs tf.raw_ops.WriteFile", rule="tflite-flex-dangerous-op"),
    Case("tflite", "flex-py-func", "hostile", one_file("model.tflite", lambda: tfl.model(["FlexPyFunc", 19])),
         why="the Flex delegate would call back into Python", rule="tflite-flex-dangerous-op"),
    # transformers modeling_utils load_state_dict -> torch.load("pytorch_model.bin"): an IR .xml
    # beside it does not change what transformers does with the name.
    Case("raw-blobs", "pytorch-model-bin-beside-an-ir", "hostile",
         lambda: {"pytorch_model.xml": OPENVINO_XML, "pytorch_model.bin": hostile.by_protocol(2)},
         why="transformers unpickles pytorch_model.bin whatever else reads it", rule="pickle-dangerous-global"),
    # pickle.load runs the head's GLOBAL/REDUCE: a real pickle named as external data stays a pickle.
    Case("raw-blobs", "external-data-that-is-a-pickle", "hostile",
         lambda: {"model.onnx": w.conv_net(external={"location": "weights.pkl"}),
                  "weights.pkl": hostile.by_protocol(2)},
         why="the file is also a pickle a loader would run by its name", rule="pickle-dangerous-global"),
])

register_all([
    Case("onnx", "conv-net", "benign", one_file("model.onnx", w.conv_net),
         why="an ordinary exported Conv/Relu/Pool network with inline weights", vendor="approve"),
    Case("onnx", "contrib-ops", "benign", one_file("model.onnx", _contrib_ops),
         why="com.microsoft contrib ops are built into onnxruntime", vendor="approve"),
    Case("onnx", "local-function", "benign", one_file("model.onnx", _with_function),
         why="a node in a custom domain that names a local function is expanded, no library", vendor="approve"),
    Case("tflite", "detection-postprocess", "benign",
         one_file("model.tflite", lambda: tfl.model([3, 19, 9, "TFLite_Detection_PostProcess"], weights=bytes(4096))),
         why="the stock op resolver registers TFLite_Detection_PostProcess itself", vendor="approve"),
    Case("hard-benign", "onnx-external-data", "benign", _sharded_external,
         why="optimum/torch.onnx.export of a >2 GB model: model.onnx plus model.onnx_data in its folder",
         vendor="approve"),
    Case("hard-benign", "onnx-external-data-pickle-like-head", "benign",
         lambda: {"model.onnx": w.conv_net(external={"location": "model.onnx_data", "offset": "0", "length": "864"}),
                  "model.onnx_data": _raw_blob()},
         why="onnxruntime reads the data file raw; its first float happens to start 0x80 0x02", vendor="approve"),
    Case("hard-benign", "openvino-bin-pickle-like-head", "benign",
         lambda: {"openvino_model.xml": OPENVINO_XML, "openvino_model.bin": _raw_blob()},
         why="optimum-intel's IR: OpenVINO reads the .bin beside the .xml raw", vendor="approve"),
    Case("hard-benign", "tf-checkpoint-shard-pickle-like-head", "benign",
         lambda: {"variables/variables.index": b"\0" * 48, "variables/variables.data-00000-of-00001": _raw_blob()},
         why="TensorFlow's BundleReader reads checkpoint shards raw", vendor="approve"),
])
