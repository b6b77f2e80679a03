"""The cost of a turn in a long session: `python -m benchmarks.long_session [--quick]` from the repo root.

A turn (user message → model answer, S1's shape) in a fresh session against one in a session of
10,000 events with a compaction near its end (issue 26: no more in the long one). Both run the same
`TURNS` turns one after another, so their histories grow alike; the long one's history starts at
its compaction (its summary and the two turns kept). Prints median CPU µs per turn for:

- memory: `InMemorySessionService`, one runner;
- sqlite: `SqliteSessionService` (a temporary file), one runner, after one turn on each session:
  the session it took last time, with the events stored since (the store's own refresh);
- sqlite, new worker each turn: a new store object and runner for every turn, as when each turn
  lands on another worker (or the first turn after a restart): the session is read from the file,
  from its horizon on (see docs/context.md, "What a long session costs");
- sqlite, AG-UI, new worker each turn: the same, each turn a request to the AG-UI endpoint of
  a new store and runner (in process, through httpx's ASGI transport): the endpoint's own reads
  of the thread (its checks, the state snapshot) start at the horizon too;
- postgres, new worker each turn (with `--postgres URL`): the same on PostgreSQL, in a schema of
  its own, dropped after.

Instruction counts of the memory case: `python -m benchmarks.instructions L0 L10k`.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import secrets
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from adk import LlmAgent, Runner
from adk.compaction import Compact
from adk.sessions import InMemorySessionService, SessionService, SqliteSessionService
from benchmarks.runner import InstantModel

EVENTS = 10_000
TURNS = 50
"""Turns measured on each session."""


def agent(compact: bool = False) -> LlmAgent:
    """S1's agent; with `compact`, a `Compact` that folds all but the last two turns (no summary model)."""
    callbacks = [Compact(keep_last=2, threshold_tokens=1)] if compact else []
    return LlmAgent("bench", model=InstantModel(use_tool=False), callbacks=callbacks)


async def turn(runner: Runner, session_id: str, text: str = "hi") -> None:
    async for _ in runner.run("u", session_id, text):
        pass


