"""Invocation.observe: observers see each later event of the run as the runner yields it."""

import logging

import pytest

from adk import AgentContext, Cont, Event, LlmAgent, Runner
from adk.errors import AuthenticationError, ServerError
from adk.testing import ScriptedModel

pytestmark = pytest.mark.usefixtures("testing")


class Observe:
    def __init__(self) -> None:
        self.seen: list[Event] = []

    def before_agent(self, ctx: AgentContext) -> Cont[AgentContext]:
        ctx.invocation.observe(self.seen.append)
        return Cont(ctx)


async def test_every_event_after_registration_in_the_order_yielded() -> None:
    observe = Observe()
    model = ScriptedModel([ServerError("503"), "ok"])
    runner = Runner(LlmAgent("a", model=model), callbacks=[observe])
    events = [e async for e in runner.run("u", "s", "hi", stream=True)]
    assert observe.seen == events[1:]  # all but the user's message, partial ones too
    assert [e.object for e in observe.seen] == [
        "attempt.failed",
        "chat.completion.chunk",
        "chat.completion",
        "runner.completion",
    ]


async def test_the_error_event_that_ends_a_run_is_seen() -> None:
    observe = Observe()
    runner = Runner(LlmAgent("a", model=ScriptedModel([AuthenticationError("bad key")])), callbacks=[observe])
    events = [e async for e in runner.run("u", "s", "hi")]
    assert observe.seen == events[1:] and events[-1].object == "error"


async def test_a_failing_observer_is_logged_and_the_run_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    class Broken:
        def before_agent(self, ctx: AgentContext) -> Cont[AgentContext]:
            ctx.invocation.observe(lambda event: 1 / 0)
            return Cont(ctx)

    observe = Observe()
    runner = Runner(LlmAgent("a", model=ScriptedModel(["ok"])), callbacks=[Broken(), observe])
    with caplog.at_level(logging.ERROR, logger="adk.context"):
        events = [e async for e in runner.run("u", "s", "hi")]
    assert observe.seen == events[1:]
    assert [r.getMessage().split(" of invocation")[0].split(" at 0x")[0] for r in caplog.records] == [
        "observer <function test_a_failing_observer_is_logged_and_the_run_goes_on.<locals>.Broken."
        "before_agent.<locals>.<lambda>"
    ] * 2
