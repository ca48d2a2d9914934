"""SavedModelScanner: SavedModel bytes built at test time by a tiny protobuf writer."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.findings import Severity
from app.core.limits import Limits
from app.core.manifest import ManifestFile
from app.core.pipeline import vet
from app.core.report import Report
from app.core.scanners import all_scanners
from app.core.scanners.savedmodel_scanner import SavedModelScanner
from app.core.verdict import Verdict
from app.sources.local import LocalSource
from tests.unit.core.scanners import peer_samples
from tests.unit.core.scanners import savedmodel_samples as sm

PB = "m/saved_model.pb"


def _vet_bytes(tmp_path: Path, data: bytes, limits: Limits | None = None) -> Report:
    (tmp_path / "m").mkdir(exist_ok=True)
    (tmp_path / PB).write_bytes(data)
    return peer_samples.vet_with(SavedModelScanner(), tmp_path, limits)


def _rules(report: Report) -> list[tuple[str, Severity, str | None]]:
    return sorted((f.rule, f.severity, f.evidence) for f in report.findings)


@pytest.mark.parametrize(("path", "handled"), [
    ("saved_model.pb", True), ("a/b/saved_model.pb", True), ("model.pb", False), ("saved_model.pbtxt", True),
    ("model.pbtxt", False),
])
def test_handles_by_name_whatever_the_bytes_sniff_as(path: str, handled: bool) -> None:
    assert SavedModelScanner().handles(ManifestFile(path, 10, format="unknown")) is handled


def test_benign_graph_is_clean_and_approvable(tmp_path: Path) -> None:
    report = _vet_bytes(tmp_path, sm.saved_model(sm.benign_graph()))
    assert report.findings == ()
    assert report.files[0].scanned and report.verdict is Verdict.APPROVE


def test_benign_graph_with_every_scanner_is_scanned_without_high_findings(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / PB).write_bytes(sm.saved_model(sm.benign_graph()))
    report = vet(LocalSource(tmp_path), all_scanners())
    assert all(f.severity.rank < Severity.HIGH.rank for f in report.findings), report.findings
    assert report.files[0].scanned  # modelscan no longer leaves the file unscanned


def test_python_and_file_ops_in_the_graph(tmp_path: Path) -> None:
    report = _vet_bytes(tmp_path, sm.saved_model(sm.hostile_graph()))
    assert _rules(report) == [("savedmodel-io-op", Severity.HIGH, "WriteFile"),
                              ("savedmodel-python-op", Severity.CRITICAL, "PyFunc")]
    assert "'cb'" in next(f.message for f in report.findings if f.evidence == "PyFunc")
    assert report.verdict is Verdict.REJECT


def test_ops_inside_library_functions(tmp_path: Path) -> None:
    body = sm.function("__inference_cb_12", sm.node("py", "EagerPyFunc"), sm.node("rd", "ReadFile"))
    graph = sm.graph(sm.node("call", "StatefulPartitionedCall", sm.func_attr("f", "__inference_cb_12")),
                     functions=(body,))
    assert _rules(_vet_bytes(tmp_path, sm.saved_model(graph))) == [
        ("savedmodel-io-op", Severity.HIGH, "ReadFile"), ("savedmodel-python-op", Severity.CRITICAL, "EagerPyFunc")]


def test_a_function_attr_naming_a_primitive_op_counts(tmp_path: Path) -> None:
    # TF resolves a function name in the library first, then as a built-in op.
    graph = sm.graph(sm.node("call", "PartitionedCall", sm.func_attr("f", "PyFuncStateless")))
    assert _rules(_vet_bytes(tmp_path, sm.saved_model(graph))) == [
        ("savedmodel-python-op", Severity.CRITICAL, "PyFuncStateless")]


def test_a_library_function_named_like_a_python_op_does_not_hide_it(tmp_path: Path) -> None:
    graph = sm.graph(sm.node("n", "PyFunc"), functions=(sm.function("PyFunc", sm.node("c", "Const")),))
    assert _rules(_vet_bytes(tmp_path, sm.saved_model(graph))) == [
        ("savedmodel-python-op", Severity.CRITICAL, "PyFunc")]


def test_custom_ops_are_unknown_but_library_calls_are_not(tmp_path: Path) -> None:
    graph = sm.graph(sm.node("a", "MyCustomKernel"), sm.node("b", "my_fn"),
                     functions=(sm.function("my_fn", sm.node("c", "Relu")),))
    assert _rules(_vet_bytes(tmp_path, sm.saved_model(graph))) == [
        ("savedmodel-unknown-op", Severity.MEDIUM, "MyCustomKernel")]


def test_every_value_of_a_repeated_op_field_is_checked(tmp_path: Path) -> None:
    # protobuf keeps the last value of a singular field: "Const" hides nothing.
    graph = sm.graph(sm.node("n", "Const") + sm.len_field(2, "PyFunc"))
    assert ("savedmodel-python-op", Severity.CRITICAL, "PyFunc") in _rules(_vet_bytes(tmp_path, sm.saved_model(graph)))


def test_later_meta_graphs_and_merged_graph_defs_are_walked(tmp_path: Path) -> None:
    split = sm.len_field(2, sm.len_field(2, sm.benign_graph()) + sm.len_field(2, sm.hostile_graph()))
    data = sm.saved_model(sm.benign_graph(), sm.benign_graph()) + split
    assert {f.evidence for f in _vet_bytes(tmp_path, data).findings} == {"PyFunc", "WriteFile"}


def test_counts_repeats_in_one_finding(tmp_path: Path) -> None:
    graph = sm.graph(*(sm.node(f"w{i}", "WriteFile") for i in range(50)))
    [finding] = _vet_bytes(tmp_path, sm.saved_model(graph)).findings
    assert "50 node(s)" in finding.message and "'w0'" in finding.message


def _malformed(report: Report) -> list[str]:
    assert report.files[0].scanned is True and report.verdict is Verdict.REJECT
    return [f.message for f in report.findings if f.rule == "malformed-savedmodel"]


@pytest.mark.parametrize("cut", [1, 2, 5, 9, 17, 30, -1])
def test_truncated_files_are_high_findings(tmp_path: Path, cut: int) -> None:
    data = sm.saved_model(sm.benign_graph())
    [message] = _malformed(_vet_bytes(tmp_path, data[:cut]))
    assert "truncated" in message or "runs past" in message or "no meta graph" in message


def test_what_was_walked_before_a_truncation_is_still_reported(tmp_path: Path) -> None:
    data = sm.saved_model(sm.hostile_graph()) + sm.saved_model(sm.benign_graph())[:-3]
    report = _vet_bytes(tmp_path, data)
    assert {f.rule for f in report.findings} == {"malformed-savedmodel", "savedmodel-python-op", "savedmodel-io-op"}


@pytest.mark.parametrize("seed", range(8))
def test_garbage_is_never_clean(tmp_path: Path, seed: int) -> None:
    data = random.Random(seed).randbytes(2000)
    report = _vet_bytes(tmp_path, data)
    assert report.verdict is Verdict.REJECT and any(f.severity is Severity.HIGH for f in report.findings)


@pytest.mark.parametrize("data", [
    b"", b"\x08\x01",  # no meta graph
    sm.saved_model(sm.graph(sm.int_field(2, 7))),  # NodeDef.op as a varint
    sm.saved_model(sm.graph(sm.len_field(2, b"\xff\xfeop"))),  # op not UTF-8
    sm.saved_model(b"\x0b\x0c"),  # a group in the GraphDef
    b"\x00\x01", b"\x12\xff\xff\xff\xff\x0f",  # field 0; a length past the end
], ids=["empty", "no-meta-graph", "op-varint", "op-not-utf8", "group", "field-0", "long-length"])
def test_malformed_shapes(tmp_path: Path, data: bytes) -> None:
    assert len(_malformed(_vet_bytes(tmp_path, data))) == 1


def test_over_deep_function_attrs_are_malformed_not_a_crash(tmp_path: Path) -> None:
    value = sm.len_field(1, "Relu")
    for _ in range(200):  # NameAttrList.attr -> entry -> AttrValue.func -> NameAttrList ...
        value = sm.len_field(1, "Relu") + sm.len_field(2, sm.len_field(1, "k") + sm.len_field(
            2, sm.len_field(10, value)))
    graph = sm.graph(sm.node("n", "PartitionedCall", sm.len_field(5, sm.len_field(1, "f") + sm.len_field(
        2, sm.len_field(10, value)))))
    [message] = _malformed(_vet_bytes(tmp_path, sm.saved_model(graph)))
    assert "nested more than 100 deep" in message


def test_over_the_read_budget_is_limit_exceeded(tmp_path: Path) -> None:
    report = _vet_bytes(tmp_path, sm.saved_model(sm.benign_graph()), Limits(max_read_bytes_per_file=16))
    assert _rules(report) == [("limit-exceeded", Severity.HIGH, None)]


def _vet_text(tmp_path: Path, text: str) -> Report:
    (tmp_path / "m").mkdir(exist_ok=True)
    (tmp_path / "m" / "saved_model.pbtxt").write_text(text)
    return peer_samples.vet_with(SavedModelScanner(), tmp_path)


PBTXT = """saved_model_schema_version: 1
meta_graphs {
  graph_def {
    node { name: "x" op: "Placeholder" }
    node { name: "cb" op: %s }
  }
}
"""


def test_a_text_format_saved_model_is_never_clean(tmp_path: Path) -> None:
    report = _vet_text(tmp_path, PBTXT % '"Relu"')
    assert _rules(report) == [("savedmodel-text-format", Severity.MEDIUM, None)]
    assert report.verdict is Verdict.REVIEW


@pytest.mark.parametrize("literal", ['"PyFunc"', "'PyFunc'", '"Py" "Func"', '"Py" # split\n  \'Func\'',
                                     r'"\120yFunc"', r'"Py\x46unc"'])
def test_python_ops_in_a_text_format_saved_model_however_spelled(tmp_path: Path, literal: str) -> None:
    report = _vet_text(tmp_path, PBTXT % literal)
    assert ("savedmodel-python-op", Severity.CRITICAL, "PyFunc") in _rules(report)


def test_a_text_format_saved_model_over_the_text_limit_is_limit_exceeded(tmp_path: Path) -> None:
    (tmp_path / "saved_model.pbtxt").write_text(PBTXT % '"Relu"')
    report = peer_samples.vet_with(SavedModelScanner(), tmp_path, Limits(max_text_bytes=64))
    assert _rules(report) == [("limit-exceeded", Severity.HIGH, None)]


def _tf2_saver_graph() -> bytes:
    """The saver tf.saved_model.save writes: the loader feeds saver_filename, and the traced save
    and restore functions join it with constant suffixes before SaveV2 / RestoreV2."""
    save = sm.function(
        "__inference__traced_save_41",
        sm.node("StaticRegexFullMatch", "StaticRegexFullMatch", sm.inputs("file_prefix")),
        sm.node("Const", "Const"), sm.node("Const_1", "Const"),
        sm.node("Select", "Select", sm.inputs("StaticRegexFullMatch:output:0", "Const:output:0", "Const_1:output:0")),
        sm.node("StringJoin", "StringJoin", sm.inputs("file_prefix", "Select:output:0")),
        sm.node("num_shards", "Const"), sm.node("shard", "Const"),
        sm.node("ShardedFilename", "ShardedFilename", sm.inputs("StringJoin:output:0", "shard:output:0",
                                                                 "num_shards:output:0")),
        sm.node("SaveV2/tensor_names", "Const"),
        sm.node("SaveV2", "SaveV2", sm.inputs("ShardedFilename:filename:0", "SaveV2/tensor_names:output:0")),
        sm.node("Pack", "Pack", sm.inputs("ShardedFilename:filename:0", "^SaveV2")),
        sm.node("MergeV2Checkpoints", "MergeV2Checkpoints", sm.inputs("Pack:output:0", "file_prefix")),
        args=("file_prefix", "savev2_variable"))
    restore = sm.function(
        "__inference__traced_restore_60",
        sm.node("RestoreV2/tensor_names", "Const"),
        sm.node("RestoreV2", "RestoreV2", sm.inputs("file_prefix", "RestoreV2/tensor_names:output:0")),
        sm.node("AssignVariableOp", "AssignVariableOp", sm.inputs("variable", "RestoreV2:tensors:0")),
        args=("file_prefix", "variable"))
    return sm.graph(
        sm.node("saver_filename", "Placeholder"), sm.node("v", "VarHandleOp"),
        sm.node("StatefulPartitionedCall", "StatefulPartitionedCall", sm.inputs("saver_filename", "v"),
                sm.func_attr("f", "__inference__traced_save_41")),
        sm.node("StatefulPartitionedCall_1", "StatefulPartitionedCall", sm.inputs("saver_filename", "v"),
                sm.func_attr("f", "__inference__traced_restore_60")),
        functions=(save, restore))


def _tf1_saver_graph() -> bytes:
    """tf.compat.v1.train.Saver's nodes: the filename is a PlaceholderWithDefault the loader feeds."""
    return sm.graph(
        sm.node("save/filename/input", "Const"),
        sm.node("save/filename", "PlaceholderWithDefault", sm.inputs("save/filename/input")),
        sm.node("save/Const", "PlaceholderWithDefault", sm.inputs("save/filename")),
        sm.node("save/SaveV2/tensor_names", "Const"),
        sm.node("save/SaveV2", "SaveV2", sm.inputs("save/Const", "save/SaveV2/tensor_names")),
        sm.node("save/RestoreV2", "RestoreV2", sm.inputs("save/Const", "save/SaveV2/tensor_names")))


