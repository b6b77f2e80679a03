"""`Defer(reason)`, before_tool's third answer: how it combines with `Halt`, approvals and errors (rule 6)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from adk.callbacks import Cont, Defer, Halt, run_before
from adk.context import ToolContext
from adk.errors import CallbackError
from tests.callbacks.contexts import model_context, tool_context
from tests.callbacks.scripted import Scripted, Trace


def cont(ctx: ToolContext) -> Cont[ToolContext]:
    return Cont(ctx)


def defer(reason: str) -> Any:
    return lambda ctx: Defer(reason)


def halt(value: object) -> Any:
    return lambda ctx: Halt(value)


def names(trace: Trace) -> list[str]:
    return [name for name, *_ in trace]


async def test_the_first_defer_stops_the_chain_by_default() -> None:
    trace: Trace = []
    callbacks = [
        Scripted("a", trace, before_tool=cont),
        Scripted("b", trace, before_tool=defer("large")),
        Scripted("c", trace, before_tool=halt("denied")),
    ]
    assert await run_before(callbacks, "before_tool", tool_context(amount=5000)) == Defer("large")
    assert names(trace) == ["a", "b"]


@pytest.mark.parametrize("order", ["halt first", "defer first"])
async def test_under_continue_on_response_a_halt_beats_a_defer_whatever_the_order(order: str) -> None:
    trace: Trace = []
    answers = [defer("large"), halt("denied")]
    if order == "halt first":
        answers.reverse()
    callbacks = [Scripted(n, trace, before_tool=a) for n, a in zip("ab", answers, strict=True)]
    callbacks.append(Scripted("c", trace, before_tool=cont))
    result = await run_before(callbacks, "before_tool", tool_context(), continue_on_response=True)
    assert result == Halt("denied")
    assert names(trace) == ["a", "b", "c"]


async def test_under_continue_on_response_the_last_defer_wins_over_an_earlier_one() -> None:
    callbacks = [Scripted(n, [], before_tool=defer(n)) for n in "ab"]
    assert await run_before(callbacks, "before_tool", tool_context(), continue_on_response=True) == Defer("b")


async def test_on_an_approved_call_a_defer_goes_on_and_later_callbacks_still_decide() -> None:
    trace: Trace = []
    approved = replace(tool_context(amount=5000), approved=True)
    callbacks = [Scripted("a", trace, before_tool=defer("large")), Scripted("b", trace, before_tool=cont)]
    assert await run_before(callbacks, "before_tool", approved) == Cont(approved)
    assert names(trace) == ["a", "b"]
    guarded = [Scripted("a", [], before_tool=defer("large")), Scripted("b", [], before_tool=halt("denied"))]
    assert await run_before(guarded, "before_tool", approved) == Halt("denied")


async def test_an_error_beats_a_defer_kept_under_continue_on_response() -> None:
    def boom(ctx: ToolContext) -> Any:
        raise RuntimeError("down")

    callbacks = [Scripted("a", [], before_tool=defer("large")), Scripted("b", [], before_tool=boom)]
    with pytest.raises(CallbackError, match="callback Scripted failed in before_tool: raised RuntimeError"):
        await run_before(callbacks, "before_tool", tool_context(), continue_on_response=True)
    # With continue_on_error the response wins over the failure.
    result = await run_before(
        callbacks, "before_tool", tool_context(), continue_on_response=True, continue_on_error=True
    )
    assert result == Defer("large")


async def test_only_before_tool_may_defer_and_its_reason_must_be_text() -> None:
    model = [Scripted("a", [], before_model=lambda ctx: Defer("no"))]
    with pytest.raises(CallbackError) as caught:
        await run_before(model, "before_model", model_context())
    assert str(caught.value) == (
        "callback Scripted failed in before_model: returned Defer(reason='no'); "
        "before_model may return only Cont or Halt"
    )
    tool = [Scripted("a", [], before_tool=lambda ctx: Defer(42))]  # type: ignore[arg-type]
    with pytest.raises(CallbackError) as caught:
        await run_before(tool, "before_tool", tool_context())
    assert str(caught.value) == (
        "callback Scripted failed in before_tool: returned Defer(reason=42); "
        "the reason of a Defer from before_tool must be a str, not int"
    )
