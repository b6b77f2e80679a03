"""Invocation.on_end: observers learn, once, how the run ended."""

import logging
from collections.abc import AsyncIterator

import pytest

from adk import AgentContext, Cont, LlmAgent, Runner
from adk.errors import AuthenticationError
from adk.testing import ScriptedModel


class Watch:
    def __init__(self) -> None:
        self.ends: list[BaseException | None] = []

    def before_agent(self, ctx: AgentContext) -> Cont[AgentContext]:
        ctx.invocation.on_end(self.ends.append)
        return Cont(ctx)


async def drain(events: AsyncIterator[object]) -> list[object]:
    return [e async for e in events]


async def test_called_once_with_none_when_the_run_completes() -> None:
    watch = Watch()
    runner = Runner(LlmAgent("a", model=ScriptedModel(["ok"])), callbacks=[watch])
    await drain(runner.run("u", "s", "hi"))
    assert watch.ends == [None]


async def test_called_with_the_error_that_ended_the_run() -> None:
    watch = Watch()
    runner = Runner(LlmAgent("a", model=ScriptedModel([AuthenticationError("bad key")])), callbacks=[watch])
    events = await drain(runner.run("u", "s", "hi"))
    assert [type(e) for e in watch.ends] == [AuthenticationError]
    assert str(watch.ends[0]) == "bad key"
    assert len(events) == 2  # the user's message and the error


async def test_called_with_generator_exit_when_the_consumer_stops() -> None:
    watch = Watch()
    runner = Runner(LlmAgent("a", model=ScriptedModel(["ok"])), callbacks=[watch])
    run = runner.run("u", "s", "hi")
    await anext(run)
    await anext(run)  # the model's answer: the invocation is still running
    await run.aclose()
    assert [type(e) for e in watch.ends] == [GeneratorExit]


async def test_a_failing_observer_is_logged_and_the_run_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        def before_agent(self, ctx: AgentContext) -> Cont[AgentContext]:
            ctx.invocation.on_end(lambda error: 1 / 0)
            return Cont(ctx)

    watch = Watch()
    runner = Runner(LlmAgent("a", model=ScriptedModel(["ok"])), callbacks=[Broken(), watch])
    with caplog.at_level(logging.ERROR, logger="adk.context"):
        events = await drain(runner.run("u", "s", "hi", invocation_id="inv1"))
    assert len(events) == 3
    assert watch.ends == [None]
    assert [r.getMessage().split(" of invocation ")[1] for r in caplog.records] == ["inv1 failed"]
