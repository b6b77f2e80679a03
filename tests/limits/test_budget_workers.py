"""A user budget in PostgreSQL or SQLite is never overspent by 4 worker processes racing for it;
a reservation made once (a tool call) is made once in every store."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adk.sessions import InMemorySessionService
from adk.sessions.budgets import BudgetStore
from adk.sessions.sqlite import SqliteSessionService
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
    with workers.started(procs):
        assert await asyncio.to_thread(workers.join_all, procs, 120) == [0] * n
        counts = [made.get(timeout=5) for _ in range(n)]
    assert sum(counts) == 10  # 24 runs asked; the budget allows 10 model calls, in all
    assert (await used(*shared_store))["model_calls"] == 10.0


async def test_stores_making_the_budget_table_at_once_all_succeed() -> None:
    # CREATE TABLE IF NOT EXISTS races itself in PostgreSQL (a unique violation in pg_type): a
    # worker that lost it failed its first budget read, and CI's race above with it.
    postgres.require()
    from adk.sessions.postgres import PostgresSessionService

    async with postgres.fresh_schema() as schema:
        for _ in range(3):
            stores = [
                PostgresSessionService(postgres.URL, schema=schema, min_size=1, max_size=1) for _ in range(8)
            ]
            try:
                await asyncio.gather(*(s._connect() for s in stores))  # connected: the race is the DDL
                await postgres.execute(f"DROP SCHEMA {schema} CASCADE")
                assert await asyncio.gather(*(s.budget_used("k") for s in stores)) == [{}] * 8
            finally:
                await asyncio.gather(*(s.close() for s in stores))


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def budget_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[BudgetStore]:
    if request.param == "memory":
        yield InMemorySessionService()
    elif request.param == "sqlite":
        store = SqliteSessionService(tmp_path / "budgets.sqlite3")
        yield store
        store.close()
    else:
        postgres.require()
        from adk.sessions.postgres import PostgresSessionService

        async with postgres.fresh_schema() as schema:
            pg = PostgresSessionService(postgres.URL, schema=schema, min_size=1, max_size=1)
            yield pg
            await pg.close()


async def test_a_reservation_made_once_is_not_made_again_and_a_refused_one_is_not_kept(
    budget_store: BudgetStore,
) -> None:
    cap, two, three = {"tool:pay": 1.0}, {"tool:pay": 2.0}, {"tool:pay": 3.0}
    answers = [
        await budget_store.reserve_budget("k", cap, two, once="c1"),
        await budget_store.reserve_budget("k", cap, two, once="c1"),  # a resumed run's call again
        await budget_store.reserve_budget("k", cap, two, once="c2"),
        await budget_store.reserve_budget("k", cap, two, once="c3"),  # over the cap: refused
        await budget_store.reserve_budget("k", cap, three, once="c3"),  # not kept as made: made now
        await budget_store.reserve_budget("other", cap, two, once="c1"),  # another scope's own
    ]
    assert answers == [None, None, None, "tool:pay", None, None]
    assert (await budget_store.budget_used("k"), await budget_store.budget_used("other")) == (
        {"tool:pay": 3.0},
        {"tool:pay": 1.0},
    )