async def prefill(store: SessionService, session_id: str, events: int = EVENTS) -> None:
    """Turns of three events each (the user's, the answer, the run's end) up to `events`, the last
    of them folded by a `Compact`, whose `compaction` event is stored with them."""
    runner = Runner(agent(), session_service=store)
    for i in range(events // 3 - 1):
        await turn(runner, session_id, f"question {i}")
    await turn(Runner(agent(compact=True), session_service=store), session_id, "the last question")


async def memory_runner(events: int) -> Runner:
    """A runner on a memory store whose session `long` has `events` events (none: a fresh one)."""
    store = InMemorySessionService()
    if events:
        await prefill(store, "long", events)
    return Runner(agent(), session_service=store)


async def turns_us(make: Callable[[], Runner], session_id: str, turns: int) -> float:
    """CPU µs per turn over `turns` turns on `session_id`, each by the runner `make` gives."""
    gc.collect()
    start = time.process_time()
    for _ in range(turns):
        await turn(make(), session_id)
    return (time.process_time() - start) / turns * 1e6


async def memory(rounds: int, turns: int) -> tuple[float, float]:
    fresh, long = [], []
    for r in range(rounds):
        store = InMemorySessionService()
        await prefill(store, f"long-{r}")
        runner = Runner(agent(), session_service=store)
        fresh.append(await turns_us(lambda runner=runner: runner, f"fresh-{r}", turns))
        long.append(await turns_us(lambda runner=runner: runner, f"long-{r}", turns))
    return statistics.median(fresh), statistics.median(long)


async def sqlite(rounds: int, turns: int, directory: Path, new_worker: bool) -> tuple[float, float]:
    fresh, long = [], []
    for r in range(rounds):
        path = directory / f"{new_worker}-{r}.sqlite3"
        await prefill(SqliteSessionService(path), "long")
        kept = Runner(agent(), session_service=SqliteSessionService(path))
        make: Callable[[], Runner] = (
            (lambda path=path: Runner(agent(), session_service=SqliteSessionService(path)))
            if new_worker
            else (lambda kept=kept: kept)
        )
        if not new_worker:  # the runner's first read of each session is the other row's cost
            await turn(make(), "fresh")
            await turn(make(), "long")
        fresh.append(await turns_us(make, "fresh", turns))
        long.append(await turns_us(make, "long", turns))
    return statistics.median(fresh), statistics.median(long)


async def agui_turn(path: Path, session_id: str) -> None:
    """One turn through the AG-UI endpoint of a new store and runner on the SQLite file at `path`."""
    import httpx

    from adk.agui import create_app

    store = SqliteSessionService(path)
    app = create_app(Runner(agent(), session_service=store), identity=lambda request: "u")
    body = {
        "threadId": session_id,
        "runId": secrets.token_hex(8),
        "messages": [{"id": "m", "role": "user", "content": "hi"}],
    }
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
        response = await c.post("/", json=body)
    assert response.status_code == 200 and "RUN_FINISHED" in response.text, response.text[-300:]
    store.close()


async def agui(rounds: int, turns: int, directory: Path) -> tuple[float, float]:
    fresh, long = [], []
    for r in range(rounds):
        path = directory / f"agui-{r}.sqlite3"
        await prefill(SqliteSessionService(path), "long")
        await agui_turn(path, "warm-up")  # the AG-UI modules load before the first measured turn
        for session_id, results in (("fresh", fresh), ("long", long)):
            gc.collect()
            start = time.process_time()
            for _ in range(turns):
                await agui_turn(path, session_id)
            results.append((time.process_time() - start) / turns * 1e6)
    return statistics.median(fresh), statistics.median(long)


async def postgres(rounds: int, turns: int, url: str) -> tuple[float, float]:
    """A new store (its own connection, closed after its turn) and runner for every turn, on
    PostgreSQL at `url`."""
    import asyncpg

    from adk.sessions.postgres import PostgresSessionService

    schema = f"bench_long_{secrets.token_hex(4)}"

    async def worker_turns(session_id: str) -> float:
        gc.collect()
        start = time.process_time()
        for _ in range(turns):
            async with PostgresSessionService(url, schema=schema, max_size=1) as store:
                await turn(Runner(agent(), session_service=store), session_id)
        return (time.process_time() - start) / turns * 1e6

    fresh, long = [], []
    try:
        for r in range(rounds):
            async with PostgresSessionService(url, schema=schema, max_size=1) as store:
                await prefill(store, f"long-{r}")
            fresh.append(await worker_turns(f"fresh-{r}"))
            long.append(await worker_turns(f"long-{r}"))
    finally:
        conn = await asyncpg.connect(url)
        await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        await conn.close()
    return statistics.median(fresh), statistics.median(long)


async def main(quick: bool, url: str | None) -> None:
    rounds, turns = (1, 10) if quick else (3, TURNS)
    print(f"CPU µs per turn, {turns} turns a session, median of {rounds} round(s)")
    print(f"{'store':<40}{'fresh':>10}{f'{EVENTS:,} events':>16}")
    results = {"memory": await memory(rounds, turns)}
    with tempfile.TemporaryDirectory() as directory:
        results["sqlite"] = await sqlite(rounds, turns, Path(directory), False)
        results["sqlite, new worker each turn"] = await sqlite(rounds, turns, Path(directory), True)
        results["sqlite, AG-UI, new worker each turn"] = await agui(rounds, turns, Path(directory))
    if url:
        results["postgres, new worker each turn"] = await postgres(rounds, turns, url)
    for name, (fresh, long) in results.items():
        print(f"{name:<40}{fresh:>10,.0f}{long:>16,.0f}   ({long / fresh:.2f}x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="one round of 10 turns (a smoke run)")
    parser.add_argument("--postgres", metavar="URL", help="also PostgreSQL at URL, a new worker each turn")
    args = parser.parse_args()
    asyncio.run(main(args.quick, args.postgres))
