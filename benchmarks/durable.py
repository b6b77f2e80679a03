"""A durable turn's overhead: `python -m benchmarks.durable [--turns N] [--postgres URL]`.

The same S2 turn (model → tool → model, scripted) on an in-memory session store: by a plain
`Runner`, then by a `DurableRunner` with DBOS's system database in a temporary SQLite file, or in
the PostgreSQL database at `--postgres` (a database of its own: DBOS writes its tables there).
Prints ms per turn, one turn after another; a durable turn writes a workflow and 5 steps.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from adk import LlmAgent, Runner
from adk.agents.base import BaseAgent
from adk.durable import DurableRunner, launch, shutdown
from adk.sessions.memory import InMemorySessionService
from adk.testing import ScriptedModel, call_tool


def price(item: str) -> float:
    """The price of an item.

    Args:
        item: its name.
    """
    return 4.2


def _agent(turns: int) -> BaseAgent:
    script = [call_tool("price", item="widget", call_id="c1"), "4.20 €"] * turns
    return LlmAgent("bench", model=ScriptedModel(script), tools=[price])


async def _plain(turns: int) -> float:
    runner = Runner(_agent(turns))
    started = time.perf_counter()
    for i in range(turns):
        [e async for e in runner.run("u", f"s{i}", "price?")]
    return (time.perf_counter() - started) * 1000 / turns


async def _durable(turns: int, system_database: str) -> float:
    runner = DurableRunner(_agent(turns), session_service=InMemorySessionService(), name="bench")
    await launch(system_database, runners=[runner], executor_id="bench")
    try:
        started = time.perf_counter()
        for i in range(turns):
            [e async for e in runner.run("u", f"s{i}", "price?")]
        return (time.perf_counter() - started) * 1000 / turns
    finally:
        shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--postgres", help="a postgresql:// URL of a database for DBOS's tables")
    args = parser.parse_args()
    plain = asyncio.run(_plain(args.turns))
    print(f"plain turn:            {plain:8.3f} ms")
    with tempfile.TemporaryDirectory() as folder:
        sqlite = asyncio.run(_durable(args.turns, f"sqlite:///{Path(folder) / 'dbos.sqlite'}"))
    print(f"durable turn (SQLite): {sqlite:8.3f} ms")
    if args.postgres:
        postgres = asyncio.run(_durable(args.turns, args.postgres))
        print(f"durable turn (PostgreSQL): {postgres:8.3f} ms")


if __name__ == "__main__":
    main()
