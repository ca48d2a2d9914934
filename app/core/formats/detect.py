"""Format detection by content (magic bytes), never by file extension."""

from __future__ import annotations

import pickletools
import re
import struct
from enum import StrEnum

from app.core.formats.pickle_sniff import sniff_text
from app.core.formats.text_encoding import is_utf8_text, text_encoding

HEAD_BYTES = 4096  # enough for every magic below and for a pickle sniff
TAR_BLOCK = 512

# Legacy (pre-1.6, non-zip) torch files start with a pickled magic number.
TORCH_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PREFIX = b"\x80\x02\x8a\x0a" + TORCH_LEGACY_MAGIC.to_bytes(10, "little")


class Format(StrEnum):
    """Every format hfvet sniffs. Values are the report's `files[].format` strings."""

    EMPTY = "empty"
    UNREADABLE = "unreadable"
    TEXT = "text"
    UNKNOWN = "unknown"
    PICKLE = "pickle"
    TORCH_LEGACY = "torch-legacy"
    PYTORCH_ZIP = "pytorch-zip"
    NUMPY = "numpy"
    NUMPY_NPZ = "numpy-npz"
    SAFETENSORS = "safetensors"
    GGUF = "gguf"
    HDF5 = "hdf5"
    KERAS = "keras"
    ZIP = "zip"
    WHEEL = "wheel"
    TAR = "tar"
    SEVEN_Z = "7z"
    GZIP = "gzip"
    BZ2 = "bz2"
    XZ = "xz"
    ZLIB = "zlib"
    LZMA = "lzma"  # raw LZMA ("alone") stream: joblib's 'lzma' compressor
    ZSTD = "zstd"
    LZ4 = "lz4"
    ELF = "elf"
    PE = "pe"
    MACHO = "macho"
    AR = "ar"
    ONNX = "onnx"  # protobuf ModelProto (formats.onnx_model)
    TFLITE = "tflite"  # flatbuffer with file identifier TFL3 (formats.tflite_model)
    COREML = "coreml"  # protobuf Model (.mlmodel; formats.coreml_model)
    TF_CHECKPOINT_INDEX = "tf-checkpoint-index"  # a TensorFlow table (SSTable) by its footer magic
    # Bytes a loader of the repo's layout reads raw (ONNX external data, an OpenVINO IR's .bin...),
    # whose head merely looks like a pickle: decided by formats.side_files, never by the head alone.
    RAW_DATA = "raw-data"


# Named groups: one definition each, so two readers can never disagree about what a zip is.
ZIP_KINDS = frozenset({Format.ZIP, Format.WHEEL, Format.PYTORCH_ZIP, Format.NUMPY_NPZ, Format.KERAS})
# The zip kinds the peer engines open as pickle archives (they read keras and wheels otherwise or not at all).
PEER_ZIP_KINDS = frozenset({Format.ZIP, Format.PYTORCH_ZIP, Format.NUMPY_NPZ})
COMPRESSED_STREAMS = frozenset({Format.GZIP, Format.BZ2, Format.XZ})  # self-describing, with headers
INFLATABLE = COMPRESSED_STREAMS | {Format.ZLIB, Format.LZMA}  # what hfvet decompresses before walking pickles
UNSUPPORTED_COMPRESSION = frozenset({Format.ZSTD, Format.LZ4})  # joblib can write lz4; no decompressor here
EXECUTABLES = frozenset({Format.ELF, Format.PE, Format.MACHO, Format.AR})
NESTED_ARCHIVES = frozenset({Format.ZIP, Format.TAR, Format.SEVEN_Z}) | COMPRESSED_STREAMS
LOADS_THROUGH_PICKLE = (Format.PICKLE, Format.TORCH_LEGACY, Format.PYTORCH_ZIP)  # for the policy's facts
# Formats that hold weights (the policy's `weights_formats`): a malformed container of these is malformed weights.
HOLDS_WEIGHTS = (Format.SAFETENSORS, Format.GGUF, *LOADS_THROUGH_PICKLE, Format.KERAS, Format.NUMPY,
                 Format.NUMPY_NPZ, Format.HDF5)
# Formats that were "unknown" bytes before hfvet read them: still searched for hidden payloads
# (YARA, encoded executables) as unknown content is.
RAW_CONTENT = frozenset({Format.ONNX, Format.TFLITE, Format.COREML, Format.TF_CHECKPOINT_INDEX, Format.RAW_DATA})
LEGACY_TORCH_PICKLES = 5  # magic, protocol, sys_info, the object, storage keys: all unpickled by torch.load

