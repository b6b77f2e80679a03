"""What a resumed run knows lives on its invocation: another session's run that happens to have the
same invocation id (over AG-UI, a client's `runId`) is a new run, not taken for the resume."""

from __future__ import annotations

import asyncio
from typing import Any

from adk import Approve
from adk.agents import LlmAgent
from adk.context import ToolContext
from adk.events import ObjectType
from adk.runner import Runner
from adk.sessions import InMemorySessionService
from adk.testing import ScriptedModel
from tests._runtime import Tool, call, calls, reply, summary


class Held:
    """A tool that waits, once it started, until the test lets it go (no real time passes)."""

    def __init__(self) -> None:
        self.started, self.go = asyncio.Event(), asyncio.Event()

    async def __call__(self, args: dict[str, Any], ctx: ToolContext) -> str:
        self.started.set()
        await self.go.wait()
        return "paid"


async def test_a_new_run_with_the_id_of_an_invocation_being_resumed_in_another_session_is_a_new_run() -> None:
    held = Held()
    pay = Tool("pay", held)
    pay.requires_approval = True
    model = ScriptedModel([calls(call("pay", "c1", amount=5)), reply, reply])
    runner = Runner(LlmAgent("bank", model=model, tools=[pay]), session_service=InMemorySessionService())
    paused = [e async for e in runner.run("alice", "a", "pay", invocation_id="r1")]
    assert paused[-1].object == ObjectType.RUNNER_PAUSED

    async def resume() -> list[Any]:
        return [summary(e) async for e in runner.run("alice", "a", approvals={"c1": Approve()})]

    resuming = asyncio.ensure_future(resume())
    await held.started.wait()  # alice's invocation r1 is being resumed, its tool running
    other = [summary(e) async for e in runner.run("mallory", "m", "hello", invocation_id="r1")]
    held.go.set()
    alice = await resuming

    assert other == [("model", "user", "hello"), ("model", "bank", "re: hello"), ("done", "bank")]
    assert alice == [("tool", "bank", "pay", "c1", "paid"), ("model", "bank", "re: paid"), ("done", "bank")]
    stored = await runner.session_service.get("mallory", "m")
    assert stored is not None and [e.author for e in stored.events] == ["user", "bank", "bank"]
