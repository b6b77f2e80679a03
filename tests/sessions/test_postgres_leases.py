"""The PostgreSQL store's leases: a turn's cost flat in the session's length, renewals that never
wait behind the pool."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from adk.agents import LlmAgent
from adk.runner import Runner
from adk.sessions.postgres import PostgresSessionService
from adk.testing import ScriptedModel
from tests import postgres
from tests.sessions.helpers import delta_event
from tests.sessions.proxy import Proxy


@pytest.fixture
async def schema() -> AsyncIterator[str]:
    postgres.require()
    async with postgres.fresh_schema() as schema:
        yield schema


async def test_a_turn_reads_as_much_from_the_server_at_500_events_as_at_5(schema: str) -> None:
    # Counted on the wire (bytes the server sends, round trips), not timed: it cannot flake.
    async with (
        Proxy(postgres.URL) as proxy,
        PostgresSessionService(proxy.url, schema=schema) as store,
        PostgresSessionService(postgres.URL, schema=schema) as other,
    ):
        runner = Runner(LlmAgent("root", model=ScriptedModel(["answer"] * 4)), session_service=store)

        async def turn() -> tuple[int, int]:
            received, answers = proxy.received, proxy.answers
            events = [e async for e in runner.run("u", "s", "question")]
            assert [e.object for e in events][-1] == "runner.completion"
            return proxy.received - received, proxy.answers - answers

        await turn()
        short = await turn()  # the session holds 3 events; 6 after
        grown = await other.acquire("u", "s", "another worker")  # it grows it by 500 events
        for n in range(500):
            await other.append_event(grown, delta_event(n, k=n))
        await other.release(grown)
        await turn()  # reads those 500 once
        long = await turn()
        stored = await other.get("u", "s")
    assert stored is not None and len(stored.events) == 512
    # acquire, 3 appends, release: each a round trip, and one for the pool's reset of its connection
    assert long[1] == short[1] == 10
    assert abs(long[0] - short[0]) <= 64, (short, long)  # ids and times differ; no event is read again


async def test_a_renewal_does_not_wait_behind_a_pool_in_use(schema: str) -> None:
    # Every connection of the pool waits (reads stuck behind a lock): the renewal goes through.
    import asyncpg

    async with PostgresSessionService(postgres.URL, schema=schema, max_size=2, lease_ttl=60) as store:
        held = await store.acquire("u", "held", "me")
        await store.get_or_create("u", "other")
        before = await postgres.fetch(f"SELECT lease_expires FROM {schema}.sessions WHERE id = 'held'")
        locker = await asyncpg.connect(postgres.URL)
        try:
            async with locker.transaction():
                await locker.execute(f"LOCK TABLE {schema}.events IN ACCESS EXCLUSIVE MODE")
                reads = [asyncio.ensure_future(store.get("u", s)) for s in ("held", "other")]
                waiting = "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = $1::regclass"
                while (await postgres.fetch(waiting, f"{schema}.events"))[0][0] < 2:
                    pass  # until both of the pool's connections wait for the lock

                await asyncio.wait_for(store.renew(held), 10)  # the bound is only reached on failure

                after = await postgres.fetch(f"SELECT lease_expires FROM {schema}.sessions WHERE id = 'held'")
                assert not any(read.done() for read in reads)
        finally:
            await locker.close()
        assert [s is not None for s in await asyncio.gather(*reads)] == [True, True]
    assert after[0][0] > before[0][0]
