"""A durable turn's overhead, and the queue's throughput:
`python -m benchmarks.durable [--turns N] [--postgres URL] [--workers W --runs R]`.

The same S2 turn (model → tool → model, scripted) on an in-memory session store: by a plain
`Runner`, then by a `DurableRunner` with DBOS's system database in a temporary SQLite file, or in
the PostgreSQL database at `--postgres` (a database of its own: DBOS writes its tables there).
Prints ms per turn, one turn after another; a durable turn writes a workflow and 5 steps.

With `--workers W --runs R` (and `--postgres`): W `adk worker` processes of
benchmarks/durable_agent.py share the database; R runs (each its own session) are enqueued
through DBOS's client, and the runs per second from the first enqueue to the last result are
printed. Its sessions are in the same database.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
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


def _fleet(url: str, workers: int, runs: int) -> float:
    """Runs per second of `workers` worker processes over `runs` queued runs."""
    from dbos import DBOSClient

    from adk.durable.runner import enqueue_options
    from adk.events import Message

    agent = Path(__file__).with_name("durable_agent.py")
    command = [sys.executable, "-m", "adk", "worker", str(agent), "--sessions", url, "--system-database", url]
    procs = [
        subprocess.Popen(
            [*command, "--executor-id", f"bench-{n}", "--concurrency", "8"],
            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(workers)
    ]
    client = DBOSClient(system_database_url=url)
    try:
        for proc in procs:  # each says it takes runs once DBOS is up
            assert proc.stderr is not None
            proc.stderr.readline()
        started = time.perf_counter()
        ids = []
        for i in range(runs):
            options = enqueue_options("bench", "u", f"q{i}", f"inv{i}")
            client.enqueue(options, "bench", "u", f"q{i}", Message.user("price?"), f"inv{i}")
            ids.append(options["workflow_id"])
        for wfid in ids:
            client.retrieve_workflow(wfid).get_result(polling_interval_sec=0.05)
        return runs / (time.perf_counter() - started)
    finally:
        client.destroy()
        for proc in procs:
            proc.kill()
            proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--postgres", help="a postgresql:// URL of a database for DBOS's tables")
    parser.add_argument("--workers", type=int, help="with --postgres: the queue's throughput with this many")
    parser.add_argument("--runs", type=int, default=1000, help="runs queued for --workers")
    args = parser.parse_args()
    if args.workers:
        rate = _fleet(args.postgres, args.workers, args.runs)
        print(f"queue: {args.runs} runs, {args.workers} workers, concurrency 8: {rate:8.1f} runs/s")
        return
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
