"""Every value a hook hands back is checked where it is handed back, through a real run.

A wrong one ends the run with an error event whose `where` is `callback:<Name>.<hook>` and whose
message names the callback, the hook and what was wrong, in a short repr.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from adk.agents import LlmAgent
from adk.callbacks.results import Cont, Fallback, Halt, Raise, Retry
from adk.context import AgentContext, ModelContext, ToolContext
from adk.errors import ServerError
from adk.events import Event, LlmResponse, Message, ObjectType
from adk.recovery import set_testing
from adk.runner import Runner
from adk.testing import ScriptedModel
from tests._runtime import Tool, call, calls, run


class NoneAfterModel:
    def after_model(self, response: LlmResponse, ctx: ModelContext) -> Any:
        return None


class HaltsWithText:
    def before_model(self, ctx: ModelContext) -> Any:
        return Halt("no")


class AfterAgent42:
    def after_agent(self, output: Message | None, ctx: AgentContext) -> Any:
        return 42


class FallsBackWithText:
    def on_model_error(self, error: Exception, ctx: ModelContext) -> Any:
        return Fallback("text")


class ContWithRequest:
    """Hands back the request where the context belongs."""

    def before_model(self, ctx: ModelContext) -> Any:
        return Cont(ctx.request)


class RetryWithRequest:
    def on_model_error(self, error: Exception, ctx: ModelContext) -> Any:
        return Retry(ctx.request)


class HaltsAgentWith42:
    def before_agent(self, ctx: AgentContext) -> Any:
        return Halt(42)


def error_of(events: list[Event]) -> tuple[str, str | None, str]:
    """The run's final error event, as (type, where, message); it must be the last but nothing."""
    error = events[-1]
    assert error.object == ObjectType.ERROR
    assert error.error is not None
    return error.error.type, error.error.where, error.error.message


@pytest.mark.parametrize(
    ("callback", "hook", "steps", "problem"),
    [
        (
            NoneAfterModel,
            "after_model",
            ["hello"],
            "returned None; after_model must return an LlmResponse, not None",
        ),
        (
            HaltsWithText,
            "before_model",
            [],
            "returned Halt(value='no'); the value of a Halt from before_model must be an LlmResponse, "
            "not str",
        ),
        (
            AfterAgent42,
            "after_agent",
            ["hello"],
            "returned 42; after_agent must return a Message or None, not int",
        ),
        (
            FallsBackWithText,
            "on_model_error",
            [ServerError("down")],
            "returned Fallback(value='text'); the value of a Fallback from on_model_error must be an "
            "LlmResponse, not str",
        ),
        (
            ContWithRequest,
            "before_model",
            [],
            "returned Cont(ctx=<LlmRequest>); the ctx of a Cont from before_model must be the "
            "ModelContext it received (or a copy), not LlmRequest",
        ),
        (
            RetryWithRequest,
            "on_model_error",
            [ServerError("down")],
            "returned Retry(ctx=<LlmRequest>, delay=None); the ctx of a Retry from on_model_error must "
            "be the ModelContext it received (or a copy), not LlmRequest",
        ),
        (
            HaltsAgentWith42,
            "before_agent",
            [],
            "returned Halt(value=42); the value of a Halt from before_agent must be a Message or str, "
            "not int",
        ),
    ],
)
async def test_a_wrong_answer_ends_the_run_with_an_error_event_naming_callback_and_hook(
    callback: type, hook: str, steps: list[Any], problem: str
) -> None:
    model = ScriptedModel(steps)
    runner = Runner(LlmAgent("root", model=model, callbacks=[callback]))
    with set_testing(True):
        events = await run(runner)
    name = callback.__qualname__
    assert error_of(events) == (
        "CallbackError",
        f"callback:{name}.{hook}",
        f"callback {name} failed in {hook}: {problem}",
    )
    model.assert_done()
    stored = await runner.session_service.get("u", "s")
    assert stored is not None
    assert stored.events[-1].error == events[-1].error  # stored like any other event


class BadToolAnswers:
    """Tool hooks may hand back anything as a value, but their contexts are still checked."""

    def before_tool(self, ctx: ToolContext) -> Any:
        return Cont(ctx.args)


async def test_a_wrong_context_from_a_tool_hook_becomes_that_tool_calls_error() -> None:
    tool = Tool("t")
    model = ScriptedModel([calls(call("t", "c1", x=1)), "done"])
    runner = Runner(LlmAgent("root", model=model, tools=[tool], callbacks=[BadToolAnswers]))
    events = await run(runner)
    response = events[2]
    assert response.object == ObjectType.TOOL_RESPONSE
    assert response.error is not None
    assert (response.error.type, response.error.where) == (
        "CallbackError",
        "callback:BadToolAnswers.before_tool",
    )
    assert response.error.message == (
        "callback BadToolAnswers failed in before_tool: returned Cont(ctx={'x': 1}); the ctx of a Cont "
        "from before_tool must be the ToolContext it received (or a copy), not dict"
    )
    assert tool.calls == []  # the tool never ran
    assert events[-1].object == ObjectType.RUNNER_COMPLETION


class AnythingGoesForTools:
    """`Halt`, `Fallback` and `after_tool` values of the tool hooks may be anything a tool returns."""

    def before_tool(self, ctx: ToolContext) -> Any:
        if ctx.args.get("halt"):
            return Halt(None)
        return Cont(dataclasses.replace(ctx))

    def after_tool(self, result: Any, ctx: ToolContext) -> Any:
        return ("after", result)

    def on_tool_error(self, error: Exception, ctx: ToolContext) -> Any:
        return Fallback({"fixed": 1})


async def test_tool_hooks_may_hand_back_any_value() -> None:
    def fails(args: dict[str, Any], ctx: ToolContext) -> Any:
        raise ValueError("no")

    model = ScriptedModel([calls(call("t", "c1", halt=True), call("f", "c2")), "done"])
    agent = LlmAgent(
        "root", model=model, tools=[Tool("t"), Tool("f", fails)], callbacks=[AnythingGoesForTools]
    )
    events = await run(Runner(agent))
    assert [(e.message.content if e.message else None, e.error) for e in events[2:4]] == [
        ('["after",null]', None),
        ('["after",{"fixed":1}]', None),
    ]


class LongContext:
    """A wrong answer carrying a long conversation: the message quotes a short repr of it."""

    def before_model(self, ctx: ModelContext) -> Any:
        return Halt([m.content for m in ctx.request.messages] * 50)


async def test_the_message_quotes_a_short_repr_not_the_whole_conversation() -> None:
    secret_tail = "the end of a long conversation"
    runner = Runner(LlmAgent("root", model=ScriptedModel([]), callbacks=[LongContext]))
    events = await run(runner, "x" * 5000 + secret_tail)
    _, where, message = error_of(events)
    assert where == "callback:LongContext.before_model"
    assert len(message) < 400
    assert secret_tail not in message
    assert message.endswith("must be an LlmResponse, not list")


class RaiseWithText:
    def on_model_error(self, error: Exception, ctx: ModelContext) -> Any:
        return Raise("boom")  # type: ignore[arg-type]


async def test_a_raise_without_an_exception_is_named() -> None:
    runner = Runner(LlmAgent("root", model=ScriptedModel([ServerError("down")]), callbacks=[RaiseWithText]))
    _, where, message = error_of(await run(runner))
    assert where == "callback:RaiseWithText.on_model_error"
    assert message == (
        "callback RaiseWithText failed in on_model_error: returned Raise(error='boom'); the error of a "
        "Raise from on_model_error must be an Exception, not str"
    )
