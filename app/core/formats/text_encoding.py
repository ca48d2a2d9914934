"""Which Unicode encoding a file's first bytes are text in, by content, never by name.

UTF-8, or UTF-16/UTF-32 in either byte order, with or without a byte-order mark: editors and
PowerShell write BOM-less UTF-16, and a text rule reading it as UTF-8 sees ``c\\0u\\0r\\0l``.
Without a mark, wide text is recognised by the NUL pattern of ASCII-range characters; the
head must decode strictly and be mostly printable, so numbers in a binary do not pass.
"""

from __future__ import annotations

import codecs

# Share of the head's characters that must be printable (ASCII-range when there is no byte-order
# mark): English or code with some other script clears it, small integers and float16 weights
# (mostly non-ASCII or control characters, or invalid surrogates) come nowhere near.
TEXT_MAJORITY = 0.8
MIN_WIDE_CHARS = 2  # a lone "a\0" is as likely a number as a letter
_BOMS = (  # UTF-32-LE first: its mark starts with the UTF-16-LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"),
)
WIDE_ENCODINGS = ("utf-32-le", "utf-32-be", "utf-16-le", "utf-16-be")  # 32 first: its NULs would fail 16
_WHITESPACE = frozenset("\t\n\r\f\v")


def text_encoding(head: bytes) -> str | None:
    """The codec ``head`` reads as text in (explicit byte order), or None when it is not text."""
    declared = declared_encoding(head)
    if declared is None and b"\x00" in head:
        return next((name for name in WIDE_ENCODINGS if _reads_as(head, name, ascii_only=True)), None)
    if declared in (None, "utf-8"):
        return "utf-8" if is_utf8_text(head) else None
    return declared if _reads_as(head, declared, ascii_only=False) else None


def reading_encoding(head: bytes) -> str:
    """The codec a text reader uses: the sniffed one, else what a byte-order mark says, else UTF-8."""
    return text_encoding(head) or declared_encoding(head) or "utf-8"


def declared_encoding(head: bytes) -> str | None:
    return next((name for bom, name in _BOMS if head.startswith(bom)), None)


def decode(data: bytes, encoding: str, errors: str = "replace") -> str:
    """``data`` in ``encoding`` without its byte-order mark."""
    return data.decode(encoding, errors=errors).removeprefix("\ufeff")


def unit_size(encoding: str) -> int:
    return 4 if "32" in encoding else 2 if "16" in encoding else 1


def is_utf8_text(head: bytes) -> bool:
    """No NUL and valid UTF-8, a multi-byte character cut by the sniff window allowed."""
    return b"\x00" not in head and _strict(head, "utf-8") is not None


def _reads_as(head: bytes, encoding: str, ascii_only: bool) -> bool:
    text = _strict(head, encoding)
    if text is None or len(text) < MIN_WIDE_CHARS:
        return False
    readable = sum(1 for c in text if c in _WHITESPACE or (c.isprintable() and (c < "\x80" or not ascii_only)))
    return readable >= TEXT_MAJORITY * len(text)


def _strict(head: bytes, encoding: str) -> str | None:
    """``head`` decoded strictly; an incomplete character at the very end (a cut window) is dropped."""
    try:
        text: str = codecs.getincrementaldecoder(encoding)("strict").decode(head, final=False)
    except UnicodeDecodeError:
        return None
    return text.removeprefix("\ufeff")
