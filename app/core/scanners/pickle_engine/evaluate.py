"""Evaluate pure text helpers on constants, so encoded names and commands are seen.

A pickle can spell ``os.system`` as ``codecs.decode("bf", "rot13")`` or carry its command
as base64: the import and the argument only exist once the load has called the helper.
These helpers are pure functions of their constant arguments, so the analysis computes
them exactly as the load would (with Python's own codecs, on inputs already capped by
``max_string_arg``) and carries the result on as a constant. Nothing here imports or
calls anything named by the pickle.

Every helper's output size is bounded *before* it runs (``str.replace`` of a 64 KiB string
can ask for gigabytes): past ``MAX_RESULT``, or past what one stream may still evaluate
(``EvalBudget``), the helper is not run and the call stays a call, which the analysis judges
as it judges any call (a name it would have computed is an unresolved import, critical).
"""

from __future__ import annotations

import base64
import binascii
import codecs
from collections.abc import Callable

from app.core.scanners.pickle_engine.values import MAX_KEPT_ITEMS, Const, ListVal, TupleVal, Value

MAX_RESULT = 1 << 20  # a decoded constant larger than this is not carried on
# Characters (or bytes) one stream's evaluations may produce in all: results are kept on the
# stack and in the memo, so a few bytes of opcodes could otherwise pile up many 1 MiB results.
# Under the 8 MiB a buffer may take without a memory-budget reservation (membudget.SMALL_BUFFER).
MAX_EVALUATED = 4 << 20

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


class EvalBudget:
    """What one pickle stream may still evaluate (characters or bytes of results)."""

    def __init__(self, total: int = MAX_EVALUATED) -> None:
        self.left = total

    def allows(self, size: int) -> bool:
        return size <= min(MAX_RESULT, self.left)

    def spend(self, size: int) -> None:
        self.left -= size


def evaluate(dotted: str, args: Value, budget: EvalBudget | None = None) -> Const | None:
    """The constant ``dotted(*args)`` returns, or None when it is not a helper on constants
    or its result could be larger than the budget allows (then it is never run)."""
    helper = HELPERS.get(dotted)
    if helper is None or not isinstance(args, TupleVal):
        return None
    values = [_constant(a) for a in args.items]
    if any(v is _UNKNOWN for v in values) or any(_size(v) > MAX_RESULT for v in values):
        return None  # big inputs are array payloads (protocol-2 latin1 bytes), not names
    budget = budget or EvalBudget()
    bound = output_bound(dotted, values)
    if bound is None or not budget.allows(bound):
        return None
    try:
        result = helper(*values)
    except (ValueError, TypeError, LookupError, binascii.Error, AttributeError, IndexError, KeyError):
        return None  # the real load raises here too; the call stays a plain call
    if isinstance(result, (str, bytes, bytearray)) and len(result) <= MAX_RESULT:
        budget.spend(len(result))
        return Const(result, computed=True)
    return None


# -- output bounds, computed from the operands without running the helper ------------------
# Most characters/bytes one input character/byte can become under a codec, encoding; decoding
# never lengthens except through an error handler (backslashreplace: 4, xmlcharrefreplace: 10).
_ENCODE_GROWTH = {"rot13": 1, "rot_13": 1, "latin_1": 1, "latin1": 1, "iso_8859_1": 1, "l1": 1, "ascii": 1,
                  "us_ascii": 1, "hex": 2, "hex_codec": 2, "base64": 2, "base64_codec": 2, "base_64": 2,
                  "uu": 2, "uu_codec": 2, "quopri": 3, "quopri_codec": 3, "utf_8": 4, "utf8": 4, "u8": 4,
                  "utf": 4, "utf_16": 4, "utf_32": 4}
_ANY_GROWTH = 16  # any other text encoding, or an error handler that spells characters out
_QUIET_ERRORS = frozenset({"strict", "ignore", "replace"})
_CASE_GROWTH = 3  # str.upper/lower/swapcase: one character becomes at most three ("ß" -> "SS")
_SLACK = 64  # headers and padding some codecs add (uu's begin/end lines, a BOM)


def output_bound(dotted: str, values: list[object]) -> int | None:
    """An upper bound on ``len`` of what the helper returns for ``values``, or None when the
    operands are not what the helper takes (it is then not run either)."""
    method = dotted.rsplit(".", 1)[-1]
    subject = values[0] if values else None
    if not isinstance(subject, (str, bytes, bytearray)):
        return _join_bound(values) if method == "join" else None
    size = len(subject)
    if method == "replace":
        return _replace_bound(subject, values[1:])
    if method == "join":
        return _join_bound(values)
    if method in ("lower", "upper", "swapcase"):
        return size * (_CASE_GROWTH if isinstance(subject, str) else 1)
    if method == "strip" or "64decode" in method or method in ("b32decode", "b16decode", "b85decode",
                                                                 "a85decode", "decodebytes", "unhexlify",
                                                                 "a2b_hex", "a2b_base64", "fromhex"):
        return size
    if method in ("encode", "decode"):
        return _codec_bound(method, size, values[1:])
    return None


def _codec_bound(method: str, size: int, options: list[object]) -> int:
    errors = str(options[1]) if len(options) > 1 else "strict"
    if errors not in _QUIET_ERRORS:
        return size * _ANY_GROWTH + _SLACK
    if method == "decode":
        return size + _SLACK
    encoding = str(options[0]).lower().replace("-", "_") if options else "utf_8"
    return size * _ENCODE_GROWTH.get(encoding, _ANY_GROWTH) + _SLACK


def _replace_bound(subject: str | bytes | bytearray, args: list[object]) -> int | None:
    old, new = [*args, None, None][:2]
    hits = _matches(subject, old)
    if hits is None or not isinstance(new, (str, bytes, bytearray)) or not isinstance(old, (str, bytes, bytearray)):
        return None
    if len(args) > 2:
        if not isinstance(args[2], int):
            return None
        if args[2] >= 0:
            hits = min(hits, args[2])
    return len(subject) + hits * max(0, len(new) - len(old))


def _matches(subject: str | bytes | bytearray, old: object) -> int | None:
    """How many times ``replace`` would substitute ``old`` (an empty ``old`` matches between characters)."""
    if isinstance(subject, str) and isinstance(old, str):
        return subject.count(old) if old else len(subject) + 1
    if isinstance(subject, (bytes, bytearray)) and isinstance(old, (bytes, bytearray)):
        return subject.count(old) if old else len(subject) + 1
    return None


def _join_bound(values: list[object]) -> int | None:
    if len(values) != 2 or not isinstance(values[0], (str, bytes, bytearray)):
        return None
    separator, items = values[0], values[1]
    if isinstance(items, (str, bytes, bytearray)):
        count, total = len(items), len(items)  # joining a string joins its characters
    elif isinstance(items, list):
        count, total = len(items), _size(items)
    else:
        return None
    return total + len(separator) * max(0, count - 1)


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
