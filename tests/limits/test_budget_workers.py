"""A user budget in PostgreSQL or SQLite is never overspent by 4 worker processes racing for it."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import sqlite3

from tests import postgres
from tests.sessions import workers

spawn = multiprocessing.get_context("spawn")


async def used(where: str, schema: str) -> dict[str, float]:
    query = "SELECT used FROM {}budgets WHERE scope_key = 'budget:user:u'"
    if "://" in where:
        [row] = await postgres.fetch(query.format(f"{schema}."))
        return dict(json.loads(row["used"]))
    with sqlite3.connect(where) as conn:
        return dict(json.loads(conn.execute(query.format("")).fetchone()[0]))


async def test_four_processes_racing_for_one_budget_make_exactly_its_model_calls(
    shared_store: tuple[str, str],
) -> None:
    n, runs = 4, 6
    barrier, made = spawn.Barrier(n), spawn.Queue()
    procs = [spawn.Process(target=workers.spend, args=(*shared_store, runs, barrier, made)) for _ in range(n)]
    for p in procs:
        p.start()
    await asyncio.to_thread(lambda: [p.join(120) for p in procs])
    assert [p.exitcode for p in procs] == [0] * n
    counts = [made.get(timeout=5) for _ in range(n)]
    assert sum(counts) == 10  # 24 runs asked; the budget allows 10 model calls, in all
    assert (await used(*shared_store))["model_calls"] == 10.0
