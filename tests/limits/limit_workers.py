"""Worker processes for the shared breaker and rate limit tests (started with spawn)."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from adk.agents import LlmAgent
from adk.errors import ServerError
from adk.limits import RateLimit
from adk.recovery import CircuitBreaker, set_testing
from adk.runner import Runner
from adk.sessions.postgres import PostgresSessionService
from adk.sessions.sqlite import SqliteSessionService
from adk.testing import ScriptedModel
from tests.sessions.workers import open_store


def open_shared(where: str, schema: str) -> PostgresSessionService | SqliteSessionService:
    store = open_store(where, schema, 60.0, **({"min_size": 1, "max_size": 1} if "://" in where else {}))
    assert isinstance(store, PostgresSessionService | SqliteSessionService)
    return store


async def close_shared(store: Any) -> None:
    if isinstance(store, PostgresSessionService):
        await store.close()
    else:
        store.close()


def breaker(where: str, schema: str, role: str, at: float, out: Any) -> None:
    """`fail`: two runs whose model `a` fails; `use`: one run, `a` and its fallback `b` both able.
    Puts what each model was asked and the run's last answer."""

    async def main() -> None:
        store = open_shared(where, schema)
        fails = role == "fail"
        a = ScriptedModel([ServerError("503")] * 2 if fails else ["from a"], name="a")
        b = ScriptedModel([] if fails else ["from b"], name="b")
        shared = CircuitBreaker(failures=2, cooldown=30, fallbacks=[b], store=store, clock=lambda: at)
        runner = Runner(LlmAgent("root", model=a, callbacks=[shared]), session_service=store)
        last = None
        with set_testing(True, attempts=1):  # one attempt a call: each run's failure counts once
            for n in range(2 if fails else 1):
                events = [e async for e in runner.run("u", f"{role}-{at}-{n}", "hi")]
                last = events[-2].content if events[-1].error is None else events[-1].error.type
        out.put((len(a.requests), len(b.requests), last))
        await close_shared(store)

    asyncio.run(main())


def paced(where: str, schema: str, calls: int, barrier: Any, out: Any) -> None:
    """`calls` runs, each one model call, paced by a 60-a-minute limit shared through the store;
    the clock stands still, so each call's wait is its place in the shared queue. Puts the waits."""

    async def main() -> None:
        store = open_shared(where, schema)
        pace = RateLimit(requests_per_minute=60, store=store, clock=lambda: 1000.0)
        agent = LlmAgent("root", model=ScriptedModel(["ok"] * calls))
        runner = Runner(agent, session_service=store, callbacks=[pace])
        await store.update_shared("warm", lambda state: None)  # connected, the table made
        await asyncio.to_thread(barrier.wait, 60)
        with set_testing(True) as testing:
            for n in range(calls):
                async for _ in runner.run("u", f"paced-{os.getpid()}-{n}", "hi"):
                    pass
        out.put(testing.waits)
        await close_shared(store)

    asyncio.run(main())
