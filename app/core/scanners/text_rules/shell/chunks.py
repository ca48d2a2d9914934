"""A script cut into runs of whole statements, each parsed on its own.

tree-sitter-bash's error recovery costs time quadratic in the length of text that is not shell (2,000
lines of a prompt template's `<|patch|>` take seconds, 20,000 minutes); valid shell parses in linear
time. Parsing at most ``CHUNK_LINES`` lines at a time keeps either linear, and cutting only where a
statement ends (outside quotes, here-documents, brackets and compound commands, after no `\\`, `|`, `&&`)
keeps every statement whole. The cut depends on the text alone: the same bytes, the same chunks.
"""

from __future__ import annotations

import re

CHUNK_LINES = 20  # a cut is made at the first statement end after this many lines
MAX_CHUNK_LINES = 400  # and at this many lines whatever the lexer thinks (text it cannot follow)
_OPENERS = {"if": 1, "case": 1, "do": 1, "{": 1, "fi": -1, "esac": -1, "done": -1, "}": -1}
_WORD = re.compile(r"(?<![\w$-])(if|fi|case|esac|do|done|\{|\})(?![\w-])")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_]\w*)\1")
_CONTINUES = re.compile(r"(?:\\|\||&&|\|\||\(|\bthen|\belse|\bdo|\bin|\{)\s*$")


def chunks(script: str) -> list[tuple[int, str]]:
    """(first row, text) of each run of whole statements."""
    lines = script.split("\n")
    out: list[tuple[int, str]] = []
    state = _Lexer()
    start = 0
    for row, line in enumerate(lines):
        state.feed(line)
        taken = row + 1 - start
        if (taken >= CHUNK_LINES and state.at_statement_end()) or taken >= MAX_CHUNK_LINES:
            out.append((start, "\n".join(lines[start:row + 1])))
            start = row + 1
            state = _Lexer()
    if start < len(lines):
        out.append((start, "\n".join(lines[start:])))
    return out


class _Lexer:
    """Just enough of bash's lexing to know whether a line ends a top-level statement."""

    def __init__(self) -> None:
        self.quote: str | None = None  # an open ' or " carried to the next line
        self.heredoc: str | None = None  # the delimiter of an open here-document
        self.depth = 0  # open compound commands, braces and parentheses
        self.continued = False

    def feed(self, line: str) -> None:
        if self.heredoc is not None:
            if line.strip() == self.heredoc:
                self.heredoc = None
            return
        code = self._unquoted(line)
        self.depth += sum(_OPENERS[w] for w in _WORD.findall(code)) + code.count("(") - code.count(")")
        opened = _HEREDOC.search(line)  # the raw line: a quoted delimiter (`<<'EOF'`) is unquoted text
        if opened:
            self.heredoc = opened.group(2)
        self.continued = bool(_CONTINUES.search(code))

    def _unquoted(self, line: str) -> str:
        """The line without quoted text or a comment; an unclosed quote stays open for the next line."""
        kept = []
        i = 0
        while i < len(line):
            ch = line[i]
            if self.quote:
                if ch == "\\" and self.quote == '"':
                    i += 1
                elif ch == self.quote:
                    self.quote = None
            elif ch in "'\"":
                self.quote = ch
            elif ch == "\\":
                kept.append(line[i:i + 2])
                i += 1
            elif ch == "#" and (i == 0 or line[i - 1].isspace()):
                break
            else:
                kept.append(ch)
            i += 1
        return "".join(kept)

    def at_statement_end(self) -> bool:
        return self.quote is None and self.heredoc is None and self.depth <= 0 and not self.continued
