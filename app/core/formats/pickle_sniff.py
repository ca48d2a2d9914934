"""Is a text head a well-formed pickle stream, as far as it goes?

Text files often start with bytes that are pickle opcodes (``cat`` is GLOBAL, ``(`` MARK,
``]`` EMPTY_LIST), and ``pickletools.genops`` parses opcodes without checking that each one
finds the stack items it needs. The unpickler does check: ``cat\\ndog\\nbird`` imports ``at.dog``
and then fails at BUILD, before anything could be called. This module replays the stack
effect that pickletools declares for every opcode (as ``pickletools.dis`` does), so text
whose opcodes could never run to a call is not taken for weights (see ``looks_like_pickle``).
"""

from __future__ import annotations

import io
import pickletools
import re
from dataclasses import dataclass

_MARK = "mark"
_ITEM = "item"


class _Underflow(Exception):
    """An opcode needs stack items (or a MARK) that are not there: the unpickler fails here."""


_IMPORTS = frozenset({"GLOBAL", "INST", "STACK_GLOBAL"})
_CALLS = frozenset({"REDUCE", "INST", "OBJ", "NEWOBJ", "NEWOBJ_EX"})
# Opcodes that build or store data: a real pickle has them between its imports; a label file
# shaped like a run of imports ("class_0\nclass_1\n...") has nothing but GLOBALs.
_BUILDS = frozenset({
    "MARK", "PUT", "BINPUT", "LONG_BINPUT", "MEMOIZE", "LIST", "DICT", "TUPLE", "APPEND", "APPENDS",
    "SETITEM", "SETITEMS", "EMPTY_LIST", "EMPTY_DICT", "EMPTY_TUPLE", "EMPTY_SET", "ADDITEMS", "BUILD",
})


@dataclass(frozen=True)
class TextSniff:
    consistent: bool  # every opcode found the stack items it needs, up to a STOP or the head's end
    stopped: bool  # a STOP was reached within the head
    calls: bool  # an opcode that calls something (REDUCE, INST, OBJ, NEWOBJ...) was seen
    builds: bool = False  # an opcode that builds or stores data (MARK, PUT, LIST, APPEND...) was seen


def sniff_text(head: bytes, complete: bool) -> TextSniff:
    """Replay the stack effect of the opcodes in ``head`` (the whole head, not a few ops).

    ``complete`` says ``head`` is the whole file: a parse error then is a break. In a head
    the sniff window cut, a parse error is the cut only in the last line (a text argument
    without its newline); an error with a newline after it (``p`` PUT of a non-number) or an
    unknown opcode is a break.
    """
    stack: list[str] = []
    names: set[str] = set()
    stream = io.BytesIO(head)
    end = 0  # where the op being parsed starts
    try:
        for op, _arg, _pos in pickletools.genops(stream):
            _apply(op, stack)
            names.add(op.name)
            end = stream.tell()
            if op.name == "STOP":
                return _sniffed(True, True, names)
    except _Underflow:
        return _sniffed(False, False, names)
    except ValueError as exc:  # pickletools' parse error; an unknown opcode says so
        cut = not complete and "unknown" not in str(exc) and b"\n" not in head[end:]
        return _sniffed(cut, False, names)
    return _sniffed(True, False, names)


def _sniffed(consistent: bool, stopped: bool, names: set[str]) -> TextSniff:
    return TextSniff(consistent, stopped, calls=bool(names & _CALLS), builds=bool(names & _BUILDS))


def _apply(op: pickletools.OpcodeInfo, stack: list[str]) -> None:
    before = op.stack_before
    if op.name == "POP" and stack and stack[-1] == _MARK:
        stack.pop()  # POP on a MARK drops the mark (CPython's load_pop)
        return
    if pickletools.markobject in before:
        _pop_to_mark(stack)
        below = len(before) - 2  # the items under the mark (the dict of SETITEMS, the list of APPENDS)
    else:
        below = len(before)
    if len(stack) < below:
        raise _Underflow(f"{op.name} needs {below} stack item(s), has {len(stack)}")
    del stack[len(stack) - below:]
    stack.extend(_MARK if kind is pickletools.markobject else _ITEM for kind in op.stack_after)


def _pop_to_mark(stack: list[str]) -> None:
    if _MARK not in stack:
        raise _Underflow("no MARK on the stack")
    while stack.pop() != _MARK:
        pass


# Opcodes that make the unpickler run code: an import (find_class imports a module), a call, a
# persistent_load hook. EXT1/2/4 look a code up in copyreg's extension registry, which is empty
# unless a program fills it (CPython registers none): in a raw blob they are a break.
_ACTS = _IMPORTS | _CALLS | frozenset({"PERSID", "BINPERSID"})


def acts_before_break(head: bytes, size: int) -> bool:
    """Whether an unpickler reading a file of ``size`` bytes that starts with ``head`` would import,
    call or hook anything before its stream breaks (an opcode without the stack items it needs, an
    unknown opcode, a GLOBAL naming no importable module, an argument longer than the file) or
    stops. The head running out first counts as acting: what comes next is unknown."""
    stack: list[str] = []
    stream = io.BytesIO(head)
    end = 0
    try:
        for op, arg, _pos in pickletools.genops(stream):
            if op.name in ("GLOBAL", "INST") and not _importable(arg):
                return False  # find_class fails to import it: nothing ran
            if op.name in _ACTS:
                _apply(op, stack)  # an import or call without its arguments fails before it runs
                return True
            if op.name == "STOP":
                return False
            _apply(op, stack)
            end = stream.tell()
    except _Underflow:
        return False
    except ValueError:  # a parse error: an unknown opcode, or an argument the head or the file cut
        return size > len(head) and _cut_by_head(head, end, size)
    except Exception:  # noqa: BLE001 - pickletools' argument decoding can raise anything: a break
        return False
    return size > len(head)


_LENGTH_PREFIXED = {"X": 4, "B": 4, "T": 4, "\x8b": 4, "\x8d": 8, "\x8e": 8, "\x96": 8}
_DOTTED = re.compile(r"^[A-Za-z_][\w.]*$")
_OPCODE_BYTES = frozenset(op.code.encode("latin-1")[0] for op in pickletools.opcodes)


def _importable(arg: object) -> bool:
    if not isinstance(arg, str) or " " not in arg:
        return False
    module, name = arg.split(" ", 1)
    return bool(_DOTTED.match(module) and _DOTTED.match(name))


def _cut_by_head(head: bytes, at: int, size: int) -> bool:
    """The op at ``at`` failed to parse because the head ends inside it (not because the file does)."""
    if at >= len(head):
        return True
    if head[at] not in _OPCODE_BYTES:
        return False
    width = _LENGTH_PREFIXED.get(chr(head[at]))
    if width is None:
        return b"\n" not in head[at:]  # a text argument still waiting for its newline
    length = int.from_bytes(head[at + 1 : at + 1 + width], "little")
    return len(head) - at - 1 - width < length <= size - at - 1 - width


def imports_before_stop(head: bytes) -> bool:
    """The first pickle in ``head`` imports a global (GLOBAL, INST, STACK_GLOBAL) before its STOP
    or before the parse breaks: without one, an unpickler can build data but call nothing."""
    try:
        for op, _arg, _pos in pickletools.genops(head):
            if op.name in _IMPORTS:
                return True
            if op.name == "STOP":
                return False
    except Exception:  # noqa: BLE001, S110 - any parse error just ends the sniff
        pass
    return False
