"""A bounded GGUF header reader: magic, version, counts, metadata KVs and tensor infos.

It reads through a blob front to back and never maps the file. Large arrays (token
lists) are skipped element by element; only a few keys are kept (chat templates and
identity facts), plus every other short string value and the strings of short string arrays
(``strings``) so the text rules see URLs and commands hidden in metadata. Every count and
length is checked against the bytes left in the file, so a hostile header fails with
``MalformedGGUF`` instead of exhausting memory.
Type ids and quant block sizes come from the ``gguf`` package.

Where the data section starts is read as each loader reads it (``_alignment``): llama.cpp
(``ggml/src/gguf.cpp``, ``gguf_init_from_file_impl``) and the ``gguf`` package (``GGUFReader``,
which transformers uses) take ``general.alignment`` only as one UINT32 power of two and refuse the
file otherwise; candle (``candle-core/src/quantized/gguf_file.rs``, ``Content::read``) takes the
last such key of any integer type up to 32 bits, checks no power of two, and falls back to 32 for
other types. A key that makes them disagree where a file with tensors keeps its tensor data is a
``parser-differential`` (``GGUFHeader.differentials``). A file without tensors maps no data: llama.cpp
does not even pad to the alignment then, so a vocab-only file that ends right after its metadata is
well formed.
"""

from __future__ import annotations

import io
import math
import struct
from dataclasses import dataclass, field

from gguf.constants import GGML_QUANT_SIZES, GGUF_DEFAULT_ALIGNMENT, GGUFValueType

from app.core.formats.blobs import open_blob
from app.core.ports import Blob

MAX_KEY_BYTES = 64 * 1024
MAX_NAME_BYTES = 64 * 1024
MAX_DIMS = 4  # GGML_MAX_DIMS
MAX_ARRAY_DEPTH = 2
MAX_METADATA_STRING = 64 * 1024  # longer metadata strings are skipped, not kept for the text rules
MAX_KEPT_ARRAY = 64  # string arrays up to this long are kept (tags, base models); token lists are not
MAX_KEPT_STRINGS = 1024
TEMPLATE_KEY = "tokenizer.chat_template"
ALIGNMENT_KEY = "general.alignment"
_KEPT_FACTS = {"general.architecture", "general.name", ALIGNMENT_KEY, "general.file_type"}
# candle honours an alignment of these value types (negative ones fall back to the default).
_CANDLE_ALIGNMENT_TYPES = frozenset({GGUFValueType.UINT8, GGUFValueType.UINT16, GGUFValueType.UINT32,
                                     GGUFValueType.INT8, GGUFValueType.INT16, GGUFValueType.INT32})
_SCALARS: dict[int, str] = {
    GGUFValueType.UINT8: "B", GGUFValueType.INT8: "b", GGUFValueType.UINT16: "H", GGUFValueType.INT16: "h",
    GGUFValueType.UINT32: "I", GGUFValueType.INT32: "i", GGUFValueType.FLOAT32: "f", GGUFValueType.BOOL: "?",
    GGUFValueType.UINT64: "Q", GGUFValueType.INT64: "q", GGUFValueType.FLOAT64: "d",
}


class MalformedGGUF(Exception):
    """The header breaks the GGUF format in a way a loader would choke on."""


class TooLong(Exception):
    """A kept string is longer than the caller allows."""


@dataclass
class GGUFHeader:
    version: int
    byte_order: str  # "little" or "big"
    tensor_count: int
    kv_count: int
    templates: dict[str, str] = field(default_factory=dict)  # GGUF key -> Jinja source
    facts: dict[str, int | float | bool | str] = field(default_factory=dict)
    strings: dict[str, str] = field(default_factory=dict)  # other string metadata: key or key[i] -> value
    unknown_tensor_types: set[int] = field(default_factory=set)
    alignments: list[tuple[int, int | float | bool | None]] = field(default_factory=list)  # (type, value) per key
    differentials: list[str] = field(default_factory=list)  # where loaders read the file differently


class _Reader:
    def __init__(self, blob: Blob, order: str) -> None:
        self._fh = open_blob(blob)
        self._size = blob.size
        self.order = order

    @property
    def pos(self) -> int:
        return self._fh.tell()

    @property
    def left(self) -> int:
        return self._size - self.pos

    def take(self, n: int, what: str) -> bytes:
        if n > self.left:
            raise MalformedGGUF(f"{what} at offset {self.pos} needs {n} bytes, only {self.left} left")
        return self._fh.read(n)

    def skip(self, n: int, what: str) -> None:
        if n > self.left:
            raise MalformedGGUF(f"{what} at offset {self.pos} claims {n} bytes, only {self.left} left")
        self._fh.seek(n, io.SEEK_CUR)

    def scalar(self, code: str, what: str) -> int | float | bool:
        raw = self.take(struct.calcsize(code), what)
        value: int | float | bool = struct.unpack(self.order + code, raw)[0]
        return value

    def count(self, what: str) -> int:
        return int(self.scalar("Q", what))

    def string(self, limit: int, what: str, too_long: type[Exception] = MalformedGGUF) -> str:
        length = self.count(f"{what} length")
        if length > limit:
            raise too_long(f"{what} is {length} bytes (limit {limit})")
        return self.take(length, what).decode("utf-8", errors="replace")

    def short_string(self, limit: int, what: str) -> str | None:
        """The string when it is at most ``limit`` bytes; otherwise skipped and None."""
        length = self.count(f"{what} length")
        if length > limit:
            self.skip(length, what)
            return None
        return self.take(length, what).decode("utf-8", errors="replace")


