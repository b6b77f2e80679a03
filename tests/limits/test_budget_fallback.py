"""Every attempt of every model is metered: a fallback to a model the budget was never given."""

from __future__ import annotations

import dataclasses

import pytest

from adk import LlmAgent, LlmResponse, ModelContext, Raise, Retry, Runner
from adk.callbacks.decisions import FellBack
from adk.errors import ServerError
from adk.events import ObjectType, Usage
from adk.limits import Budget
from adk.recovery import FallbackModels
from adk.testing import ScriptedModel
from tests._runtime import run

pytestmark = pytest.mark.usefixtures("testing")


def used(prompt: int, completion: int) -> LlmResponse:
    response = LlmResponse.text("cheap answer")
    response.usage = Usage(
        prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
    )
    return response


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
    cheap = ScriptedModel([used(1, 7)], name="cheap")
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
    # "hi": 1 token; each attempt is sent with max_tokens lowered to the 99 left
    assert [r.max_tokens for r in big.requests] == [99]
    assert [r.max_tokens for r in cheap.requests] == [99]
    released = {"model_calls": 0.0, "input_tokens": 0.0, "output_tokens": 0.0, "total_tokens": 0.0}
    settled = {"model_calls": 1.0, "input_tokens": 1.0, "output_tokens": 7.0, "total_tokens": 8.0}
    assert trace == [("error", "big", released), ("after", "cheap", settled)]
    answer = [e for e in events if e.object == ObjectType.CHAT_COMPLETION][-1]
    assert answer.decisions == (
        FellBack(f"callback:{recovery}.on_model_error", "model:big", "model:cheap", "ServerError", "503"),
    )
