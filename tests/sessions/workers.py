"""Worker processes for the many-worker tests: started with multiprocessing's spawn, killed at will."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import time
from collections.abc import AsyncIterator, Iterator
from multiprocessing.synchronize import Barrier
from multiprocessing.synchronize import Event as MpEvent
from typing import Any

from adk.agents import LlmAgent
from adk.callbacks.results import Cont
from adk.context import AgentContext, ToolContext, current_tool_call_id
from adk.errors import SessionBusyError
from adk.events import LlmResponse, Message, ToolCall
from adk.models.base import LlmRequest
from adk.runner import Runner
from adk.sessions import SessionService
from adk.sessions.postgres import PostgresSessionService
from adk.sessions.sqlite import SqliteSessionService
from adk.testing import ScriptedModel
from tests._runtime import Tool, call, calls


@contextlib.contextmanager
def started(procs: list[Any]) -> Iterator[list[Any]]:
    """Start `procs` as daemons and kill whichever is still alive on the way out: a worker that
    fails or hangs fails its test, and never keeps pytest waiting for it at exit."""
    for p in procs:
        p.daemon = True
        p.start()
    try:
        yield procs
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
            p.join()


def join_all(procs: list[Any], timeout: float) -> list[int | None]:
    """Wait at most `timeout` seconds in all for `procs`; their exit codes (None: still running)."""
    deadline = time.monotonic() + timeout
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
    return [p.exitcode for p in procs]


def open_store(where: str, schema: str, lease_ttl: float, **kw: Any) -> SessionService:
    if where.startswith("postgresql:"):
        return PostgresSessionService(where, schema=schema, lease_ttl=lease_ttl, **kw)
    return SqliteSessionService(where, lease_ttl=lease_ttl)


# --- the lease race: every process tries to take each round's session at the same moment ---


def race(where: str, schema: str, rounds: int, barrier: Barrier, wins: Any) -> None:
    async def main() -> None:
        store = open_store(where, schema, 60.0, min_size=1, max_size=1)
        await store.get_or_create("warm", "up")  # connected before the first round
        me = str(os.getpid())
        for r in range(rounds):
            await asyncio.to_thread(barrier.wait, 60)
            try:
                await store.acquire("u", f"round-{r}", me)
            except SessionBusyError:
                continue
            wins.put((r, me))

    asyncio.run(main())


# --- one process holds a session in a tool that never returns, until it is killed ---


def hold(where: str, schema: str, lease_ttl: float, holding: MpEvent) -> None:
    async def block(args: dict[str, Any], ctx: ToolContext) -> str:
        holding.set()
        await asyncio.Event().wait()
        return "never"

    async def main() -> None:
        store = open_store(where, schema, lease_ttl)
        model = ScriptedModel([calls(call("block", "c1"))])
        runner = Runner(LlmAgent("root", model=model, tools=[Tool("block", block)]), session_service=store)
        async for _ in runner.run("u", "s", "hi"):
            pass

    asyncio.run(main())


# --- the soak: sessions with turns of a tool call each, workers killed and restarted ---

TURNS = 3


class TurnModel:
    """Asks for the `effect` tool after a user message, answers after its result."""

    name = "turns"

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        last = request.messages[-1]
        await asyncio.sleep(0)
        if last.role == "user":
            yield LlmResponse.calls(ToolCall.of("effect", json.dumps({"turn": last.content})))
        else:
            yield LlmResponse.text(f"after {last.content}")


class Running:
    """Notes in the database which worker runs each session, and any overlap it finds."""

    def __init__(self, pool: Any, schema: str) -> None:
        self.pool = pool
        self.schema = schema
        self.me = os.getpid()

    async def before_agent(self, ctx: AgentContext) -> Cont[AgentContext]:
        sid = ctx.invocation.session.id
        row = await self.pool.fetchrow(f"SELECT pid FROM {self.schema}.running WHERE session = $1", sid)
        if row is not None and row[0] != self.me and _alive(row[0]):
            await self.pool.execute(
                f"INSERT INTO {self.schema}.violations VALUES ($1, $2, $3)", sid, self.me, row[0]
            )
        await self.pool.execute(
            f"INSERT INTO {self.schema}.running VALUES ($1, $2)"
            " ON CONFLICT (session) DO UPDATE SET pid = excluded.pid",
            sid,
            self.me,
        )
        return Cont(ctx)

    async def after_agent(self, output: Message | None, ctx: AgentContext) -> Message | None:
        sid = ctx.invocation.session.id
        await self.pool.execute(
            f"DELETE FROM {self.schema}.running WHERE session = $1 AND pid = $2", sid, self.me
        )
        return output


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def soak(url: str, schema: str, worker: int, workers: int, per_worker: int, lease_ttl: float) -> None:
    import asyncpg

    async def main() -> None:
        pool = await asyncpg.create_pool(url, min_size=1, max_size=4)
        store = PostgresSessionService(url, schema=schema, lease_ttl=lease_ttl, max_size=8)

        async def effect(args: dict[str, Any], ctx: ToolContext) -> str:
            await pool.execute(
                f"INSERT INTO {schema}.effects VALUES ($1, 1) ON CONFLICT (call_id)"
                " DO UPDATE SET n = effects.n + 1",
                current_tool_call_id(),
            )
            return "done"

        agent = LlmAgent("root", model=TurnModel(), tools=[Tool("effect", effect)])
        runner = Runner(agent, session_service=store, callbacks=[Running(pool, schema)])
        mine = [f"w{worker}-s{i}" for i in range(per_worker)]
        others = [f"w{w}-s{i}" for w in range(workers) if w != worker for i in range(per_worker)]
        limit = asyncio.Semaphore(12)

        async def drain(events: Any) -> None:
            async for _ in events:
                pass

        async def finish(sid: str) -> None:
            while True:
                async with limit:
                    try:
                        await drain(runner.resume("u", sid))
                        session = await store.get("u", sid)
                        done = (
                            sum(1 for e in session.events if e.object == "runner.completion")
                            if session
                            else 0
                        )
                        for turn in range(done + 1, TURNS + 1):
                            await drain(runner.run("u", sid, f"turn {turn}"))
                        return
                    except SessionBusyError:
                        pass  # a dead worker's lease, not yet expired, or a thief finishing it
                await asyncio.sleep(0.05)

        async def thief() -> None:
            while True:  # finishes other workers' interrupted invocations, racing their owners
                with contextlib.suppress(SessionBusyError):
                    await drain(runner.resume("u", random.choice(others)))
                await asyncio.sleep(0.01)

        stealing = asyncio.create_task(thief())
        await asyncio.gather(*(finish(sid) for sid in mine))
        stealing.cancel()

    asyncio.run(main())


# --- the budget race: every process spends one user budget on PostgreSQL at the same moment ---


def spend(where: str, schema: str, runs: int, barrier: Barrier, made: Any) -> None:
    from adk.events import Usage
    from adk.limits import Budget

    def billed(request: LlmRequest) -> LlmResponse:
        response = LlmResponse.text("ok")
        response.usage = Usage(prompt_tokens=1, completion_tokens=1, total_tokens=2)
        return response

    async def main() -> None:
        store = open_store(where, schema, 60.0, **({"min_size": 1, "max_size": 2} if "://" in where else {}))
        assert isinstance(store, PostgresSessionService | SqliteSessionService)
        budget = Budget(model_calls=10, scope="user", store=store)
        model = ScriptedModel([billed] * runs)
        runner = Runner(LlmAgent("root", model=model), session_service=store, callbacks=[budget])
        await store.budget_used("warm")  # connected, and the table made, before the race
        await asyncio.to_thread(barrier.wait, 60)
        for n in range(runs):
            async for _ in runner.run("u", f"{os.getpid()}-{n}", "hi"):
                pass
        made.put(len(model.requests))
        if isinstance(store, PostgresSessionService):
            await store.close()
        else:
            store.close()

    asyncio.run(main())
