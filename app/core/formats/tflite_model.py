"""A TFLite model's operator codes: what the interpreter must resolve before it runs anything.

``InterpreterBuilder`` (tensorflow/lite/core/interpreter_builder.cc) resolves every entry of
``Model.operator_codes`` with the op resolver before building any subgraph: a builtin by its
code, a custom op by its ``custom_code`` string. Fields from tensorflow/lite/schema/schema.fbs:
  Model: version 0, operator_codes 1, subgraphs 2, description 3, buffers 4
  OperatorCode: deprecated_builtin_code 0 (int8), custom_code 1 (string), version 2,
                builtin_code 3 (int32)
The code in use is the larger of the two builtin fields (``GetBuiltinCode`` in
schema_utils.cc: old files have only the int8 one, new ones set it to 127 past 127).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.formats.flatbuffer import Buffer, FlatError, Table
from app.core.formats.window import ByteWindow
from app.core.ports import Blob

MODEL_VERSION, MODEL_OPERATOR_CODES, MODEL_SUBGRAPHS = 0, 1, 2
CODE_DEPRECATED, CODE_CUSTOM, CODE_VERSION, CODE_BUILTIN = 0, 1, 2, 3
BUILTIN_CUSTOM = 32
MAX_OPERATOR_CODES = 65_536  # real models have a few hundred at most
SCHEMA_VERSION = 3


@dataclass(frozen=True)
class OperatorCode:
    builtin: int
    custom: str | None  # custom_code when builtin is CUSTOM


@dataclass(frozen=True)
class TfliteModel:
    version: int
    codes: tuple[OperatorCode, ...]
    subgraphs: int


def read_model(blob: Blob) -> TfliteModel:
    """The model's operator codes; raises FlatError on bytes the interpreter would refuse."""
    buffer = Buffer(ByteWindow(blob))
    root = buffer.root()
    version = root.scalar(MODEL_VERSION, 4, 0)
    if version != SCHEMA_VERSION:
        raise FlatError(f"schema version {version}, the interpreter accepts {SCHEMA_VERSION} only")
    codes = tuple(_code(table) for table in root.tables(MODEL_OPERATOR_CODES, MAX_OPERATOR_CODES))
    subgraphs = len(root.tables(MODEL_SUBGRAPHS, MAX_OPERATOR_CODES))
    return TfliteModel(version, codes, subgraphs)


def _code(table: Table) -> OperatorCode:
    deprecated = table.scalar(CODE_DEPRECATED, 1, 0, signed=True)
    builtin = max(deprecated, table.scalar(CODE_BUILTIN, 4, 0, signed=True))
    custom = table.string(CODE_CUSTOM) if builtin == BUILTIN_CUSTOM else None
    return OperatorCode(builtin, custom)
