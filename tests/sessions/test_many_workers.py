"""Many worker processes on one store: the lease race, a holder killed, and the SIGKILL soak."""

from __future__ import annotations

import asyncio
import multiprocessing
import random
import time
from typing import Any

import pytest

from adk.agents import LlmAgent
from adk.errors import SessionBusyError
from adk.runner import Runner
from adk.testing import ScriptedModel
from tests import postgres
from tests._runtime import Tool, summary
from tests.sessions import workers

spawn = multiprocessing.get_context("spawn")


async def test_of_8_processes_racing_for_a_session_exactly_one_wins_each_round(
    shared_store: tuple[str, str],
) -> None:
    rounds, n = 100, 8
    barrier, wins = spawn.Barrier(n), spawn.Queue()
    procs = [
        spawn.Process(target=workers.race, args=(*shared_store, rounds, barrier, wins)) for _ in range(n)
    ]
    with workers.started(procs):
        assert await asyncio.to_thread(workers.join_all, procs, 120) == [0] * n
    winners: dict[int, list[str]] = {}
    while not wins.empty():
        r, who = wins.get()
        winners.setdefault(r, []).append(who)
    assert sorted(winners) == list(range(rounds))
    assert all(len(w) == 1 for w in winners.values()), {r: w for r, w in winners.items() if len(w) > 1}
    assert len({w[0] for w in winners.values()}) > 1  # a real race: more than one process won rounds


async def test_a_killed_holder_keeps_the_session_until_its_lease_expires_then_another_finishes_it(
    shared_store: tuple[str, str],
) -> None:
    ttl = 0.5  # the only real wait: the dead holder's lease running out
    holding = spawn.Event()
    holder = spawn.Process(target=workers.hold, args=(*shared_store, ttl, holding), daemon=True)
    holder.start()
    try:
        assert await asyncio.to_thread(holding.wait, 60)
        store = workers.open_store(*shared_store, ttl)
        model = ScriptedModel(["an answer"])
        runner = Runner(LlmAgent("root", model=model, tools=[Tool("block")]), session_service=store)
        with pytest.raises(SessionBusyError, match="session 's' of user 'u' is already running"):
            await anext(runner.run("u", "s", "me too"))
        await asyncio.sleep(ttl)  # alive, the holder renews its lease
        with pytest.raises(SessionBusyError):
            await anext(runner.resume("u", "s"))
    finally:
        holder.kill()
        holder.join()

    start = time.monotonic()
    while True:
        try:
            events = [e async for e in runner.resume("u", "s")]
            break
        except SessionBusyError:
            assert time.monotonic() - start < 10 * ttl
            await asyncio.sleep(ttl / 5)
    assert time.monotonic() - start < 3 * ttl
    interrupted = events[0].content
    assert interrupted.startswith("Error: the call to tool 'block' was interrupted")
    assert [summary(e) for e in events] == [
        ("tool", "root", "block", "c1", interrupted),
        ("model", "root", "an answer"),
        ("done", "root"),
    ]
    session = await store.get("u", "s")
    assert session is not None
    assert [e.object for e in session.events] == [
        "chat.completion",
        "chat.completion",
        "tool.response",
        "chat.completion",
        "runner.completion",
    ]
    assert len({e.invocation_id for e in session.events}) == 1
    close = getattr(store, "close", None)
    if close is not None and asyncio.iscoroutinefunction(close):
        await close()
    elif close is not None:
        close()


async def test_four_workers_killed_five_times_leave_every_session_exact() -> None:
    postgres.require()
    import asyncpg

    n_workers, per_worker, kills, ttl = 4, 250, 5, 1.0
    async with postgres.fresh_schema() as schema:
        conn = await asyncpg.connect(postgres.URL)
        try:
            await conn.execute(f"CREATE SCHEMA {schema}")
            await conn.execute(f"CREATE TABLE {schema}.effects (call_id text PRIMARY KEY, n int NOT NULL)")
            await conn.execute(f"CREATE TABLE {schema}.running (session text PRIMARY KEY, pid int NOT NULL)")
            await conn.execute(f"CREATE TABLE {schema}.violations (session text, pid int, other int)")

            def start(w: int) -> Any:
                args = (postgres.URL, schema, w, n_workers, per_worker, ttl)
                p = spawn.Process(target=workers.soak, args=args, daemon=True)  # never outlives pytest
                p.start()
                return p

            procs = [start(w) for w in range(n_workers)]
            rng = random.Random(12)
            killed = 0
            while killed < kills:
                await asyncio.sleep(rng.uniform(0.3, 1.2))
                alive = [w for w, p in enumerate(procs) if p.is_alive()]
                if not alive:
                    break
                w = rng.choice(alive)
                procs[w].kill()
                procs[w].join()
                killed += 1
                procs[w] = start(w)
            assert await asyncio.to_thread(workers.join_all, procs, 300) == [0] * n_workers
            assert killed == kills, "the workers finished before every kill: give them more work"

            assert await conn.fetch(f"SELECT * FROM {schema}.violations") == []
            effects = dict(await conn.fetch(f"SELECT call_id, n FROM {schema}.effects"))
            assert max(effects.values()) == 1  # at most once per call
            rows = await conn.fetch(
                f"SELECT s.id, array_agg(e.seq ORDER BY e.seq), array_agg(e.event::text ORDER BY e.seq)"
                f" FROM {schema}.sessions s JOIN {schema}.events e ON e.session = s.pk GROUP BY s.id"
            )
        finally:
            await conn.close()

    from adk.events import Event

    assert len(rows) == n_workers * per_worker
    shape = ["chat.completion", "chat.completion", "tool.response", "chat.completion", "runner.completion"]
    interrupted = 0
    for sid, seqs, texts in rows:
        events = [Event.model_validate_json(t) for t in texts]
        assert list(seqs) == list(range(1, 5 * workers.TURNS + 1)), sid  # count, order, no gap
        assert [e.object for e in events] == shape * workers.TURNS, sid
        for turn in range(workers.TURNS):
            one = events[5 * turn : 5 * turn + 5]
            assert len({e.invocation_id for e in one}) == 1, sid
            assert one[0].content == f"turn {turn + 1}", sid
            result = one[2]
            call_id = result.message.tool_call_id if result.message else None
            if result.error is None:
                assert effects.get(call_id) == 1, (sid, call_id)  # a stored result: it ran once
            else:
                assert result.error.type == "ToolInterrupted", (sid, result.error)
                interrupted += 1
    assert interrupted <= kills * 13  # at most the calls in flight in a killed worker (12 + its thief)
