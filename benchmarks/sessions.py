"""µs per `append_event` for each session store: `python -m benchmarks.sessions [events]` from the repo root.

Two kinds of event: a model answer without a state delta, and a state update carrying one.
The SQLite store writes to a temporary file (WAL mode), so the figures include real commits.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from adk.events import Event, EventActions, LlmResponse, ObjectType
from adk.sessions import InMemorySessionService, SessionService
from adk.sessions.sqlite import SqliteSessionService


def answer(i: int) -> Event:
    return Event.from_response("inv", "agent", LlmResponse.text(f"answer number {i} " + "lorem " * 20))


def state_update(i: int) -> Event:
    delta = {"turn": i, f"note{i % 20}": {"text": "x" * 40, "n": i}}
    return Event.new("inv", "agent", object=ObjectType.STATE_UPDATE, actions=EventActions(state_delta=delta))


async def per_append(store: SessionService, make: Callable[[int], Event], n: int, repeats: int = 5) -> float:
    """Median over `repeats` runs of the µs per append, each run on a fresh session."""
    runs = []
    for r in range(repeats):
        session = await store.get_or_create("bench", f"{make.__name__}-{r}")
        events = [make(i) for i in range(n)]
        start = time.perf_counter()
        for event in events:
            await store.append_event(session, event)
        runs.append((time.perf_counter() - start) / n * 1e6)
    return statistics.median(runs)


async def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        stores: list[tuple[str, SessionService]] = [
            ("memory", InMemorySessionService()),
            ("sqlite :memory:", SqliteSessionService(":memory:")),
            ("sqlite file", SqliteSessionService(Path(tmp) / "bench.sqlite3")),
        ]
        print(f"µs per append_event, median of 5 runs of {n} events")
        print(f"{'store':<16} {'answer':>8} {'state update':>13}")
        for name, store in stores:
            plain = await per_append(store, answer, n)
            with_delta = await per_append(store, state_update, n)
            print(f"{name:<16} {plain:>8.1f} {with_delta:>13.1f}")
            if isinstance(store, SqliteSessionService):
                store.close()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
