"""SharedReads: concurrent askers share a read, and no asker is answered by a read that began before it asked."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from app.shared_reads import SharedReads

T = TypeVar("T")


class Store:
    """A value that commits change; each read sees the value when the read starts, and may be held."""

    def __init__(self) -> None:
        self.value = 1
        self.started = threading.Event()
        self.hold = threading.Event()
        self.hold.set()
        self.keys: list[str] = []

    def read(self, key: str) -> int:
        seen = self.value
        self.keys.append(key)
        self.started.set()
        self.hold.wait(5)
        if key == "broken":
            raise ConnectionError("the server closed the connection")
        return seen


def run(scenario: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """asyncio.run on a thread of its own: whatever loop the test's own thread has (another test's) is left alone."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(scenario())).result(30)


async def until(event: threading.Event) -> None:
    await asyncio.get_running_loop().run_in_executor(None, event.wait, 5)


def test_callers_during_a_read_share_the_next_one_and_see_what_was_committed_before_they_asked() -> None:
    async def scenario() -> tuple[int, list[int], int]:
        store = Store()
        reads = SharedReads(store.read)
        store.hold.clear()
        first = asyncio.ensure_future(reads("v"))
        await until(store.started)  # the first read has seen value 1 and is held
        store.value = 2  # a commit lands after that read began
        later = [asyncio.ensure_future(reads("v")) for _ in range(7)]
        await asyncio.sleep(0.05)
        store.hold.set()
        return await first, list(await asyncio.gather(*later)), reads.reads

    first, later, count = run(scenario)
    assert first == 1
    assert later == [2] * 7  # not the read already under way when they asked
    assert count == 2


def test_different_keys_are_read_apart() -> None:
    async def scenario() -> list[int]:
        store = Store()
        reads = SharedReads(store.read)
        answers = await asyncio.gather(reads("a"), reads("b"))
        assert sorted(store.keys) == ["a", "b"]  # b did not wait for a's read, nor take its answer
        return list(answers)

    assert run(scenario) == [1, 1]


def test_an_error_reaches_every_waiter_and_the_next_ask_reads_again() -> None:
    async def scenario() -> tuple[list[BaseException | int], int, list[str]]:
        unhandled: list[str] = []
        asyncio.get_running_loop().set_exception_handler(lambda _, context: unhandled.append(context["message"]))
        store = Store()
        reads = SharedReads(store.read)
        outcomes = await asyncio.gather(*(reads("broken") for _ in range(3)), return_exceptions=True)
        store.hold.clear()
        abandoned = asyncio.ensure_future(reads("broken"))
        await until(store.started)
        abandoned.cancel()  # the only waiter gives up; the read goes on and fails unseen
        store.hold.set()
        await asyncio.sleep(0.1)
        del abandoned
        gc.collect()  # an error nobody retrieved is reported when its future is collected
        return list(outcomes), reads.reads, unhandled

    outcomes, count, unhandled = run(scenario)
    assert all(isinstance(o, ConnectionError) for o in outcomes)
    assert count == 3  # the first asker's read, the next one for the two behind it, the abandoned one
    assert unhandled == []