def read_gguf(blob: Blob, max_string: int) -> GGUFHeader:
    head = blob.read(0, 24)
    if len(head) < 24 or head[:4] != b"GGUF":
        raise MalformedGGUF("file is too short for a GGUF header")
    order = "<" if head[4:6] != b"\x00\x00" else ">"  # big-endian files store the version swapped
    (version,) = struct.unpack_from(order + "I", head, 4)
    if version not in (2, 3):
        raise MalformedGGUF(f"unsupported GGUF version {version}")
    reader = _Reader(blob, order)
    reader.skip(8, "header")
    tensor_count, kv_count = reader.count("tensor count"), reader.count("metadata count")
    # Every KV needs >= 13 bytes and every tensor info >= 24: counts past that are lies.
    if kv_count * 13 + tensor_count * 24 > reader.left:
        raise MalformedGGUF(f"{kv_count} metadata entries and {tensor_count} tensors cannot fit in the file")
    header = GGUFHeader(version, "little" if order == "<" else "big", tensor_count, kv_count)
    _read_metadata(reader, header, max_string)
    _read_tensor_infos(reader, header)
    return header


def _read_metadata(reader: _Reader, header: GGUFHeader, max_string: int) -> None:
    seen: set[str] = set()
    for _ in range(header.kv_count):
        key = reader.string(MAX_KEY_BYTES, "metadata key")
        if key in seen and key != ALIGNMENT_KEY:  # a repeated alignment: judged with the tensor layout
            raise MalformedGGUF(f"duplicate metadata key {key!r}")
        seen.add(key)
        vtype = int(reader.scalar("I", f"type of {key!r}"))
        if key == ALIGNMENT_KEY:
            _read_alignment(reader, header, vtype)
        elif key == TEMPLATE_KEY or key.startswith(TEMPLATE_KEY + "."):
            if vtype != GGUFValueType.STRING:
                raise MalformedGGUF(f"{key!r} has value type {vtype}, not string")
            header.templates[key] = reader.string(max_string, key, too_long=TooLong)
        elif key in _KEPT_FACTS and vtype in _SCALARS:
            header.facts[key] = reader.scalar(_SCALARS[vtype], key)
        elif key in _KEPT_FACTS and vtype == GGUFValueType.STRING:
            value = reader.short_string(1024, key)
            if value is not None:
                header.facts[key] = value
        elif vtype == GGUFValueType.STRING:
            _keep(header, key, reader.short_string(MAX_METADATA_STRING, key))
        elif vtype == GGUFValueType.ARRAY:
            _read_array(reader, header, key)
        else:
            _skip_value(reader, vtype, key, depth=0)


def _read_alignment(reader: _Reader, header: GGUFHeader, vtype: int) -> None:
    if vtype in _SCALARS:
        value = reader.scalar(_SCALARS[vtype], ALIGNMENT_KEY)
        header.facts[ALIGNMENT_KEY] = value
        header.alignments.append((vtype, value))
    else:
        _skip_value(reader, vtype, ALIGNMENT_KEY, depth=0)
        header.alignments.append((vtype, None))


def _keep(header: GGUFHeader, key: str, value: str | None) -> None:
    if value is not None and len(header.strings) < MAX_KEPT_STRINGS:
        header.strings[key] = value


def _read_array(reader: _Reader, header: GGUFHeader, key: str) -> None:
    etype = int(reader.scalar("I", f"element type of {key!r}"))
    count = reader.count(f"{key!r} element count")
    if etype != GGUFValueType.STRING or count > MAX_KEPT_ARRAY:
        _skip_elements(reader, key, 0, etype, count)
        return
    if count * 8 > reader.left:
        raise MalformedGGUF(f"array {key!r} claims {count} elements, more than the file holds")
    for index in range(count):
        _keep(header, f"{key}[{index}]", reader.short_string(MAX_METADATA_STRING, key))


def _skip_value(reader: _Reader, vtype: int, key: str, depth: int) -> None:
    if vtype in _SCALARS:
        reader.skip(struct.calcsize(_SCALARS[vtype]), key)
    elif vtype == GGUFValueType.STRING:
        reader.skip(reader.count(f"{key!r} length"), key)
    elif vtype == GGUFValueType.ARRAY:
        _skip_array(reader, key, depth)
    else:
        raise MalformedGGUF(f"{key!r} has unknown value type {vtype}")


