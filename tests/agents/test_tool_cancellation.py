"""A tool that raises `CancelledError` itself: the error propagates, and its siblings are cancelled
and awaited before it does, so nothing runs on after the run ended."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from adk.agents import LlmAgent
from adk.context import ToolContext
from adk.runner import Runner
from adk.testing import ScriptedModel
from tests._runtime import Tool, call, calls, run


async def test_a_tool_raising_cancelled_error_cancels_and_awaits_every_sibling() -> None:
    started: list[str] = []
    both_waiting = asyncio.Event()
    trace: list[str] = []

    async def wait(args: dict[str, Any], ctx: ToolContext) -> str:
        started.append(ctx.tool_call_id)
        if len(started) == 2:
            both_waiting.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await asyncio.sleep(0)  # a sibling that cleans up across an await is awaited to the end
            trace.append(f"{ctx.tool_call_id} cancelled")
            raise
        return "never"

    async def quit(args: dict[str, Any], ctx: ToolContext) -> str:
        await both_waiting.wait()
        trace.append("quit raises")
        raise asyncio.CancelledError

    model = ScriptedModel([calls(call("wait", "w1"), call("quit", "q"), call("wait", "w2")), "unused"])
    agent = LlmAgent("root", model=model, tools=[Tool("wait", wait), Tool("quit", quit)])

    with pytest.raises(asyncio.CancelledError):
        await run(Runner(agent))

    assert trace == ["quit raises", "w1 cancelled", "w2 cancelled"]
    assert asyncio.all_tasks() == {asyncio.current_task()}
    assert len(model.requests) == 1
