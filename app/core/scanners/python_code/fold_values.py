"""What pure operations on folded constants give (``constants`` folds the expressions): ``+``, ``*``
and integer arithmetic, string methods, ``chr``/``bytes``/``list``..., base64/hex decoders,
codecs and bounded decompression. Every result is capped (``capped``): ``MAX_VALUE`` characters,
bytes or items, ``MAX_INT_BITS`` bits; an operation that could build more is refused before it runs.
"""

from __future__ import annotations

import ast
import base64
import binascii
import codecs
import zlib
from dataclasses import dataclass
from typing import TypeAlias

Value: TypeAlias = "str | bytes | int | tuple[Value, ...]"
MAX_VALUE = 64 * 1024  # characters/bytes/items of one folded value
MAX_INT_BITS = 64
MAX_WEIGHT = 4 * MAX_VALUE  # characters plus items inside one folded tuple (a string's characters: 2 each)
_TEXT_METHODS = {"lower", "upper", "strip", "lstrip", "rstrip", "swapcase", "title", "capitalize"}
_B64 = {
    "base64.b64decode": base64.b64decode, "base64.standard_b64decode": base64.standard_b64decode,
    "base64.urlsafe_b64decode": base64.urlsafe_b64decode, "base64.b32decode": base64.b32decode,
    "base64.b16decode": base64.b16decode, "base64.b85decode": base64.b85decode,
    "base64.a85decode": base64.a85decode, "base64.decodebytes": base64.decodebytes,
    "binascii.a2b_base64": binascii.a2b_base64,
}
_HEX = {"bytes.fromhex", "bytearray.fromhex", "binascii.unhexlify", "binascii.a2b_hex"}
_INFLATE = {"zlib.decompress", "gzip.decompress"}


@dataclass(frozen=True)
class Folded:
    value: Value
    computed: bool  # built by an operation (not one plain literal): a sign of hiding


def capped(folded: Folded | None) -> Folded | None:
    if folded is None:
        return None
    value = folded.value
    if isinstance(value, int):
        return folded if value.bit_length() <= MAX_INT_BITS else None
    return folded if len(value) <= MAX_VALUE and weight_of(value) <= MAX_WEIGHT else None


def weight_of(value: Value) -> int:
    """Characters, bytes and items a value holds (a tuple: what its members hold, plus one each)."""
    if isinstance(value, int):
        return 1
    if isinstance(value, tuple):
        return len(value) + sum(weight_of(v) for v in value if not isinstance(v, int))
    return len(value)


def items_of(folded: Folded | None) -> tuple[Value, ...] | None:
    if folded is None:
        return None
    value = folded.value
    if isinstance(value, str):
        return tuple(value)
    if isinstance(value, bytes):
        return tuple(value)  # ints, as iterating bytes gives
    if isinstance(value, tuple):
        return value
    return None


def fold_binop(op: ast.operator, left: Folded | None, right: Folded | None) -> Folded | None:
    if left is None or right is None:
        return None
    a, b = left.value, right.value
    result: Value | None = None
    if isinstance(op, ast.Add) and type(a) is type(b) and not isinstance(a, int):
        result = a + b  # type: ignore[operator]
    elif isinstance(a, int) and isinstance(b, int):
        result = _int_op(op, a, b)
    elif isinstance(op, ast.Mult) and isinstance(b, int) and isinstance(a, str | bytes) and 0 <= b <= MAX_VALUE:
        result = a * b if len(a) * b <= MAX_VALUE else None
    return Folded(result, True) if result is not None else None


def _int_op(op: ast.operator, a: int, b: int) -> int | None:
    if isinstance(op, ast.Add):
        return a + b
    if isinstance(op, ast.Sub):
        return a - b
    if isinstance(op, ast.Mult):
        return a * b
    if isinstance(op, ast.BitXor):
        return a ^ b
    if isinstance(op, ast.BitAnd):
        return a & b
    if isinstance(op, ast.BitOr):
        return a | b
    if isinstance(op, ast.Mod) and b:
        return a % b
    if isinstance(op, ast.FloorDiv) and b:
        return a // b
    return None


