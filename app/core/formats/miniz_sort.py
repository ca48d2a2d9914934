"""The order PyTorch's miniz looks names up in: a heap sort of the ASCII-lowercased names
(``mz_zip_reader_sort_central_dir_offsets_by_filename``), reproduced step by step when names tie."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Lookup:
    lowered: list[bytes]
    unique: dict[bytes, int]
    order: list[int]  # miniz's sorted order; only needed, so only built, when names tie

    @property
    def ties(self) -> bool:
        return len(self.unique) != len(self.lowered)

    @staticmethod
    def of(lowered: list[bytes]) -> Lookup:
        unique = {key: i for i, key in enumerate(lowered)}
        return Lookup(lowered, unique, sorted_order(lowered) if len(unique) != len(lowered) else [])


def sorted_order(keys: list[bytes]) -> list[int]:
    """The index order miniz's heap sort leaves (``mz_zip_reader_sort_central_dir_offsets_by_filename``).

    Comparing lowercased names as bytes is miniz's ``mz_zip_reader_filename_less`` (a common prefix
    orders the shorter first). Without ties every sort gives the same order, so Python's is used;
    with ties the heap sort is replayed, because it decides which equal name comes first.
    """
    if len(set(keys)) == len(keys):
        return sorted(range(len(keys)), key=keys.__getitem__)
    return _heap_sort(keys)


def _heap_sort(keys: list[bytes]) -> list[int]:
    indices = list(range(len(keys)))
    size = len(indices)
    if size <= 1:
        return indices
    for start in range((size - 2) >> 1, -1, -1):
        _sift_down(keys, indices, start, size)
    for end in range(size - 1, 0, -1):
        indices[end], indices[0] = indices[0], indices[end]
        _sift_down(keys, indices, 0, end)
    return indices


def _sift_down(keys: list[bytes], indices: list[int], root: int, end: int) -> None:
    while True:
        child = (root << 1) + 1
        if child >= end:
            return
        if child + 1 < end and keys[indices[child]] < keys[indices[child + 1]]:
            child += 1
        if not keys[indices[root]] < keys[indices[child]]:
            return
        indices[root], indices[child] = indices[child], indices[root]
        root = child
