"""GateCache stays within its bounds in entries and in bytes, keeping the most recently used answers.

Each approved answer carries its commit's manifest: bounded by count alone, a cache of 4,096 answers for
distinct vetted commits held ~77 KiB each for 200-file repos (bench/gate_cache_memory.py), so the API
grew with every commit vetted and gated.
"""

from __future__ import annotations

from app.core.gate import NotVetted
from app.services.gating import GateCache, GateResult, cache_key
from tests.integration.api.stored import policy

DEFAULT = policy("default")
VERSION = (1, 0)


def _answer(n: int, padding: int = 0) -> GateResult:
    return GateResult(f"nvidia/model-{n}{'x' * padding}", f"{n:040x}", NotVetted(f"{n:040x}"), DEFAULT, [])


def _put(cache: GateCache, result: GateResult) -> tuple[str, str, str]:
    key = cache_key(result.repo, result.requested or "", DEFAULT)
    cache.put(key, VERSION, result)
    return key


def test_the_bytes_kept_stay_under_the_bound_after_many_answers() -> None:
    one = len(_answer(0, padding=100).body)
    cache = GateCache(size=4096, max_bytes=20 * one)
    keys = [_put(cache, _answer(n, padding=100)) for n in range(1000)]
    assert cache.bytes <= 20 * one and 15 <= len(cache) <= 20
    assert cache.get(keys[-1], VERSION) is not None and cache.get(keys[0], VERSION) is None
    assert cache.bytes == sum(len(r.body) for k in keys if (r := cache.get(k, VERSION)) is not None)


def test_the_entries_stay_under_the_count_bound() -> None:
    cache = GateCache(size=10)
    for n in range(100):
        _put(cache, _answer(n))
    assert len(cache) == 10


def test_a_recently_used_answer_outlives_older_ones_and_a_replaced_one_is_counted_once() -> None:
    one = len(_answer(0).body)
    cache = GateCache(max_bytes=3 * one + 2)
    first = _put(cache, _answer(0))
    _put(cache, _answer(1))
    _put(cache, _answer(0))  # the same key again: replaced, not counted twice
    assert len(cache) == 2 and cache.bytes == len(_answer(0).body) + len(_answer(1).body)
    assert cache.get(first, VERSION) is not None  # used: now the most recent
    _put(cache, _answer(2))
    _put(cache, _answer(3))
    assert cache.get(first, VERSION) is not None and cache.get(cache_key("nvidia/model-1", f"{1:040x}", DEFAULT),
                                                              VERSION) is None


def test_an_answer_bigger_than_the_byte_bound_is_not_kept() -> None:
    cache = GateCache(max_bytes=100)
    key = _put(cache, _answer(0, padding=500))
    assert cache.get(key, VERSION) is None and len(cache) == 0 and cache.bytes == 0
