"""TensorFlow checkpoints (``.index`` + ``.data-NNNNN-of-NNNNN``): recognised, and data.

``tf.train.Checkpoint.restore`` / ``tf.saved_model.load`` read a checkpoint with
``BundleReader`` (tensorflow/core/util/tensor_bundle): the ``.index`` is a table of tensor names
to (shard, offset, size, dtype, shape) entries, the shards are raw tensor bytes. Restoring copies
bytes into variables; no op, function or Python object comes from the checkpoint, so there is
nothing to run. The graph that reads it (a SavedModel's ``saved_model.pb``) is judged by the
SavedModel scanner. The scanner only records that the file was recognised (an info finding).
"""

from __future__ import annotations

from typing import ClassVar

from app.core.findings import FindingSink, RuleInfo, RuleKind, ScanOutcome, Severity
from app.core.formats.detect import Format
from app.core.manifest import ManifestFile
from app.core.scanners.base import ScanContext

RULE = "tf-checkpoint"


class TfCheckpointScanner:
    name: ClassVar[str] = "tf-checkpoint"
    rules: ClassVar[tuple[RuleInfo, ...]] = (
        RuleInfo(RULE, Severity.INFO, "a TensorFlow checkpoint index (a table by its footer magic): tensor data "
                 "that BundleReader restores, nothing that runs", kind=RuleKind.NOTE),
    )

    def handles(self, file: ManifestFile) -> bool:
        return file.format == Format.TF_CHECKPOINT_INDEX

    def version(self) -> str:
        return "1.0 (footer magic)"

    def scan(self, ctx: ScanContext) -> ScanOutcome:
        sink = FindingSink(ctx.file.path, self.name)
        sink.add(RULE, Severity.INFO, f"{ctx.file.size}-byte TensorFlow checkpoint index: tensor data, nothing runs")
        return ScanOutcome.scanned(self.name, ctx.file.path, sink.findings)
