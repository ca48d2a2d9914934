"""Second-stage format detection that needs more than the head (zip member names, a footer)."""

from __future__ import annotations

from app.core.formats.detect import Format, refine_zip
from app.core.formats.streams import CorruptStream
from app.core.formats.zip_reader import read_directory
from app.core.ports import Blob

# tensorflow/core/lib/io/format.h kTableMagicNumber, the last 8 bytes of a table's 48-byte footer:
# what a TF checkpoint's .index is (tensorflow/core/util/tensor_bundle).
TF_TABLE_MAGIC = (0xDB4775248B80FB57).to_bytes(8, "little")
TF_TABLE_FOOTER = 48


def refine_format(blob: Blob, fmt: str) -> str:
    if fmt == Format.UNKNOWN:
        return _tf_table(blob)
    if fmt != Format.ZIP:
        return fmt
    try:
        members = read_directory(blob)
    except CorruptStream:
        return Format.ZIP  # the archive scanner reports what is wrong with it
    return refine_zip([m.name for m in members])


def _tf_table(blob: Blob) -> str:
    """A TensorFlow table (checkpoint .index) by its footer magic; one more small read."""
    if blob.size < TF_TABLE_FOOTER or blob.read(blob.size - 8, 8) != TF_TABLE_MAGIC:
        return Format.UNKNOWN
    return Format.TF_CHECKPOINT_INDEX
