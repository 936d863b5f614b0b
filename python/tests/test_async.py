"""`AsyncClient`: the verbs as coroutines over one long-lived child whose pipes the event loop
drives, so the loop keeps running while the child works."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Awaitable, Callable, List, Tuple

import pytest

from forgestate import AsyncClient, Client, Conflict, ResumeAnswer

W = "implementation-worker"


async def with_heartbeat(
        work: Callable[[], Awaitable[Any]]) -> Tuple[Any, float, int, float]:
    """``work``'s result, the longest gap between a heartbeat task's ticks (every 5 ms) while
    it ran, how many ticks there were, and how long the work took."""
    ticks: List[float] = []
    done = asyncio.Event()

    async def heartbeat() -> None:
        while not done.is_set():
            ticks.append(time.monotonic())
            await asyncio.sleep(0.005)
        ticks.append(time.monotonic())  # the gap up to the end of the work counts too

    beat = asyncio.create_task(heartbeat())
    await asyncio.sleep(0.02)
    start = time.monotonic()
    try:
        result = await work()
    finally:
        took = time.monotonic() - start
        done.set()
        await beat
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    return result, max(gaps), len(ticks), took


def test_fifty_concurrent_resumes_never_block_the_loop(tmp_path):
    store = tmp_path / "store"
    seed = Client.local(store)
    for i in range(5):
        seed.checkpoint(W, f"s{i}", "subtask_1_complete", {"n": i})
    seed.close()

    async def main() -> Tuple[Any, float, int, float]:
        async with AsyncClient.local(store) as c:
            return await with_heartbeat(
                lambda: asyncio.gather(*[c.resume(W, f"s{i % 5}") for i in range(50)]))

    answers, longest, ticks, took = asyncio.run(main())
    assert len(answers) == 50 and all(isinstance(a, ResumeAnswer) for a in answers)
    assert [a.data["n"] for a in answers] == [i % 5 for i in range(50)]
    assert ticks > 3, "the heartbeat ran while the resumes did"
    # A client that blocks the loop holds it for the whole batch; one that does not leaves only
    # scheduling hiccups. Compared with the batch's own time, so a loaded machine (which slows
    # both) does not fail it: timing itself belongs in the benchmarks.
    assert longest < took / 2, (
        f"the event loop was blocked for {longest * 1000:.0f} ms of the batch's "
        f"{took * 1000:.0f} ms")


def test_the_heartbeat_sees_a_blocked_loop():
    async def blocking() -> None:
        time.sleep(0.12)  # what a synchronous call on the loop does

    _, longest, _, took = asyncio.run(with_heartbeat(blocking))
    assert longest >= 0.1 and longest >= took / 2


def test_an_async_client_saves_resumes_and_raises_as_the_client_does(tmp_path):
    async def main() -> None:
        c = AsyncClient.local(tmp_path / "store")
        first = await c.checkpoint(W, "s1", "clone_complete", {"n": 1})
        second = await c.checkpoint(W, "s1", "subtask_1_complete", {"n": 2})
        assert second.record.parent == first.id  # the child keeps the lineage
        with pytest.raises(Conflict):
            await c.checkpoint(W, "s1", "p", if_latest=first.id)
        assert (await c.latest(W, "s1")).record.id == second.id
        assert (await c.flush()).left == 0  # a verb the child does not run
        await c.aclose()
        # Another event loop may use the same client: it starts a child there.
        return c

    c = asyncio.run(main())
    assert asyncio.run(c.resume(W, "s1")).phase == "subtask_1_complete"
    c.close()


def test_a_cancelled_call_does_not_hand_its_answer_to_the_next(tmp_path):
    async def main() -> None:
        c = AsyncClient.local(tmp_path / "store")
        await c.checkpoint(W, "s1", "clone_complete", {"n": 1})
        task = asyncio.create_task(c.list())
        while not (c._child is not None and c._child.broken):
            await asyncio.sleep(0)  # until the request is sent and its answer awaited
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (await c.resume(W, "s1")).phase == "clone_complete"
        await c.aclose()

    asyncio.run(main())
