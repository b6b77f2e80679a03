"""A CircuitBreaker and a RateLimit given `store=` hold across worker processes (SQLite, PostgreSQL)."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import sqlite3
from typing import Any

from adk import LlmAgent, Runner
from adk.errors import ServerError
from adk.recovery import CircuitBreaker, set_testing
from adk.testing import ScriptedModel
from tests import postgres
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


async def written(where: str, schema: str, key: str) -> tuple[str, dict[str, Any]] | None:
    """`key`'s row: a token that changes whenever the row is written (PostgreSQL's `xmin`, a
    trigger's count in SQLite), and its state; None while there is no row."""
    if "://" in where:
        rows = await postgres.fetch(
            f"SELECT xmin::text AS v, used FROM {schema}.budgets WHERE scope_key = $1", key
        )
        return None if not rows else (rows[0]["v"], json.loads(rows[0]["used"]))
    with sqlite3.connect(where) as conn:
        row = conn.execute(
            "SELECT (SELECT n FROM budget_writes), used FROM budgets WHERE scope_key = ?", (key,)
        ).fetchone()
    return None if row is None else (str(row[0]), json.loads(row[1]))


def count_writes(where: str) -> None:
    """A SQLite file whose budgets table counts the writes to its rows (`written`)."""
    with sqlite3.connect(where) as conn:
        conn.executescript(
            "CREATE TABLE budgets (scope_key TEXT PRIMARY KEY, used TEXT NOT NULL) WITHOUT ROWID;"
            " CREATE TABLE budget_writes (n INTEGER); INSERT INTO budget_writes VALUES (0);"
            " CREATE TRIGGER i AFTER INSERT ON budgets BEGIN UPDATE budget_writes SET n = n + 1; END;"
            " CREATE TRIGGER u AFTER UPDATE ON budgets BEGIN UPDATE budget_writes SET n = n + 1; END;"
        )


async def test_a_stored_breaker_writes_its_circuit_only_when_it_changes(
    shared_store: tuple[str, str],
) -> None:
    # A check (is the circuit open?) and a success on a closed circuit change nothing: they read
    # the row without its lock and write nothing; a failure, and the success that clears it, write.
    where, schema = shared_store
    if "://" not in where:
        count_writes(where)
    store = limit_workers.open_shared(where, schema)
    model = ScriptedModel(["1", "2", ServerError("503"), "3", "4"], name="a")
    breaker = CircuitBreaker(failures=3, store=store, clock=lambda: 0.0)
    runner = Runner(LlmAgent("root", model=model, callbacks=[breaker]))
    rows, key = [], f"adk:breaker:{breaker.name}:a"
    try:
        with set_testing(True, attempts=1):
            for i in range(5):
                [e async for e in runner.run("u", f"s{i}", "hi")]
                rows.append(await written(where, schema, key))
    finally:
        await limit_workers.close_shared(store)
    assert len(model.requests) == 5
    assert rows[:2] == [None, None]  # two successes on a closed circuit: no row at all
    assert rows[2] is not None and rows[2][1] == {"count": 1}  # the failure, counted
    assert rows[3] is not None and rows[3][1] == {} and rows[3][0] != rows[2][0]  # cleared by a success
    assert rows[4] == rows[3]  # the next success: read, not written
