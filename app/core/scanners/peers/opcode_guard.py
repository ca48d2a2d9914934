"""Opcode guards: refuse streams whose opcode list would not fit in memory in the peer engines.

The peer libraries keep every pickle opcode in a list, so a hostile stream could exhaust memory
through them; hfvet counts first (each opcode takes at least one byte) and stops at the limit.
"""

from __future__ import annotations

import io
import pickletools
from typing import IO

from app.core.limits import LimitExceeded, Limits
from app.core.scanners.peers.engine_run import Opener
from app.core.scanners.peers.shared import PeerFacts

JOBLIB_WRAPPER = "NumpyArrayWrapper"


def count_pickle_ops(stream: IO[bytes], max_ops: int, max_pickles: int | None = None) -> int:
    """Opcodes in back-to-back pickles (as the engines walk them), stopping past ``max_ops``.

    Parse errors end the count: the engines report those themselves.
    """
    total, pickles = 0, 0
    while max_pickles is None or pickles < max_pickles:
        if not stream.read(1):
            break
        stream.seek(-1, io.SEEK_CUR)
        try:
            for _ in pickletools.genops(stream):
                total += 1
                if total > max_ops:
                    return total
        except Exception:  # noqa: BLE001 - a broken stream is the engines' finding, not ours
            break
        pickles += 1
    return total


_OPCODE_CODES = frozenset(op.code for op in pickletools.opcodes)


def joblib_interleaved(stream: IO[bytes]) -> bool:
    """Whether a pickle stream breaks after a joblib NumpyArrayWrapper.

    joblib writes each array's raw bytes right after its wrapper, inside the pickle stream:
    no opcode walker can step over them without sizing the array, so both peer engines
    stop there. That is their limitation, not the file's fault (hfvet's engine sizes them).
    """
    stream.seek(0)
    seen = False
    try:
        while stream.read(1):
            stream.seek(-1, io.SEEK_CUR)
            for _op, arg, _pos in pickletools.genops(stream):
                seen = seen or (isinstance(arg, str) and JOBLIB_WRAPPER in arg)
    except Exception:  # noqa: BLE001 - the break itself is what we are asking about
        return seen
    return False


def broke_right_after_stop(stream: IO[bytes], position: int) -> bool:
    """Whether a peer's parse error at ``position`` is the first byte after a complete pickle.

    picklescan reads on past STOP for stacked pickles; a byte there that is no opcode (a trailing
    newline) is where it gives up. ``pickle.load`` stops at STOP and never reads it, and a byte
    that is no opcode starts no pickle any loader would read: not the file's fault.
    """
    stream.seek(0)
    try:
        while stream.tell() < position:
            for op, _arg, _pos in pickletools.genops(stream):
                if op.name == "STOP" and stream.tell() == position:
                    return _no_opcode(stream.read(1))
    except Exception:  # noqa: BLE001 - a break before position: the error was not after a STOP
        return False
    return False


def _no_opcode(byte: bytes) -> bool:
    return len(byte) == 1 and byte.decode("latin-1") not in _OPCODE_CODES


def guard_opcodes(
    open_stream: Opener, size: int, limits: Limits, *, npy: bool = False, max_pickles: int | None = None,
    facts: PeerFacts | None = None, key: str = "",
) -> None:
    """Refuse streams whose opcode list would not fit in memory in the engines.

    Each opcode takes at least one byte, so only streams longer than the opcode limit need
    counting. ``npy``: the pickle is the payload after a .npy header (none for plain arrays).
    ``facts``: the file's shared facts; a count already there for stream ``key`` (the other
    peer's, or an engine's full walk) is used instead of walking the stream again.
    """
    if size <= limits.max_pickle_opcodes:
        return
    known = facts.known_opcodes(key) if facts is not None else None
    if known is None:
        known = _count(open_stream, limits, npy, max_pickles)
        if facts is not None:
            facts.record_opcodes(key, known)
    if known > limits.max_pickle_opcodes:
        raise LimitExceeded(f"more than {limits.max_pickle_opcodes} pickle opcodes in one stream")


def _count(open_stream: Opener, limits: Limits, npy: bool, max_pickles: int | None) -> int:
    with open_stream() as stream:
        if npy and npy_payload_offset(stream) is None:
            return 0
        return count_pickle_ops(stream, limits.max_pickle_opcodes, max_pickles)


def npy_payload_offset(stream: IO[bytes]) -> int | None:
    """Offset of the pickled payload of an object-dtype .npy, or None for plain arrays.

    Uses numpy's public header readers (literal_eval only; no data is loaded).
    """
    start = stream.tell()
    import numpy as np  # only for a .npy member

    version = np.lib.format.read_magic(stream)
    if version == (1, 0):
        _shape, _order, dtype = np.lib.format.read_array_header_1_0(stream)
    elif version in ((2, 0), (3, 0)):
        _shape, _order, dtype = np.lib.format.read_array_header_2_0(stream)
    else:
        raise ValueError(f"unsupported .npy version {version}")
    return stream.tell() - start if dtype.hasobject else None
