"""Refuse a successful answer: an after_model hook raises `ResponseRejected` (docs/limits.md).

The answer is not used; on_model_error judges the rejection like a failed call (Retry with a
changed request, Fallback, Raise), the retry policy bounds it, and `Refused` records it.
"""

from __future__ import annotations

import dataclasses

import pytest

from adk import Event, LlmAgent, LlmResponse, Message, ModelContext, Raise, Retry, Runner
from adk.callbacks.decisions import FellBack, Refused, Retried
from adk.errors import ResponseRejected
from adk.recovery import FixedFallback, Testing
from adk.testing import ScriptedModel
from tests.recovery.support import Recorder

pytestmark = pytest.mark.usefixtures("testing")


class NoEmptyAnswer:
    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        if not response.content:
            raise ResponseRejected("empty answer")
        return response


class AskAgain:
    """Retries a rejected answer once more with a note to the model; records what it saw."""

    def __init__(self) -> None:
        self.seen: list[tuple[str | None, str, int]] = []

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Retry[ModelContext] | Raise:
        if not isinstance(error, ResponseRejected):
            return Raise(error)
        self.seen.append((error.callback, error.reason, ctx.attempt))
        note = Message.user(f"Your answer was refused: {error.reason}. Answer again.")
        request = dataclasses.replace(ctx.request, messages=[*ctx.request.messages, note])
        return Retry(dataclasses.replace(ctx, request=request), delay=0.0)


REFUSED = Refused("callback:NoEmptyAnswer.after_model", "model:m", "empty answer")


async def run(runner: Runner, stream: bool = False) -> list[Event]:
    return [e async for e in runner.run("u", "s", "hi", stream=stream)]


async def test_a_refused_answer_is_retried_with_a_changed_request() -> None:
    rec, again = Recorder(), AskAgain()
    model = ScriptedModel(["", "hello"], name="m")
    events = await run(Runner(LlmAgent("a", model=model, callbacks=[rec, NoEmptyAnswer(), again])))
    assert rec.trace == [
        ("before_model", "m", 1),
        ("after_model", "m", 1),
        ("on_model_error", "m:ResponseRejected", 1),
        ("after_model", "m", 2),
    ]
    assert again.seen == [("NoEmptyAnswer.after_model", "empty answer", 1)]
    assert model.requests[1].messages[-1].content == "Your answer was refused: empty answer. Answer again."
    retried = Retried(
        "callback:AskAgain.on_model_error", "model:m", 2, 0.0, "ResponseRejected", "empty answer"
    )
    failed = next(e for e in events if e.object == "attempt.failed")
    assert failed.decisions == (REFUSED, retried)
    assert failed.error is not None
    assert (failed.error.type, failed.error.where) == (
        "ResponseRejected",
        "callback:NoEmptyAnswer.after_model",
    )
    answer = events[-2]
    assert (answer.content, answer.decisions) == ("hello", (REFUSED, retried))


async def test_a_refused_answer_nobody_recovers_ends_the_run_with_the_rejection() -> None:
    model = ScriptedModel([""], name="m")
    events = await run(Runner(LlmAgent("a", model=model, callbacks=[NoEmptyAnswer()])))
    error = events[-1].error
    assert error is not None
    assert (error.type, error.message, error.where) == (
        "ResponseRejected",
        "empty answer",
        "callback:NoEmptyAnswer.after_model",
    )
    assert events[-1].decisions == (REFUSED,)
    assert [e.content for e in events if e.object == "chat.completion"] == ["hi"]  # the answer was not used


async def test_a_fallback_stands_in_for_a_refused_answer() -> None:
    model = ScriptedModel([""], name="m")
    callbacks = [NoEmptyAnswer(), FixedFallback("sorry")]
    events = await run(Runner(LlmAgent("a", model=model, callbacks=callbacks)))
    fell = FellBack(
        "callback:FixedFallback.on_model_error", "model:m", None, "ResponseRejected", "empty answer"
    )
    assert (events[-2].content, events[-2].decisions) == ("sorry", (REFUSED, fell))


async def test_a_refused_fallback_ends_the_call_rather_than_looping() -> None:
    model = ScriptedModel([""], name="m")
    callbacks = [NoEmptyAnswer(), FixedFallback("")]
    events = await run(Runner(LlmAgent("a", model=model, callbacks=callbacks)))
    error = events[-1].error
    assert error is not None
    assert (error.type, error.where) == ("ResponseRejected", "callback:NoEmptyAnswer.after_model")
    fell = FellBack(
        "callback:FixedFallback.on_model_error", "model:m", None, "ResponseRejected", "empty answer"
    )
    assert events[-1].decisions == (REFUSED, fell, REFUSED)


async def test_the_retry_policy_bounds_rejections(testing: Testing) -> None:
    again = AskAgain()
    model = ScriptedModel(["", "", ""], name="m")
    events = await run(Runner(LlmAgent("a", model=model, callbacks=[NoEmptyAnswer(), again])))
    assert [attempt for _, _, attempt in again.seen] == [1, 2, 3]
    error = events[-1].error
    assert error is not None
    assert (error.type, error.message) == (
        "RetriesExhausted",
        "gave up after 3 attempt(s): ResponseRejected: empty answer",
    )
    model.assert_done()


async def test_a_refused_streamed_answer_is_discarded() -> None:
    model = ScriptedModel(["hi", "hello"], name="m")  # "hi" streams as one chunk, then is refused

    class NoShortAnswer:
        def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
            if response.content != "hello":
                raise ResponseRejected("too short")
            return response

    runner = Runner(LlmAgent("a", model=model, callbacks=[NoShortAnswer(), AskAgain()]))
    events = await run(runner, stream=True)
    assert [e.object for e in events[1:]] == [
        "chat.completion.chunk",
        "attempt.failed",
        "attempt.discarded",
        "chat.completion.chunk",
        "chat.completion",
        "runner.completion",
    ]
    assert events[-2].content == "hello"


def test_refused_round_trips_through_event_json() -> None:
    event = Event.new("inv", "agent", decisions=(REFUSED,))
    text = event.model_dump_json()
    assert '"kind":"refused"' in text
    assert Event.model_validate_json(text).decisions == (REFUSED,)
