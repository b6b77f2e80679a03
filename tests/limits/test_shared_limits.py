"""A CircuitBreaker and a RateLimit given `store=` hold across worker processes (SQLite, PostgreSQL)."""

from __future__ import annotations

import asyncio
import multiprocessing

from tests.limits import limit_workers
from tests.sessions import workers

spawn = multiprocessing.get_context("spawn")


def one(target: object, *args: object) -> object:
    """Run `target(*args, out)` in a process of its own; what it put."""
    out = spawn.Queue()
    procs = [spawn.Process(target=target, args=(*args, out))]
    with workers.started(procs):
        assert workers.join_all(procs, 120) == [0]
        return out.get(timeout=5)


async def test_a_breaker_opened_by_failures_in_one_process_sends_another_to_the_fallback(
    shared_store: tuple[str, str],
) -> None:
    where, schema = shared_store
    run = limit_workers.breaker
    # two runs fail on a: its circuit opens (at 1000 on the breakers' clock)
    assert await asyncio.to_thread(one, run, where, schema, "fail", 1000.0) == (2, 0, "RetriesExhausted")
    # another process, 10 s later: a is never asked, b answers
    assert await asyncio.to_thread(one, run, where, schema, "use", 1010.0) == (0, 1, "from b")
    # after the 30 s cool-down: a is tried again, and answers
    assert await asyncio.to_thread(one, run, where, schema, "use", 1031.0) == (1, 0, "from a")


async def test_a_rate_shared_by_four_processes_is_never_exceeded(shared_store: tuple[str, str]) -> None:
    n, calls = 4, 3
    barrier, out = spawn.Barrier(n), spawn.Queue()
    procs = [
        spawn.Process(target=limit_workers.paced, args=(*shared_store, calls, barrier, out)) for _ in range(n)
    ]
    with workers.started(procs):
        assert await asyncio.to_thread(workers.join_all, procs, 120) == [0] * n
        waits = [w for _ in range(n) for w in out.get(timeout=5)]
    # 60 a minute, the clock standing still: the 12 calls took the 12 one-second places in turn,
    # whichever process made them (the first waited not at all, so recorded no wait)
    assert sorted(waits) == [float(s) for s in range(1, n * calls)]