def _skip_array(reader: _Reader, key: str, depth: int) -> None:
    if depth >= MAX_ARRAY_DEPTH:
        raise MalformedGGUF(f"{key!r} nests arrays deeper than {MAX_ARRAY_DEPTH}")
    etype = int(reader.scalar("I", f"element type of {key!r}"))
    count = reader.count(f"{key!r} element count")
    _skip_elements(reader, key, depth, etype, count)


def _skip_elements(reader: _Reader, key: str, depth: int, etype: int, count: int) -> None:
    if etype in _SCALARS:
        reader.skip(count * struct.calcsize(_SCALARS[etype]), f"array {key!r}")
        return
    if count * 8 > reader.left:  # strings and arrays need >= 8 bytes each
        raise MalformedGGUF(f"array {key!r} claims {count} elements, more than the file holds")
    for _ in range(count):
        _skip_value(reader, etype, key, depth + 1)


def _read_tensor_infos(reader: _Reader, header: GGUFHeader) -> None:
    alignment = _alignment(header)
    names: set[str] = set()
    expected: int | None = 0  # loaders require tensors packed in order, each padded to the alignment
    needed = 0  # bytes of tensor data the loader will map
    for _ in range(header.tensor_count):
        name = reader.string(MAX_NAME_BYTES, "tensor name")
        if name in names:
            raise MalformedGGUF(f"duplicate tensor name {name!r}")
        names.add(name)
        n_dims = int(reader.scalar("I", f"dims of {name!r}"))
        if n_dims > MAX_DIMS:
            raise MalformedGGUF(f"tensor {name!r} has {n_dims} dimensions (max {MAX_DIMS})")
        dims = [reader.count(f"shape of {name!r}") for _ in range(n_dims)]
        ggml_type, offset = int(reader.scalar("I", f"type of {name!r}")), reader.count(f"offset of {name!r}")
        if expected is not None and offset != expected:
            raise MalformedGGUF(f"tensor {name!r} at data offset {offset}, expected {expected}")
        size = _tensor_bytes(name, dims, ggml_type, header)
        if size is None or expected is None:
            expected = None
            continue
        needed = max(needed, offset + size)
        expected += -(-size // alignment) * alignment
    # gguf.cpp pads to the data section only when there are tensors: a vocab-only file may end here.
    data_start = _pad(reader.pos, alignment) if header.tensor_count else reader.pos
    header.facts["data_offset"] = data_start
    if needed and data_start + needed > reader.pos + reader.left:
        raise MalformedGGUF(f"tensor data ends at {data_start + needed}, past the end of the file")
    if header.differentials:
        header.differentials[-1] += f" from offset {data_start}"


def _alignment(header: GGUFHeader) -> int:
    """The alignment to lay tensors out with; a key the loaders read differently is recorded."""
    refusal = _reference_refusal(header.alignments)
    if refusal is None:
        value = header.alignments[0][1] if header.alignments else GGUF_DEFAULT_ALIGNMENT
        return int(value or GGUF_DEFAULT_ALIGNMENT)
    candle = _candle_alignment(header.alignments)
    if header.tensor_count == 0 or candle is None:
        raise MalformedGGUF(refusal)  # every loader refuses it (or nothing is mapped): a loader chokes
    header.differentials.append(
        f"{refusal}: llama.cpp and the gguf package refuse the file, candle reads its tensor data aligned to {candle}")
    return candle


def _reference_refusal(alignments: list[tuple[int, int | float | bool | None]]) -> str | None:
    """Why llama.cpp's gguf.cpp and gguf's GGUFReader refuse these alignment keys, or None."""
    if not alignments:
        return None
    if len(alignments) > 1:
        return f"{ALIGNMENT_KEY} appears {len(alignments)} times"
    vtype, value = alignments[0]
    if vtype != GGUFValueType.UINT32:
        return f"{ALIGNMENT_KEY} has value type {vtype}, not uint32"
    if not isinstance(value, int) or value <= 0 or value & (value - 1):
        return f"{ALIGNMENT_KEY} {value} is not a power of two"
    return None


def _candle_alignment(alignments: list[tuple[int, int | float | bool | None]]) -> int | None:
    """candle's alignment: the last key's value when an integer type it knows, else 32; None if 0 (it fails)."""
    vtype, value = alignments[-1]
    if vtype not in _CANDLE_ALIGNMENT_TYPES or not isinstance(value, int) or value < 0:
        return GGUF_DEFAULT_ALIGNMENT
    return value or None


def _pad(offset: int, alignment: int) -> int:
    return -(-offset // alignment) * alignment


def _tensor_bytes(name: str, dims: list[int], ggml_type: int, header: GGUFHeader) -> int | None:
    if ggml_type not in GGML_QUANT_SIZES:
        header.unknown_tensor_types.add(ggml_type)  # newer than our gguf package: size unknown
        return None
    block, type_size = GGML_QUANT_SIZES[ggml_type]  # type: ignore[index]
    if dims and dims[0] % block:
        raise MalformedGGUF(f"tensor {name!r} row of {dims[0]} is not a multiple of the block size {block}")
    elements = math.prod(dims)
    if elements >= 1 << 63:
        raise MalformedGGUF(f"tensor {name!r} has {elements} elements")
    return int(elements // block * type_size)
