"""Session stores side by side: `python -m benchmarks.sessions [--quick]` from the repo root.

For memory, SQLite (a temporary file, WAL mode: real commits) and PostgreSQL (ADK_BENCH_POSTGRES_URL,
default the local test server; skipped if it does not answer):
- µs per `append_event`, one after another: a model answer, and a state update with a delta;
- events appended per second by one process with 1,000 sessions appending at once (S4's concurrency);
- S4: 1,000 S2 runs (model → tool → model) at once on distinct sessions, wall ms;
- the lease per run: store calls a run makes, and µs to take and release a lease.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from adk.events import Event, EventActions, LlmResponse, ObjectType, new_id
from adk.runner import Runner
from adk.sessions import InMemorySessionService, Session, SessionService
from adk.sessions.sqlite import SqliteSessionService
from benchmarks.runner import make_runner

POSTGRES = os.environ.get("ADK_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


def answer(i: int) -> Event:
    return Event.from_response("inv", "agent", LlmResponse.text(f"answer number {i} " + "lorem " * 20))


def state_update(i: int) -> Event:
    delta = {"turn": i, f"note{i % 20}": {"text": "x" * 40, "n": i}}
    return Event.new("inv", "agent", object=ObjectType.STATE_UPDATE, actions=EventActions(state_delta=delta))


async def per_append(store: SessionService, make: Callable[[int], Event], n: int, repeats: int = 5) -> float:
    """Median over `repeats` runs of the µs per append, each run on a fresh session."""
    runs = []
    for r in range(repeats):
        session = await store.get_or_create("bench", f"{make.__name__}-{r}-{new_id()[:6]}")
        events = [make(i) for i in range(n)]
        start = time.perf_counter()
        for event in events:
            await store.append_event(session, event)
        runs.append((time.perf_counter() - start) / n * 1e6)
    return statistics.median(runs)


async def appends_per_second(store: SessionService, sessions: int, each: int) -> float:
    """Events per second with `sessions` sessions appending `each` events at once."""
    tag = new_id()[:6]
    opened = await asyncio.gather(*(store.get_or_create("rate", f"{tag}-{i}") for i in range(sessions)))
    batches = [[answer(i) for i in range(each)] for _ in range(sessions)]

    async def write(session: Session, events: list[Event]) -> None:
        for event in events:
            await store.append_event(session, event)

    start = time.perf_counter()
    await asyncio.gather(*(write(s, b) for s, b in zip(opened, batches, strict=True)))
    return sessions * each / (time.perf_counter() - start)


async def s4(store: SessionService, n: int) -> float:
    """Wall ms of `n` S2 runs at once on distinct sessions."""
    runner = make_runner("S2")
    runner.session_service = store
    tag = new_id()[:6]

    async def one(i: int) -> None:
        async for _ in runner.run("u", f"s4-{tag}-{i}", "hi"):
            pass

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    return (time.perf_counter() - start) * 1e3


class Counting:
    """A store that counts the calls made to it, by name (each is one round trip for PostgreSQL)."""

    def __init__(self, store: SessionService) -> None:
        self._store = store
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._store, name)
        if not callable(value):
            return value

        async def counted(*args: Any, **kw: Any) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            return await value(*args, **kw)

        return counted


async def lease_cost(store: SessionService, n: int) -> tuple[dict[str, int], float]:
    """The store calls of one S2 run, and µs to take and release a lease (median of `n`)."""
    counting = Counting(store)
    runner: Runner = make_runner("S2")
    runner.session_service = counting  # a proxy with the same methods
    async for _ in runner.run("u", f"count-{new_id()[:6]}", "hi"):
        pass
    times = []
    for i in range(n):
        start = time.perf_counter()
        session = await store.acquire("u", f"lease-{i % 10}", new_id())
        await store.release(session)
        times.append((time.perf_counter() - start) * 1e6)
    return counting.calls, statistics.median(times)


@asynccontextmanager
async def stores(tmp: str) -> AsyncIterator[list[tuple[str, SessionService]]]:
    async with AsyncExitStack() as stack:
        sqlite = SqliteSessionService(Path(tmp) / "bench.sqlite3")
        stack.callback(sqlite.close)
        found: list[tuple[str, SessionService]] = [
            ("memory", InMemorySessionService()),
            ("sqlite file", sqlite),
        ]
        try:
            from adk.sessions.postgres import PostgresSessionService

            schema = f"adk_bench_{new_id()[:8]}"
            pg = PostgresSessionService(POSTGRES, schema=schema, max_size=10)
            await pg.get("probe", "probe")
        except (ImportError, ConnectionError) as e:
            print(f"(no PostgreSQL: {e})")
        else:

            async def drop() -> None:
                pool = await pg._connect()
                await pool.execute(f"DROP SCHEMA {schema} CASCADE")
                await pg.close()

            stack.push_async_callback(drop)
            found.append(("postgresql", pg))
        yield found


async def main(quick: bool) -> None:
    n, sessions, each, runs = (200, 200, 5, 200) if quick else (2000, 1000, 10, 1000)
    with tempfile.TemporaryDirectory() as tmp:
        async with stores(tmp) as found:
            heads = ("answer µs", "delta µs", "events/s", "S4 ms", "lease µs")
            print(f"{'store':<12}" + "".join(f"{h:>11}" for h in heads))
            for name, store in found:
                plain = await per_append(store, answer, n // 4 if name == "postgresql" else n)
                with_delta = await per_append(store, state_update, n // 4 if name == "postgresql" else n)
                rate = await appends_per_second(store, sessions, each)
                await s4(store, 50)  # warm up
                wall = await s4(store, runs)
                calls, lease = await lease_cost(store, 200)
                print(f"{name:<12}{plain:>11.1f}{with_delta:>11.1f}{rate:>11.0f}{wall:>11.0f}{lease:>11.1f}")
            print(f"store calls of one S2 run: {calls}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer iterations: a smoke test")
    asyncio.run(main(parser.parse_args().quick))