_MAGICS: tuple[tuple[bytes, Format], ...] = (
    (b"\x93NUMPY", Format.NUMPY),
    (b"7z\xbc\xaf\x27\x1c", Format.SEVEN_Z),
    (b"GGUF", Format.GGUF),
    (b"\x7fELF", Format.ELF),
    (b"\x89HDF\r\n\x1a\n", Format.HDF5),
    (b"!<arch>\n", Format.AR),
    (b"\x1f\x8b", Format.GZIP),
    (b"BZh", Format.BZ2),
    (b"\xfd7zXZ\x00", Format.XZ),
    (b"\x5d\x00\x00", Format.LZMA),  # properties 0x5d, then a dictionary size (joblib checks 5d 00)
    (b"\x28\xb5\x2f\xfd", Format.ZSTD),
    (b"\x04\x22\x4d\x18", Format.LZ4),
    (b"PK\x03\x04", Format.ZIP),
    (b"PK\x05\x06", Format.ZIP),  # empty archive
    (b"MZ", Format.PE),
)
TFLITE_IDENTIFIER = b"TFL3"  # flatbuffers file_identifier, bytes 4..8 (tensorflow/lite/schema/schema.fbs)
# ModelProto's field numbers (onnx.proto); writers serialize in field order, ir_version (1) first.
# number -> wire type: a TensorProto .pb (dims 1, data_type 2 as varints) is no model.
_ONNX_FIELDS = {1: 0, 2: 2, 3: 2, 4: 2, 5: 0, 6: 2, 7: 2, 8: 2, 14: 2, 20: 2, 25: 2, 26: 2}
_ONNX_MAX_IR = 64
_COREML_FIRST_TYPE = 200  # Model.proto: the oneof Type's fields start at 200
_MACHO = {
    b"\xfe\xed\xfa\xce", b"\xce\xfa\xed\xfe", b"\xfe\xed\xfa\xcf",
    b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe", b"\xbe\xba\xfe\xca",
}
# zlib streams (joblib compress=True) start with 0x78 and a valid FCHECK.
_ZLIB_SECOND = {0x01, 0x5E, 0x9C, 0xDA}

_IDENT = re.compile(r"^[A-Za-z_][\w.]*$")
_STRUCTURE_OPS = {
    "GLOBAL", "INST", "STACK_GLOBAL", "REDUCE", "BUILD", "MARK", "PUT", "BINPUT",
    "MEMOIZE", "DICT", "LIST", "TUPLE", "SETITEM", "SETITEMS", "APPEND", "APPENDS",
    "EMPTY_DICT", "EMPTY_LIST", "EMPTY_TUPLE", "OBJ", "PROTO", "FRAME",
}


def detect_format(head: bytes, size: int) -> Format:
    """Name the container format of a file from its first bytes."""
    if size == 0 or not head:
        return Format.EMPTY
    if head.startswith(_LEGACY_PREFIX):
        return Format.TORCH_LEGACY
    for magic, name in _MAGICS:
        if head.startswith(magic):
            return _refine_pe(head) if name == Format.PE else name
    if head[:4] in _MACHO:
        return Format.MACHO
    if (len(head) > 262 and head[257:262] == b"ustar") or is_tar_header(head):
        return Format.TAR
    if _is_safetensors(head, size):
        return Format.SAFETENSORS
    # After tar: torch.load opens a tar whatever its first member's name spells (even "TFL3" at 4..8);
    # before pickle: a pickle these would hide is still read as one (readings.py's pickle reading).
    model = _model_format(head)
    if model is not None:
        return model
    if looks_like_pickle(head, complete=size <= len(head)):
        return Format.PICKLE
    if len(head) >= 2 and head[0] == 0x78 and head[1] in _ZLIB_SECOND:
        return Format.ZLIB
    if text_encoding(head):  # UTF-8, or UTF-16/32 with or without a byte-order mark
        return Format.TEXT
    return Format.UNKNOWN


def _model_format(head: bytes) -> Format | None:
    if head[4:8] == TFLITE_IDENTIFIER:
        return Format.TFLITE
    if is_onnx_head(head):
        return Format.ONNX
    if is_coreml_head(head):
        return Format.COREML
    return None