@pytest.mark.parametrize("graph", [_tf2_saver_graph, _tf1_saver_graph], ids=["tf2", "tf1"])
def test_the_savers_checkpoint_ops_are_medium_not_high(tmp_path: Path, graph: Callable[[], bytes]) -> None:
    report = _vet_bytes(tmp_path, sm.saved_model(graph()))
    assert {f.rule for f in report.findings} == {"savedmodel-checkpoint-op"}
    assert all(f.severity is Severity.MEDIUM for f in report.findings)
    assert report.verdict is Verdict.REVIEW


@pytest.mark.parametrize("nodes", [
    (sm.node("p", "Const"), sm.node("SaveV2", "SaveV2", sm.inputs("p"))),  # a hardcoded path
    (sm.node("a", "Const"), sm.node("j", "StringJoin", sm.inputs("a", "a")),
     sm.node("r", "RestoreV2", sm.inputs("j:0"))),
    (sm.node("SaveV2", "SaveV2"),),  # no path input at all
    (sm.node("f", "Placeholder"), sm.node("c", "Const"),  # MergeV2Checkpoints: both paths must be fed
     sm.node("m", "MergeV2Checkpoints", sm.inputs("f", "c"))),
    (sm.node("a", "Identity", sm.inputs("b")), sm.node("b", "Identity", sm.inputs("a")),  # a cycle
     sm.node("s", "SaveV2", sm.inputs("a"))),
    (sm.node("f", "Placeholder"), sm.node("s", "SaveV2", sm.inputs("^f"))),  # a control edge feeds nothing
], ids=["const", "joined-consts", "no-input", "merge-half-fed", "cycle", "control-edge"])
def test_checkpoint_ops_with_a_hardcoded_path_stay_high(tmp_path: Path, nodes: tuple[bytes, ...]) -> None:
    report = _vet_bytes(tmp_path, sm.saved_model(sm.graph(*nodes)))
    assert [(f.rule, f.severity) for f in report.findings] == [("savedmodel-io-op", Severity.HIGH)]


def test_a_fed_path_does_not_excuse_other_file_ops(tmp_path: Path) -> None:
    graph = sm.graph(sm.node("f", "Placeholder"), sm.node("w", "WriteFile", sm.inputs("f")))
    assert _rules(_vet_bytes(tmp_path, sm.saved_model(graph))) == [("savedmodel-io-op", Severity.HIGH, "WriteFile")]


def test_a_graph_argument_name_is_not_a_function_argument(tmp_path: Path) -> None:
    # Only a function's own input args count; a graph node named like one is traced as a node.
    body = sm.function("fn", sm.node("file_prefix", "Const"), sm.node("s", "SaveV2", sm.inputs("file_prefix")),
                       args=("file_prefix",))
    report = _vet_bytes(tmp_path, sm.saved_model(sm.graph(functions=(body,))))
    assert [(f.rule, f.severity) for f in report.findings] == [("savedmodel-io-op", Severity.HIGH)]
