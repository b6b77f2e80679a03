"""A server's sampling request whose model call fails goes through the agent's `on_model_error`:
`Retry` and `Fallback` are honoured, bounded by the retry policy; an unrecovered failure is
refused in one line. Against `server-everything`'s `trigger-sampling-request`."""

from __future__ import annotations

import json
from typing import Any

import tenacity

from adk import LlmAgent, ModelContext, Runner
from adk.callbacks.decisions import FellBack, Halted, Replaced, Retried
from adk.callbacks.results import Cont, Fallback, Halt, Raise, Retry
from adk.context import current_tool_call_id
from adk.events import Event, LlmResponse, ObjectType
from adk.recovery import RetryPolicy
from adk.testing import ScriptedModel
from tests._runtime import call, calls
from tests.mcp.servers import npm_server
from tests.mcp.test_protocol import Guard, tool_text

SAMPLE = calls(call("trigger-sampling-request", "c1", prompt="what is 2+2?"))


class Recovering(Guard):
    """Traces `on_model_error` during the MCP call, and answers it as `decide` says."""

    def __init__(self, decide: str) -> None:
        super().__init__("cb", [])
        self.decide = decide

    def on_model_error(
        self, error: Exception, ctx: ModelContext
    ) -> Retry[ModelContext] | Fallback[LlmResponse] | Raise:
        self.trace.append(("on_model_error", current_tool_call_id(), type(error).__name__, ctx.attempt))
        match self.decide:
            case "retry":
                return Retry(ctx, delay=0.0)
            case "fallback":
                return Fallback(LlmResponse.text("four, said the fallback"))
            case _:
                return Raise(error)


async def sampled(hooks: Recovering, *answers: Any) -> tuple[list[tuple[Any, ...]], list[Event]]:
    model = ScriptedModel([SAMPLE, *answers, "done"])
    policy = RetryPolicy(stop=tenacity.stop_after_attempt(2), retry=tenacity.retry_never)
    agent = LlmAgent("a", model=model, tools=[npm_server("server-everything", "stdio", sampling=True)])
    async with Runner(agent, callbacks=[hooks], retry_policy=policy) as runner:
        events = [e async for e in runner.run("u", "s", "hi")]
    model.assert_done()
    return [t for t in hooks.trace if t[1] == "c1"], events


def answer_of(events: list[Event]) -> Any:
    (response,) = [e for e in events if e.object == ObjectType.TOOL_RESPONSE]
    return response.content


def decisions_of(events: list[Event]) -> tuple[Any, ...]:
    """The decisions on the tool call's result event: the sampling happened during that call."""
    (response,) = [e for e in events if e.object == ObjectType.TOOL_RESPONSE]
    return response.decisions


BY = "callback:Recovering"
MODEL = "model:scripted"
CHECKED = Replaced(f"{BY}.after_model", MODEL)
"""The guard's `after_model` marks the sampled text `[checked]`."""


async def test_a_failed_sampling_attempt_is_retried_by_on_model_error() -> None:
    hooks = Recovering("retry")
    trace, events = await sampled(hooks, RuntimeError("model down"), "four")
    asked = [("user", "Resource trigger-sampling-request context: what is 2+2?")]
    assert trace == [
        ("before_model", "c1", "You are a helpful test server.", asked),
        ("on_model_error", "c1", "RuntimeError", 1),
        ("after_model", "c1", "four"),
    ]
    (result,) = [t[2] for t in hooks.trace if t[0] == "after_tool"]
    sampled_text = json.loads(tool_text(result).removeprefix("LLM sampling result: \n"))["content"]["text"]
    assert sampled_text == "four [checked]"
    assert decisions_of(events) == (
        Retried(f"{BY}.on_model_error", MODEL, 2, 0.0, "RuntimeError", "model down"),
        CHECKED,
    )


async def test_a_fallback_answers_the_server_through_after_model() -> None:
    hooks = Recovering("fallback")
    trace, events = await sampled(hooks, RuntimeError("model down"))
    assert [t[0] for t in trace] == ["before_model", "on_model_error", "after_model"]
    assert trace[-1] == ("after_model", "c1", "four, said the fallback")
    assert '"text": "four, said the fallback [checked]"' in answer_of(events)
    assert decisions_of(events) == (
        FellBack(f"{BY}.on_model_error", MODEL, None, "RuntimeError", "model down"),
        CHECKED,
    )


async def test_retries_are_bounded_by_the_policy_and_the_failure_is_refused_in_one_line() -> None:
    hooks = Recovering("retry")
    trace, events = await sampled(hooks, RuntimeError("model down"), RuntimeError("still down"))
    assert trace[1:] == [
        ("on_model_error", "c1", "RuntimeError", 1),
        ("on_model_error", "c1", "RuntimeError", 2),
        ("on_model_error", "c1", "RetriesExhausted", 2),  # offered once more: a fallback may still answer
    ]
    assert answer_of(events) == (
        "Error: McpToolError: MCP server 'server-everything', tool 'trigger-sampling-request': MCP error "
        "-32600: sampling failed: RetriesExhausted: gave up after 2 attempt(s): RuntimeError: still down"
    )
    # the retry the policy allowed; the exhausted one is the refusal's line
    assert decisions_of(events) == (
        Retried(f"{BY}.on_model_error", MODEL, 2, 0.0, "RuntimeError", "model down"),
    )


class Halting(Recovering):
    """Answers the sampling request itself in `before_model`: the model is not called."""

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext] | Halt[LlmResponse]:  # type: ignore[override]
        if current_tool_call_id() is None:  # the agent's own turns
            return Cont(ctx)
        self.trace.append(("before_model", current_tool_call_id()))
        return Halt(LlmResponse.text("not today"))


async def test_a_before_model_halt_answers_the_server_and_is_a_decision_on_the_call() -> None:
    hooks = Halting("raise")
    trace, events = await sampled(hooks)
    assert trace == [("before_model", "c1")]
    assert '"text": "not today"' in answer_of(events)
    assert decisions_of(events) == (Halted("callback:Halting.before_model", MODEL),)


async def test_a_budget_meters_what_a_server_samples_and_refuses_it_once_spent() -> None:
    # The agent's turn, the sampled call and the answer after the tool: three model calls asked.
    from adk.limits import Budget

    for allowed, sampled_ran in ((3, True), (1, False)):
        budget = Budget(model_calls=allowed)
        model = ScriptedModel([SAMPLE, "four", "done"] if sampled_ran else [SAMPLE])
        agent = LlmAgent("a", model=model, tools=[npm_server("server-everything", "stdio", sampling=True)])
        async with Runner(agent, callbacks=[budget]) as runner:
            events = [e async for e in runner.run("u", "s", "hi")]
        model.assert_done()
        if sampled_ran:
            assert '"text": "four"' in answer_of(events)
            assert events[-1].object == ObjectType.RUNNER_COMPLETION
        else:  # the turn's one call spent it: the server's request is refused, never made
            assert "sampling failed: BudgetExceededError" in answer_of(events)
