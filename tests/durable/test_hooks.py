"""A recovered durable run takes its hooks' decisions from the record: a hook that would answer
otherwise the second time is not asked again. Recovery is made in process by forking the
workflow past its last step (DBOS runs the workflow again over every recorded step)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

pytest.importorskip("dbos")

from dbos import DBOS

from adk import Cont, Fallback, Halt, LlmAgent, Retry
from adk.context import ModelContext, ToolContext
from adk.durable import DurableRunner, workflow_id
from adk.events import LlmResponse
from adk.sessions.memory import InMemorySessionService
from adk.testing import ScriptedModel, call_tool

Launch = Callable[[DurableRunner], Coroutine[Any, Any, None]]


def _add(effects: list[int]) -> Callable[..., int]:
    def add(a: int, b: int) -> int:
        """Add two numbers.

        Args:
            a: one.
            b: the other.
        """
        effects.append(a + b)
        return a + b

    return add


class Fickle:
    """Answers otherwise each time it is asked (as a hook that reads the clock would): the first
    `before_tool` lets the call run, any later one halts it; `after_model` replaces the first
    answer only; each call is noted in `asked`."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[Any]:
        self.asked.append("before_tool")
        if self.asked.count("before_tool") == 1:
            return Cont(dataclasses.replace(ctx, args={**ctx.args, "b": 3}))  # a changed context
        return Halt("closed")

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        self.asked.append("after_model")
        if self.asked.count("after_model") == 2:
            return LlmResponse.text("replaced")
        return response


async def _recovered(runner: DurableRunner, wfid: str) -> Any:
    """Run workflow `wfid` again over every step it recorded, as a recovery does; its result."""
    handle = await DBOS.fork_workflow_async(wfid, 1000)
    return await handle.get_result()


async def _steps(wfid: str) -> list[str]:
    return [s["function_name"] for s in await DBOS.list_workflow_steps_async(wfid)]


async def test_a_recovered_run_takes_its_hooks_decisions_from_the_record(started: Launch) -> None:
    store = InMemorySessionService()
    effects: list[int] = []
    fickle = Fickle()
    model = ScriptedModel([call_tool("add", a=1, b=2, call_id="c1"), "four"])
    agent = LlmAgent("calc", model=model, tools=[_add(effects)], callbacks=[fickle])
    runner = DurableRunner(agent, session_service=store, name="calc-fickle")
    await started(runner)
    events = [e async for e in runner.run("u", "s", "1+2?", invocation_id="i1")]
    wfid = workflow_id("u", "s", "i1")
    assert fickle.asked == ["after_model", "before_tool", "after_model"]
    assert effects == [4]  # the changed arguments ran
    assert await _steps(wfid) == [
        "adk.lease",
        "adk.model:scripted",
        "adk.hook:Fickle.after_model",
        "adk.hook:Fickle.before_tool",
        "adk.tool.start:add",
        "adk.tool:add",
        "adk.model:scripted",
        "adk.hook:Fickle.after_model",
    ]
    assert await _recovered(runner, wfid) == "runner.completion"
    assert fickle.asked == ["after_model", "before_tool", "after_model"]  # not asked again
    assert effects == [4] and len(model.requests) == 2
    session = await store.get("u", "s")
    assert session is not None and session.events == events  # nothing stored twice
    assert events[-2].message is not None and events[-2].message.content == "replaced"


class Switching:
    """On a model error, retries once on the model it holds, then falls back to a fixed answer;
    asked again it would only fall back."""

    def __init__(self, other: Any) -> None:
        self.other = other
        self.asked = 0

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Retry[ModelContext] | Fallback[Any]:
        self.asked += 1
        if self.asked == 1:
            return Retry(dataclasses.replace(ctx, model=self.other), delay=0.0)
        return Fallback(LlmResponse.text("fixed"))


async def test_a_recorded_switch_to_another_model_finds_it_again_by_name(started: Launch) -> None:
    store = InMemorySessionService()
    failing = ScriptedModel([RuntimeError("down")], name="first")
    other = ScriptedModel(["from the other"], name="other")
    switching = Switching(other)
    agent = LlmAgent("switch", model=failing, callbacks=[switching])
    runner = DurableRunner(agent, session_service=store, name="switch")
    await started(runner)
    events = [e async for e in runner.run("u", "s", "hi", invocation_id="i1")]
    assert [e.message.content for e in events if e.message is not None][-1] == "from the other"
    assert await _recovered(runner, workflow_id("u", "s", "i1")) == "runner.completion"
    # Asked again for the model object only: it now answers Fallback, yet the recorded Retry to
    # `other` stands, `other` found again by name among what the callback holds.
    assert switching.asked == 2
    assert len(other.requests) == 1  # its attempt is a step like any: not made again
    session = await store.get("u", "s")
    assert session is not None and session.events == [e for e in events if not e.is_partial]
