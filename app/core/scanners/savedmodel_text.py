"""``saved_model.pbtxt``: the text-format SavedModel TF loads when there is no ``saved_model.pb``.

hfvet does not parse protobuf text format; it decodes every string literal (C escapes, and
adjacent literals joined as the text parser joins them: ``"Py" "Func"``) and looks for the
names of dangerous ops among them. The file is always left for review: a name match is a
floor, not a walk of the graph.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator

# A run of adjacent string literals (either quote), with whitespace or # comments between them.
_LITERAL = r'"(?:[^"\\\n]|\\.)*"|' + r"'(?:[^'\\\n]|\\.)*'"
_LITERAL_RUN = re.compile(rf"(?:{_LITERAL})(?:(?:\s|#[^\n]*)*(?:{_LITERAL}))*")
_ONE_LITERAL = re.compile(_LITERAL)


def string_values(text: str) -> Iterator[str]:
    """Every string value in the text, adjacent literals joined, escapes decoded."""
    for run in _LITERAL_RUN.finditer(text):
        parts = [_decode(m.group()[1:-1]) for m in _ONE_LITERAL.finditer(run.group())]
        yield "".join(parts)


def _decode(body: str) -> str:
    try:
        raw: bytes = codecs.escape_decode(body.encode("utf-8", "surrogateescape"))[0]
    except ValueError:
        return body  # a bad escape: the text parser would reject the file; keep the raw text
    return raw.decode("utf-8", "replace")
