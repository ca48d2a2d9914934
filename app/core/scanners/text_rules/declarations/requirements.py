"""pip's requirements-file syntax (``requirements*.txt``, ``*.in``, ``constraints*.txt``, ``*.pip``),
read as pip/_internal/req/req_file.py reads it:

- ``join_lines``: a line ending in a backslash joins the next (the backslash removed, no space
  added), unless the line is a comment; the joined line keeps its first line's number;
- ``ignore_comments``: ``#`` at the start or after whitespace starts a comment (``pkg#egg=x`` is no comment);
- ``break_args_options``: words up to the first one starting with ``-`` are the requirement, the rest
  options, split with shlex and parsed by optparse, which accepts any unambiguous prefix of a long
  option (``--extra`` is ``--extra-index-url``, ``--ind`` is ``--index-url``) and values attached
  to a short option (``-ihttps://...``) or after ``=``.

Index options are recorded on requirement lines too, where pip ignores them: uv and older tools
read the same files with other parsers, and a source written down is a source someone may use.
``${VAR}`` references (pip expands them from the environment) are kept as written.
"""

from __future__ import annotations

import re
import shlex

from app.core.scanners.text_rules.declarations.common import MAX_LINE_TEXT, Reading, at, is_url, requirement
from app.core.scanners.text_rules.declared import Declared

VIA = "requirements file"
_COMMENT = re.compile(r"(^|\s+)#.*$")
# Long options of pip's requirements-file parser (SUPPORTED_OPTIONS + SUPPORTED_OPTIONS_REQ),
# value-taking ones mapped to what the value is; flags map to None.
_LONG: dict[str, str | None] = {
    "--index-url": "index", "--extra-index-url": "extra-index", "--find-links": "find-links",
    "--trusted-host": "trusted-host", "--requirement": "include", "--constraint": "include",
    "--editable": "editable", "--no-binary": "value", "--only-binary": "value", "--use-feature": "value",
    "--global-option": "value", "--hash": "value", "--config-settings": "value",
    "--no-index": None, "--prefer-binary": None, "--require-hashes": None, "--pre": None,
}
_SHORT = {"-i": "--index-url", "-f": "--find-links", "-r": "--requirement", "-c": "--constraint",
          "-e": "--editable", "-C": "--config-settings"}


def read(text: str, via: str = VIA) -> Reading:
    found = Reading()
    for number, line in logical_lines(text):
        if found.full:
            break
        read_line(line, at(number), via, found)
    return found


def logical_lines(text: str) -> list[tuple[int, str]]:
    """pip's join_lines then ignore_comments: (first line number, line) of each non-empty line."""
    joined: list[tuple[int, str]] = []
    pending: list[str] = []
    first = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        comment = bool(_COMMENT.match(raw))
        if raw.endswith("\\") and not comment:
            first = first if pending else number
            pending.append(raw.strip("\\"))
            continue
        if pending:
            joined.append((first, "".join(pending) + (" " + raw if comment else raw)))
            pending = []
        else:
            joined.append((number, raw))
    if pending:
        joined.append((first, "".join(pending)))
    lines = [(n, _COMMENT.sub("", line).strip()) for n, line in joined]
    return [(n, line) for n, line in lines if line]


def read_line(line: str, where: str, via: str, found: Reading) -> None:
    """One logical requirements line (also an entry of a conda file's ``pip:`` list)."""
    text = line[:MAX_LINE_TEXT]
    args, options = _split(line)
    if args:
        found.add(requirement(args, where, text, via))
    for option, value in _options(options):
        found.add(_option(option, value, where, text, via))


def indexes_of_line(line: str) -> list[str]:
    """The index, find-links and trusted-host values one requirements line sets (for line checks)."""
    found = Reading()
    read_line(line, "", VIA, found)
    return [d.value for d in found if d.kind == "index"]


def _split(line: str) -> tuple[str, list[str]]:
    tokens = line.split(" ")
    index = next((i for i, t in enumerate(tokens) if t.startswith("-")), len(tokens))
    rest = " ".join(tokens[index:])
    try:
        options = shlex.split(rest)
    except ValueError:  # pip gives up on the line; its words are still what the author wrote
        options = rest.split()
    return " ".join(tokens[:index]).strip(), options


def _options(words: list[str]) -> list[tuple[str, str]]:
    """(long option, value) of each value-taking option, optparse's way."""
    pairs: list[tuple[str, str]] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        option, value = _option_word(word)
        if option is None or _LONG.get(option) is None:
            continue
        if value is None and index < len(words):
            value, index = words[index], index + 1
        if value is not None:
            pairs.append((option, value))
    return pairs


def _option_word(word: str) -> tuple[str | None, str | None]:
    if word.startswith("--"):
        name, eq, value = word.partition("=")
        return _abbreviation(name), (value if eq else None)
    if word.startswith("-") and len(word) >= 2:
        option = _SHORT.get(word[:2])
        return option, (word[2:] or None) if option else None
    return None, None


def _abbreviation(name: str) -> str | None:
    """optparse's _match_abbrev: the exact option, else the only one the prefix starts."""
    if name in _LONG:
        return name
    matches = [option for option in _LONG if option.startswith(name)]
    return matches[0] if len(matches) == 1 else None


def _option(option: str, value: str, where: str, text: str, via: str) -> Declared | None:
    role = _LONG[option]
    if role in ("index", "extra-index", "find-links", "trusted-host"):
        return Declared("index", value, where, text, f"{via} {option}", extra=role in ("extra-index", "find-links"))
    if role == "editable":
        return requirement(value, where, text, f"{via} {option}")
    if role == "include" and is_url(value):  # pip fetches a requirements file named by URL
        return Declared("url", value, where, text, f"{via} {option}")
    return None  # local includes are read as files of their own; other options name no source