def fold_method(owner: Value, method: str, args: list[Value]) -> Folded | None:
    if method == "join" and isinstance(owner, str | bytes) and len(args) == 1:
        items = items_of(Folded(args[0], True))
        if items is None or not all(type(i) is type(owner) for i in items):
            return None
        if sum(map(len, items)) + len(owner) * max(0, len(items) - 1) > MAX_VALUE:  # type: ignore[arg-type]
            return None  # bounded before it runs: a long separator between many items is gigabytes
        return Folded(owner.join(items), True)  # type: ignore[arg-type]
    if method == "decode" and isinstance(owner, bytes):
        return _decode_bytes(owner, args)
    if method == "encode" and isinstance(owner, str) and not args:
        return Folded(owner.encode("utf-8", "surrogatepass"), True)
    if method in _TEXT_METHODS and isinstance(owner, str | bytes) and not args:
        return Folded(getattr(owner, method)(), True)
    if method == "replace" and isinstance(owner, str) and len(args) == 2 and all(isinstance(a, str) for a in args):
        old, new = args
        if old and len(owner) // len(old) * max(len(new), 1) <= MAX_VALUE:  # type: ignore[arg-type]
            return Folded(owner.replace(old, new), True)  # type: ignore[arg-type]
    if method == "translate":
        return None
    return None


def _decode_bytes(owner: bytes, args: list[Value]) -> Folded | None:
    encoding = args[0] if args else "utf-8"
    if not isinstance(encoding, str) or encoding.lower().replace("_", "-") not in (
            "utf-8", "utf8", "ascii", "latin-1", "latin1", "iso-8859-1"):
        return None
    try:
        return Folded(owner.decode(encoding), True)
    except UnicodeDecodeError:
        return None


def fold_function(func: str, args: list[Value]) -> Folded | None:
    one = args[0] if len(args) == 1 else None
    if func == "chr" and isinstance(one, int) and 0 <= one <= 0x10FFFF:
        return Folded(chr(one), True)
    if func == "ord" and isinstance(one, str) and len(one) == 1:
        return Folded(ord(one), True)
    if func == "str" and isinstance(one, str | int):
        return Folded(str(one), True)
    if func in ("bytes", "bytearray") and isinstance(one, tuple) and all(
            isinstance(i, int) and 0 <= i < 256 for i in one):
        return Folded(bytes(one), True)  # type: ignore[arg-type]
    if func in ("bytes", "bytearray") and isinstance(one, bytes):
        return Folded(one, True)
    if func in ("list", "tuple", "reversed") and one is not None:
        items = items_of(Folded(one, True))
        if items is None:
            return None
        return Folded(items[::-1] if func == "reversed" else items, True)
    if func in ("codecs.decode", "codecs.encode") and len(args) == 2:
        return _codec(args[0], args[1])
    return _decoder(func, one)


def _decoder(func: str, data: Value | None) -> Folded | None:
    if not isinstance(data, str | bytes):
        return None
    raw = data.encode("latin-1", "replace") if isinstance(data, str) else data
    try:
        if func in _B64:
            return Folded(_B64[func](raw), True)
        if func in _HEX:
            return Folded(bytes.fromhex(raw.decode("ascii")), True)
        if func in _INFLATE:
            return Folded(_inflate(raw, gzip=func.startswith("gzip")), True)
    except (ValueError, binascii.Error, zlib.error, UnicodeDecodeError):
        return None
    return None


def _inflate(raw: bytes, gzip: bool) -> bytes:
    """Decompression capped at MAX_VALUE output bytes (a bomb folds to nothing)."""
    inflater = zlib.decompressobj(31 if gzip else 15)
    out = inflater.decompress(raw, MAX_VALUE + 1)
    if len(out) > MAX_VALUE:
        raise ValueError("decompresses past the fold cap")
    return out


def _codec(data: Value, codec: Value) -> Folded | None:
    if not isinstance(codec, str) or not isinstance(data, str | bytes):
        return None
    name = codec.lower().replace("-", "_")
    if name in ("rot13", "rot_13") and isinstance(data, str):
        return Folded(codecs.decode(data, "rot13"), True)
    if name in ("hex", "hex_codec"):
        return _decoder("bytes.fromhex", data)
    if name in ("base64", "base_64", "base64_codec"):
        return _decoder("base64.b64decode", data)
    if name in ("zlib", "zlib_codec"):
        return _decoder("zlib.decompress", data)
    return None