def is_onnx_head(head: bytes) -> bool:
    """The head reads as the start of an ONNX ModelProto: ``ir_version`` first (a small varint),
    then only ModelProto fields, strings among them UTF-8, up to the head's end or a field
    running past it (the graph). Protobuf has no magic; this is what every exporter writes."""
    if len(head) < 4 or head[0] != 0x08 or not 0 < head[1] <= _ONNX_MAX_IR:
        return False
    position, fields = 2, 1
    while position < len(head):
        parsed = _wire_field(head, position)
        if parsed is None:  # a bad varint; one the head cut is no evidence either way
            return fields >= 2 and position > len(head) - 12
        number, wire_type, payload, position = parsed
        if _ONNX_FIELDS.get(number) != wire_type:
            return False
        if payload is None:  # runs past the head: the graph, usually
            return fields >= 2  # ir_version and at least one whole field before it
        fields += 1
        if number in (2, 3, 4, 6) and not _names_text(payload, number == 6):
            return False  # a Core ML model's field 2 is a message (its description), not a name
    return fields >= 2


def is_coreml_head(head: bytes) -> bool:
    """The head reads as a Core ML ``Model``: ``specificationVersion`` first, then only its
    description (2) and ``isUpdatable`` (10) before a model type (field 200 and up; Model.proto),
    all within the head. A SavedModel (schema version 1, then meta graphs 2) has no field past 2,
    so a description that runs past the head is no evidence: such a file is read by name."""
    if len(head) < 4 or head[0] != 0x08 or not 0 < head[1] <= _ONNX_MAX_IR:
        return False
    position = 2
    while position < len(head):
        parsed = _wire_field(head, position)
        if parsed is None:
            return False
        number, wire_type, payload, position = parsed
        if number >= _COREML_FIRST_TYPE:
            return wire_type == 2
        if (number, wire_type) not in ((2, 2), (10, 0)) or payload is None:
            return False
    return False


def _names_text(payload: bytes, prose: bool) -> bool:
    if not is_utf8_text(payload):
        return False
    allowed = "\t\n\r" if prose else ""
    return all(c.isprintable() or c in allowed for c in payload.decode("utf-8", "replace"))


def _wire_field(data: bytes, position: int) -> tuple[int, int, bytes | None, int] | None:
    """(number, wire type, LEN payload or None when cut by the head's end, next position)."""
    tag, position = _varint(data, position)
    if tag is None:
        return None
    number, wire_type = tag >> 3, tag & 7
    if wire_type == 0:
        value, position = _varint(data, position)
        return None if value is None else (number, wire_type, b"", position)
    if wire_type != 2:
        return number, wire_type, b"", position
    length, position = _varint(data, position)
    if length is None:
        return None
    if position + length > len(data):
        return number, wire_type, None, len(data)
    return number, wire_type, data[position : position + length], position + length


def _varint(data: bytes, position: int) -> tuple[int | None, int]:
    result = 0
    for index in range(10):
        if position + index >= len(data):
            return None, position
        byte = data[position + index]
        result |= (byte & 0x7F) << (7 * index)
        if not byte & 0x80:
            return result, position + index + 1
    return None, position


def is_tar_header(head: bytes) -> bool:
    """tarfile's own test of a first header (``TarInfo.frombuf``): a 512-byte block, not all NUL,
    whose checksum field matches. No magic is needed: an old V7 header has none, and
    ``tarfile.open`` (torch.load's legacy tar reading among them) opens it all the same."""
    block = head[:TAR_BLOCK]
    if len(block) < TAR_BLOCK or block.count(0) == TAR_BLOCK:
        return False
    stored = _tar_number(block[148:156])
    rest = block[:148] + block[156:]
    unsigned = 256 + sum(rest)
    signed = unsigned - 256 * sum(1 for b in rest if b > 127)
    return stored in (unsigned, signed)


def _tar_number(field: bytes) -> int | None:
    if field[0] in (0o200, 0o377):  # base-256, as tarfile.nti reads it
        value = int.from_bytes(field[1:], "big")
        return value - 256 ** (len(field) - 1) if field[0] == 0o377 else value
    try:
        return int(field.split(b"\0", 1)[0].decode("ascii").strip() or "0", 8)
    except ValueError:
        return None


