"""Every attempt of every model is metered: a fallback to a model the budget was never given."""

from __future__ import annotations

import dataclasses

import pytest

from adk import LlmAgent, LlmResponse, ModelContext, Raise, Retry, Runner
from adk.callbacks.decisions import BudgetExceeded, FellBack
from adk.errors import ServerError
from adk.events import ObjectType, Usage
from adk.limits import Budget
from adk.recovery import FallbackModels
from adk.testing import ScriptedModel, call_tool
from tests._runtime import run
from tests.limits import used

pytestmark = pytest.mark.usefixtures("testing")


class ToCheap:
    """An application's own recovery: on any failure, the same request to `cheap`."""

    def __init__(self, cheap: ScriptedModel) -> None:
        self.cheap = cheap

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Retry[ModelContext] | Raise:
        if ctx.model is self.cheap:
            return Raise(error)
        return Retry(dataclasses.replace(ctx, model=self.cheap), delay=0.0)


@pytest.mark.parametrize("recovery", ["FallbackModels", "ToCheap"])
async def test_a_fallback_to_an_unwrapped_model_is_reserved_and_settled(recovery: str) -> None:
    big = ScriptedModel([ServerError("503")], name="big")
    cheap = ScriptedModel([used(1, 7, "cheap answer")], name="cheap")
    budget = Budget(total_tokens=100, warn_at=1)
    trace: list[tuple[str, str, dict[str, float]]] = []

    class Watch:
        def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
            trace.append(("error", ctx.model.name, budget.report(ctx.invocation)))
            return Raise(error)

        def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
            trace.append(("after", ctx.model.name, budget.report(ctx.invocation)))
            return response

    switch = FallbackModels([cheap]) if recovery == "FallbackModels" else ToCheap(cheap)
    agent = LlmAgent("a", model=big, callbacks=[Watch(), switch])
    events = await run(Runner(agent, callbacks=[budget]))
    # "hi": 5 tokens (1 of text, 4 for the message); each attempt is sent with max_tokens lowered
    # to the 95 left
    assert [r.max_tokens for r in big.requests] == [95]
    assert [r.max_tokens for r in cheap.requests] == [95]
    released = {"model_calls": 0.0, "input_tokens": 0.0, "output_tokens": 0.0, "total_tokens": 0.0}
    settled = {"model_calls": 1.0, "input_tokens": 1.0, "output_tokens": 7.0, "total_tokens": 8.0}
    assert trace == [("error", "big", released), ("after", "cheap", settled)]
    answer = [e for e in events if e.object == ObjectType.CHAT_COMPLETION][-1]
    assert answer.decisions == (
        FellBack(f"callback:{recovery}.on_model_error", "model:big", "model:cheap", "ServerError", "503"),
    )


async def test_two_budgets_reserve_in_turn_and_a_refusal_releases_the_first() -> None:
    first = call_tool("echo", call_id="c1", x=1)
    first.usage = Usage(prompt_tokens=1, completion_tokens=2, total_tokens=3)
    model = ScriptedModel([first, used(1, 1)])
    tokens, calls = Budget(total_tokens=1000, name="tokens"), Budget(model_calls=1, name="calls")
    reports: list[dict[str, float]] = []

    class Watch:
        def on_model_error(self, error: Exception, ctx: ModelContext) -> Raise:
            reports.append(tokens.report(ctx.invocation))
            return Raise(error)

    def echo(x: int) -> int:
        """Echo x."""
        return x

    agent = LlmAgent("a", model=model, tools=[echo], callbacks=[Watch()])
    events = await run(Runner(agent, callbacks=[tokens, calls]))
    prompt = model.requests[0].estimated_tokens
    assert [r.max_tokens for r in model.requests] == [1000 - prompt]  # the second call is refused
    # what "tokens" reserved for the refused call was released: only the first call is counted
    first_call = {"model_calls": 1.0, "input_tokens": 1.0, "output_tokens": 2.0, "total_tokens": 3.0}
    assert reports == [{**first_call, "tool_calls": 1.0, "tool:echo": 1.0}]
    assert events[-1].decisions == (
        BudgetExceeded("callback:Budget.on_model_error", "model:scripted", "calls", "model_calls", 1.0, 1.0),
    )
