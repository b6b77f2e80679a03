"""Never spend twice: `ctx.idempotency_key`, one per tool call, the same on every attempt, after
`runner.resume()` and on any worker (docs/limits.md)."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

from adk import LlmAgent, Runner, ToolContext
from adk.recovery import Testing
from adk.sessions.sqlite import SqliteSessionService
from adk.testing import ScriptedModel
from tests._runtime import Tool, call, calls


def expected(*parts: str) -> str:
    text = "".join(f"{len(p)}:{p}" for p in parts)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def keeping(keys: list[tuple[str, str]], failures: list[Exception]) -> Any:
    async def fn(args: dict[str, Any], ctx: ToolContext) -> str:
        keys.append((ctx.tool_call_id, ctx.idempotency_key))
        if failures:
            raise failures.pop(0)
        return "paid"

    return fn


async def test_every_attempt_of_a_call_has_its_key_and_each_call_its_own(testing: Testing) -> None:
    keys: list[tuple[str, str]] = []
    pay = Tool("pay", keeping(keys, [ConnectionError("reset")]), idempotent=True)
    model = ScriptedModel([calls(call("pay", "c1", amount=5), call("pay", "c2", amount=7)), "ok"])
    runner = Runner(LlmAgent("a", model=model, tools=[pay]))
    events = [e async for e in runner.run("u", "s", "hi")]
    invocation = events[0].invocation_id
    c1, c2 = expected("u", "s", invocation, "c1"), expected("u", "s", invocation, "c2")
    assert sorted(keys) == [("c1", c1), ("c1", c1), ("c2", c2)]  # c1 retried: the same key
    assert c1 != c2


async def test_ids_a_client_chooses_cannot_make_two_users_keys_equal() -> None:
    keys: list[tuple[str, str]] = []
    pay = Tool("pay", keeping(keys, []))
    model = ScriptedModel([calls(call("pay", "c1")), "ok"] * 2)
    runner = Runner(LlmAgent("a", model=model, tools=[pay]))
    for user, session in (("ab", "c"), ("a", "bc")):  # joined without lengths, both read "abc"
        [e async for e in runner.run(user, session, "hi", invocation_id="i")]
    assert [key for _, key in keys] == [expected("ab", "c", "i", "c1"), expected("a", "bc", "i", "c1")]
    assert keys[0][1] != keys[1][1]


async def test_the_key_holds_after_resume_on_another_worker(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    keys: list[tuple[str, str]] = []
    in_flight = asyncio.Event()

    async def hangs(args: dict[str, Any], ctx: ToolContext) -> str:
        keys.append((ctx.tool_call_id, ctx.idempotency_key))
        in_flight.set()
        await asyncio.Event().wait()  # the worker dies during the call
        return "never"

    first_store = SqliteSessionService(path)
    model = ScriptedModel([calls(call("pay", "c1", amount=5))])
    first = Runner(
        LlmAgent("a", model=model, tools=[Tool("pay", hangs, idempotent=True)]), session_service=first_store
    )
    running = asyncio.create_task(_drain(first))
    flight = asyncio.create_task(in_flight.wait())
    await asyncio.wait([running, flight], return_when=asyncio.FIRST_COMPLETED)
    flight.cancel()
    assert in_flight.is_set()  # the call is under way
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)
    first_store.close()

    other_store = SqliteSessionService(path)  # another worker, sharing the store
    model = ScriptedModel(["paid once"])
    other = Runner(
        LlmAgent("a", model=model, tools=[Tool("pay", keeping(keys, []), idempotent=True)]),
        session_service=other_store,
    )
    events = [e async for e in other.resume("u", "s")]
    other_store.close()
    assert events[-2].content == "paid once"
    assert len(keys) == 2
    assert keys[0] == keys[1]
    assert keys[0][1] == expected("u", "s", events[0].invocation_id, "c1")


async def _drain(runner: Runner) -> None:
    async for _ in runner.run("u", "s", "hi"):
        pass