def _refine_pe(head: bytes) -> Format:
    # "MZ" alone is common in random data; a real PE has e_lfanew -> "PE\0\0".
    if len(head) >= 64:
        (lfanew,) = struct.unpack_from("<I", head, 60)
        if lfanew + 4 <= len(head) and head[lfanew : lfanew + 4] == b"PE\x00\x00":
            return Format.PE
        if lfanew + 4 > len(head) and lfanew < 1 << 20:
            return Format.PE  # header beyond our sniff window: assume PE, the binary scanner checks
    return Format.TEXT if _is_text(head) else Format.UNKNOWN


def _is_safetensors(head: bytes, size: int) -> bool:
    if len(head) < 10:
        return False
    (n,) = struct.unpack_from("<Q", head, 0)
    return 2 <= n <= size - 8 and head[8:9] == b"{" and head[9:10] in b'"} \n\t\r'


def _is_text(head: bytes) -> bool:
    return is_utf8_text(head)  # the pickle sniff's notion of text: wide text has NULs, like pickles


def looks_like_pickle(head: bytes, max_ops: int = 64, complete: bool = False) -> bool:
    """True when the head parses as a pickle stream (any protocol, PROTO optional).

    Text that happens to parse as a few opcodes ("torch==2.7" is DUP, STOP) is only a
    pickle if its opcodes find the stack items they need (``cat\ndog\nbird`` imports
    ``at.dog``, then breaks at BUILD: a label file; see pickle_sniff) and, besides, it
    either reaches a STOP having imported something (GLOBAL/INST, as a protocol-0 payload
    must) or ending the data given, or imports and calls without a STOP (a truncated payload
    still runs), or, in a head the sniff window cut (``complete`` false), imports and builds
    data (a protocol-0 set of 2000 ints reaches its REDUCE past 4 KiB). A run of imports alone
    (``class_0\nclass_1\n...``) is text.
    Text that is not called a pickle is still walked leniently by the pickle scanner.
    """
    if not head or head[0] not in _OPCODE_BYTES:
        return False
    if head[0] == 0x80:
        return len(head) > 1 and head[1] <= 5
    ops, imports, stop_at = _sniff_ops(head, max_ops)
    if not _is_text(head):
        if imports or stop_at is not None:
            return True
        # Binary data whose bytes happen to be opcodes (a msgpack map: EXT1, then BUILD on one
        # item) must also find the stack items its opcodes need, as the unpickler checks.
        structured = len(ops) >= 3 and any(n in _STRUCTURE_OPS for n in ops)
        return structured and sniff_text(head, complete).consistent
    if not (imports or (stop_at == len(head) - 1 and len(ops) >= 3)):
        return False
    text = sniff_text(head, complete)
    acts = text.calls or (text.builds and not complete)
    return text.consistent and (text.stopped or (bool(imports) and acts))


def could_start_pickle(head: bytes) -> bool:
    """False when the first byte is no pickle opcode: an unpickler fails before doing anything."""
    return bool(head) and head[0] in _OPCODE_BYTES


def _sniff_ops(head: bytes, max_ops: int) -> tuple[list[str], int, int | None]:
    """Opcode names parsed, plausible imports seen, and the STOP position if reached."""
    ops: list[str] = []
    imports = 0
    try:
        for op, arg, pos in pickletools.genops(head):
            if op.name in ("GLOBAL", "INST"):
                if not _plausible_global(arg):
                    return ops, 0, None
                imports += 1
            ops.append(op.name)
            if op.name == "STOP":
                return ops, imports, pos
            if len(ops) >= max_ops:
                break
    except Exception:  # noqa: BLE001, S110 - any parse error just ends the sniff
        pass
    return ops, imports, None


def _plausible_global(arg: object) -> bool:
    if not isinstance(arg, str) or " " not in arg:
        return False
    module, name = arg.split(" ", 1)
    return bool(_IDENT.match(module) and _IDENT.match(name))


_OPCODE_BYTES = {op.code.encode("latin-1")[0] for op in pickletools.opcodes}


def refine_zip(names: list[str]) -> Format:
    """Name the kind of zip from its member names (central directory)."""
    if any(n == "data.pkl" or n.endswith("/data.pkl") for n in names):
        return Format.PYTORCH_ZIP
    if names and all(n.endswith(".npy") for n in names):
        return Format.NUMPY_NPZ
    if "config.json" in names and any(n.endswith(".h5") for n in names):
        return Format.KERAS
    if any(".dist-info/" in n for n in names):
        return Format.WHEEL
    return Format.ZIP

