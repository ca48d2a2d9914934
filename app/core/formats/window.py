"""Reads a blob through one held window, so a structure walk moves kilobytes, not the file.

Model files (ONNX, TFLite, CoreML) keep their structure and their weights in one file; a walk
reads the structure and jumps over the weights. A read inside the window is free; one just past
it (a dense walk going on) fetches a window twice as large, up to ``MOST``; one anywhere else (the
walk jumped over a tensor) fetches a small window again, so skipping ten thousand tensors costs
ten thousand small reads, never ten thousand megabytes. A file under ``WHOLE_BELOW`` is one read.
"""

from __future__ import annotations

from app.core.ports import Blob

FIRST = 4096
MOST = 1024 * 1024
# A file this small is read in one request: over the Hub, one Range request costs more than the
# bytes a walk would skip (a 100 MB model of 300 inline tensors would otherwise take 300 requests).
WHOLE_BELOW = 8 * 1024 * 1024


class ByteWindow:
    def __init__(self, blob: Blob, first: int = FIRST, most: int = MOST, whole_below: int = WHOLE_BELOW) -> None:
        self.blob = blob
        self.size = blob.size
        if self.size <= whole_below:
            first = most = max(first, self.size)
        self._first, self._most = first, most
        self.start, self.data = 0, b""  # the held window: read-only to callers (a fast path)
        self._next = first

    def view(self, offset: int, length: int) -> memoryview:
        """``length`` bytes at ``offset`` (fewer only at the end of the blob)."""
        end = min(offset + length, self.size)
        if offset < self.start or end > self.start + len(self.data):
            self._fetch(offset, end - offset)
        at = offset - self.start
        return memoryview(self.data)[at : at + end - offset]

    def _fetch(self, offset: int, length: int) -> None:
        dense = self.start <= offset <= self.start + len(self.data)  # the walk goes on past the window
        self._next = min(self._most, self._next * 2) if dense else self._first
        want = max(length, self._next)
        self.start, self.data = offset, self.blob.read(offset, want)
