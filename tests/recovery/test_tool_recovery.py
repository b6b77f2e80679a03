"""Tool-call recovery: explicit retries, idempotent tools, ToolRetry, fallbacks."""

from __future__ import annotations

import dataclasses
from typing import Any

from adk import Fallback, LlmAgent, LlmResponse, Raise, Retry, Runner, ToolContext, ToolRetry
from adk.events import ToolCall
from adk.recovery import Testing
from adk.testing import ScriptedModel
from tests._runtime import Tool, run
from tests.recovery.support import Recorder


def call(name: str, args: str = "{}") -> LlmResponse:
    return LlmResponse.calls(ToolCall.of(name, args, id=f"call_{name}"))


def flaky(failures: list[Exception], result: Any = "done") -> Any:
    async def fn(args: dict[str, Any], ctx: ToolContext) -> Any:
        if failures:
            raise failures.pop(0)
        return result

    return fn


async def test_tool_fails_then_succeeds_under_an_explicit_retry(testing: Testing) -> None:
    class RetryOnce:
        def on_tool_error(self, error: Exception, ctx: ToolContext) -> Retry[ToolContext] | Raise:
            if ctx.attempt == 1:
                return Retry(dataclasses.replace(ctx, args={"fixed": True}))
            return Raise(error)

    tool = Tool("t", flaky([ValueError("bad")]))
    rec = Recorder()
    model = ScriptedModel([call("t"), "ok"])
    events = await run(Runner(LlmAgent("a", model=model, tools=[tool], callbacks=[rec, RetryOnce])))
    assert [t for t in rec.trace if "tool" in t[0]] == [
        ("before_tool", "t", 1),
        ("on_tool_error", "t:ValueError", 1),
        ("before_tool", "t", 2),  # other arguments: before_tool passes them before they run
        ("after_tool", "t", 2),
    ]
    assert tool.calls == [{}, {"fixed": True}]
    assert model.requests[1].messages[-1].content == "done"
    assert events[-2].content == "ok"


async def test_non_idempotent_tool_is_not_retried_by_default(testing: Testing) -> None:
    tool = Tool("t", flaky([ConnectionError("reset")]))
    model = ScriptedModel([call("t"), "ok"])
    await run(Runner(LlmAgent("a", model=model, tools=[tool])))
    assert len(tool.calls) == 1
    assert model.requests[1].messages[-1].content == "Error: ConnectionError: reset"


async def test_idempotent_tool_is_retried_on_transient_errors(testing: Testing) -> None:
    tool = Tool("t", flaky([ConnectionError("reset")]), idempotent=True)
    model = ScriptedModel([call("t"), "ok"])
    await run(Runner(LlmAgent("a", model=model, tools=[tool])))
    assert len(tool.calls) == 2
    assert model.requests[1].messages[-1].content == "done"
    assert len(testing.waits) == 1


async def test_tool_retry_asks_the_model_to_correct_within_its_bound(testing: Testing) -> None:
    tool = Tool("t", flaky([ToolRetry("use an ISO date")] * 3))
    tool.max_retries = 1
    model = ScriptedModel([call("t"), call("t"), "giving up"])
    events = await run(Runner(LlmAgent("a", model=model, tools=[tool])))
    first = model.requests[1].messages[-1].content
    second = model.requests[2].messages[-1].content
    assert first == "Error: use an ISO date. Correct the call and try again."
    assert second.startswith(
        "Error: tool 't' asked for a corrected call 2 times, more than its max_retries=1"
    )
    tool_events = [e for e in events if e.object == "tool.response"]
    assert [e.error.type for e in tool_events if e.error] == ["ToolRetry", "ToolRetry"]


async def test_fallback_result_for_a_failing_tool_goes_through_after_tool(testing: Testing) -> None:
    class Default:
        def on_tool_error(self, error: Exception, ctx: ToolContext) -> Fallback[str]:
            return Fallback(f"default for {ctx.tool.name}")

    rec = Recorder()
    model = ScriptedModel([call("t"), "ok"])
    tool = Tool("t", flaky([RuntimeError("x")]))
    await run(Runner(LlmAgent("a", model=model, tools=[tool], callbacks=[rec, Default])))
    assert [t[0] for t in rec.trace if "tool" in t[0]] == ["before_tool", "on_tool_error", "after_tool"]
    assert model.requests[1].messages[-1].content == "default for t"


async def test_explicit_tool_retry_is_bounded(testing: Testing) -> None:
    class Always:
        def on_tool_error(self, error: Exception, ctx: ToolContext) -> Retry[ToolContext]:
            return Retry(ctx)

    tool = Tool("t", flaky([RuntimeError(str(i)) for i in range(10)]))
    model = ScriptedModel([call("t"), "ok"])
    events = await run(Runner(LlmAgent("a", model=model, tools=[tool], callbacks=[Always])))
    assert len(tool.calls) == 3  # the default policy's stop_after_attempt(3)
    result = next(e for e in events if e.object == "tool.response")
    assert result.error is not None and result.error.type == "RetriesExhausted"
    assert result.error.where == "tool:t"
