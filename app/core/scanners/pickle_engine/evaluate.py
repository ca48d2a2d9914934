"""Evaluate pure text helpers on constants, so encoded names and commands are seen.

A pickle can spell ``os.system`` as ``codecs.decode("bf", "rot13")`` or carry its command
as base64: the import and the argument only exist once the load has called the helper.
These helpers are pure functions of their constant arguments, so the analysis computes
them exactly as the load would (with Python's own codecs, on inputs already capped by
``max_string_arg``) and carries the result on as a constant. Nothing here imports or
calls anything named by the pickle.
"""

from __future__ import annotations

import base64
import binascii
import codecs
from collections.abc import Callable

from app.core.scanners.pickle_engine.values import MAX_KEPT_ITEMS, Const, ListVal, TupleVal, Value

MAX_RESULT = 1 << 20  # a decoded constant larger than this is not carried on

# Codecs that are pure, bounded transforms of text (no zlib/bz2: decompression bombs).
_CODEC_NAMES = (
    "utf_8 utf8 u8 utf latin_1 latin1 iso_8859_1 l1 ascii us_ascii rot13 rot_13 hex hex_codec "
    "base64 base64_codec base_64 unicode_escape raw_unicode_escape utf_16 utf_32 quopri quopri_codec "
    "uu uu_codec"
)
_CODECS = frozenset(_CODEC_NAMES.split())


def _codec(name: object) -> str:
    text = str(name).lower().replace("-", "_").replace(" ", "_")
    if text not in _CODECS:
        raise ValueError(f"codec {name!r} is not evaluated")
    return text


def _encode(obj: object, encoding: object = "utf-8", errors: object = "strict") -> object:
    encode: Callable[..., object] = codecs.encode  # pickled operands are untyped
    return encode(obj, _codec(encoding), str(errors))


def _decode(obj: object, encoding: object = "utf-8", errors: object = "strict") -> object:
    decode: Callable[..., object] = codecs.decode
    return decode(obj, _codec(encoding), str(errors))


def _fromhex(text: object) -> bytes:
    return bytes.fromhex(str(text))


def _join(sep: object, items: object) -> object:
    return sep.join(items)  # type: ignore[attr-defined]


def _method(name: str) -> Callable[..., object]:
    def call(obj: object, *args: object) -> object:
        if not isinstance(obj, (str, bytes, bytearray)):
            raise TypeError("not text")
        return getattr(obj, name)(*args)

    return call


_TEXT_METHODS = ("decode", "encode", "lower", "upper", "swapcase", "strip", "replace", "join")

HELPERS: dict[str, Callable[..., object]] = {
    "_codecs.encode": _encode, "_codecs.decode": _decode, "codecs.encode": _encode, "codecs.decode": _decode,
    "base64.b64decode": base64.b64decode, "base64.standard_b64decode": base64.standard_b64decode,
    "base64.urlsafe_b64decode": base64.urlsafe_b64decode, "base64.b32decode": base64.b32decode,
    "base64.b16decode": base64.b16decode, "base64.b85decode": base64.b85decode,
    "base64.a85decode": base64.a85decode, "base64.decodebytes": base64.decodebytes,
    "binascii.unhexlify": binascii.unhexlify, "binascii.a2b_hex": binascii.a2b_hex,
    "binascii.a2b_base64": binascii.a2b_base64,
    "builtins.bytes.fromhex": _fromhex, "builtins.bytearray.fromhex": _fromhex,
    "builtins.str.join": _join, "builtins.bytes.join": _join,
    **{f"builtins.{t}.{m}": _method(m) for t in ("str", "bytes", "bytearray") for m in _TEXT_METHODS},
}


def evaluate(dotted: str, args: Value) -> Const | None:
    """The constant ``dotted(*args)`` returns, or None when it is not a helper on constants."""
    helper = HELPERS.get(dotted)
    if helper is None or not isinstance(args, TupleVal):
        return None
    values = [_constant(a) for a in args.items]
    if any(v is _UNKNOWN for v in values) or any(_size(v) > MAX_RESULT for v in values):
        return None  # big inputs are array payloads (protocol-2 latin1 bytes), not names
    try:
        result = helper(*values)
    except (ValueError, TypeError, LookupError, binascii.Error, AttributeError, IndexError, KeyError):
        return None  # the real load raises here too; the call stays a plain call
    if isinstance(result, (str, bytes, bytearray)) and len(result) <= MAX_RESULT:
        return Const(result, computed=True)
    return None


_UNKNOWN = object()


def _size(value: object) -> int:
    if isinstance(value, list):
        return sum(_size(v) for v in value)
    return len(value) if isinstance(value, (str, bytes, bytearray)) else 0


def _constant(value: Value) -> object:
    if isinstance(value, Const):
        return value.value
    if isinstance(value, (TupleVal, ListVal)):  # str.join's iterable
        if len(value.items) >= MAX_KEPT_ITEMS:
            return _UNKNOWN  # members beyond the kept ones are not known
        items = [_constant(v) for v in value.items]
        return _UNKNOWN if any(i is _UNKNOWN for i in items) else items
    return _UNKNOWN
