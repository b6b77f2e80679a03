"""A `ContextOverflowError` is recovered: by default the oldest whole turns are dropped and the call
retried once; a `Compact` folds and retries; a user callback may move to a longer-context model."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import tenacity

from adk.agents import LlmAgent
from adk.callbacks.decisions import FellBack, Retried
from adk.compaction import SUMMARY, Compact
from adk.errors import ContextOverflowError
from adk.events import Event, LlmResponse, ObjectType
from adk.models.base import LlmRequest
from adk.recovery import FallbackModels, RetryPolicy, set_testing
from adk.runner import Runner
from adk.testing import ScriptedModel
from tests.context.support import WORDS, said, turn

Q = [f"q{n} {WORDS}" for n in range(6)]
REFUSED = "the request exceeds the available context size, try increasing it"


@pytest.fixture(autouse=True)
def no_waits() -> Iterator[None]:
    with set_testing(True):
        yield


def overflow() -> ContextOverflowError:
    return ContextOverflowError(REFUSED, status_code=400)


async def three_turns(runner: Runner) -> list[Event]:
    for q in Q[1:3]:
        await turn(runner, q)
    return await turn(runner, Q[3])


async def test_by_default_the_older_half_of_the_turns_is_dropped_and_the_call_retried_once() -> None:
    model = ScriptedModel(["a1", "a2", overflow(), "a3"])
    events = await three_turns(Runner(LlmAgent("a", model=model)))

    assert said(model.requests[3]) == [f"user: {Q[2]}", "assistant: a2", f"user: {Q[3]}"]
    retried = Retried(
        "callback:DropOldestTurns.on_model_error", "model:scripted", 2, 0.0, "ContextOverflowError", REFUSED
    )
    assert [(e.object, e.decisions) for e in events[1:]] == [
        (ObjectType.ATTEMPT_FAILED, (retried,)),
        (ObjectType.CHAT_COMPLETION, (retried,)),
        (ObjectType.RUNNER_COMPLETION, ()),
    ]


async def test_with_max_context_tokens_just_enough_turns_are_dropped() -> None:
    model = ScriptedModel(["a1", "a2", overflow(), "a3"])
    await three_turns(Runner(LlmAgent("a", model=model, max_context_tokens=120)))

    # [q2, a2, q3] is 51 + 1 + 51 + 12 = 115 tokens: one turn dropped is enough.
    assert said(model.requests[3]) == [f"user: {Q[2]}", "assistant: a2", f"user: {Q[3]}"]
    model = ScriptedModel(["a1", "a2", overflow(), "a3"])
    await three_turns(Runner(LlmAgent("a", model=model, max_context_tokens=60)))
    assert said(model.requests[3]) == [f"user: {Q[3]}"]


class SmallContext:
    """A server with a context of `window` tokens (by the character rule): it refuses a longer
    request, as llama.cpp does, and records what it received."""

    name = "small"

    def __init__(self, window: int) -> None:
        self.window = window
        self.requests: list[LlmRequest] = []

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        self.requests.append(request)
        if request.estimated_tokens > self.window:
            raise overflow()
        yield LlmResponse.text(f"a{len(self.requests)}")


async def nine_turns(model: SmallContext, window: int, policy: RetryPolicy | None = None) -> list[Event]:
    """Eight turns under a roomy context, then a ninth under `window`: its request is 17 messages."""
    runner = Runner(LlmAgent("a", model=model, retry_policy=policy))
    for n in range(1, 9):
        await turn(runner, f"q{n} {WORDS}")
    model.window, model.requests = window, []
    return await turn(runner, f"q9 {WORDS}")


def retried(attempt: int) -> Retried:
    return Retried("callback:DropOldestTurns.on_model_error", "model:small", attempt, 0.0, *REFUSAL)


REFUSAL = ("ContextOverflowError", REFUSED)


async def test_each_refusal_halves_the_older_turns_until_the_model_takes_the_request() -> None:
    model = SmallContext(10_000)
    events = await nine_turns(model, 150, RetryPolicy(stop=tenacity.stop_after_attempt(5)))

    # 8 older turns, then 4, 2 and 1 (115 tokens fit 150); the current turn always goes.
    assert [len(r.messages) for r in model.requests] == [17, 9, 5, 3]
    assert [r.messages[0].content[:2] for r in model.requests] == ["q1", "q5", "q7", "q8"]
    assert [(e.object, e.decisions) for e in events[1:]] == [
        (ObjectType.ATTEMPT_FAILED, (retried(2),)),
        (ObjectType.ATTEMPT_FAILED, (retried(3),)),
        (ObjectType.ATTEMPT_FAILED, (retried(4),)),
        (ObjectType.CHAT_COMPLETION, (retried(2), retried(3), retried(4))),
        (ObjectType.RUNNER_COMPLETION, ()),
    ]
    assert events[-2].content == "a4"


async def test_the_halving_stops_at_the_retry_bound() -> None:
    model = SmallContext(10_000)
    events = await nine_turns(model, 150)  # the default policy: three attempts

    assert [len(r.messages) for r in model.requests] == [17, 9, 5]
    error = events[-1].error
    assert events[-1].object == ObjectType.ERROR and error is not None
    assert (error.type, error.message) == (
        "RetriesExhausted",
        f"gave up after 3 attempt(s): ContextOverflowError: {REFUSED}",
    )


async def test_the_current_turn_alone_refused_stands() -> None:
    model = SmallContext(10_000)
    events = await nine_turns(model, 40, RetryPolicy(stop=tenacity.stop_after_attempt(10)))

    # q9 alone is 55 tokens: after it, nothing is left to drop.
    assert [len(r.messages) for r in model.requests] == [17, 9, 5, 3, 1]
    error = events[-1].error
    assert error is not None and (error.type, error.message) == REFUSAL


async def test_a_compact_folds_into_a_summary_and_retries_and_the_fold_is_stored() -> None:
    summarizer = ScriptedModel(["S"], name="summarizer")
    model = ScriptedModel(["a1", "a2", overflow(), "a3", "a4"])
    runner = Runner(LlmAgent("a", model=model, callbacks=[Compact(keep_last=1, summarize=summarizer)]))
    events = await three_turns(runner)

    # Without a threshold nothing is folded before the refusal; after it, all but the current turn.
    assert said(model.requests[2]) == [
        f"user: {Q[1]}",
        "assistant: a1",
        f"user: {Q[2]}",
        "assistant: a2",
        f"user: {Q[3]}",
    ]
    assert said(model.requests[3]) == [f"user: {SUMMARY}S", f"user: {Q[3]}"]
    assert [e.object for e in events[1:]] == [
        ObjectType.ATTEMPT_FAILED,
        ObjectType.COMPACTION,  # stored before the retry's response
        ObjectType.CHAT_COMPLETION,
        ObjectType.RUNNER_COMPLETION,
    ]
    assert events[1].decisions[0].by == "callback:Compact.on_model_error"
    assert events[2].decisions[0].by == "callback:Compact.on_model_error"
    # The fold is stored: the next turn reads from it, and is not refused.
    await turn(runner, Q[4])
    assert said(model.requests[4]) == [f"user: {SUMMARY}S", f"user: {Q[3]}", "assistant: a3", f"user: {Q[4]}"]


async def test_a_failed_summary_lets_the_request_go_on_and_an_overflow_names_both_causes() -> None:
    summarizer = ScriptedModel([RuntimeError("summary server down")], name="summarizer")
    model = ScriptedModel(["a1", "a2", overflow()])
    runner = Runner(
        LlmAgent(
            "a", model=model, callbacks=[Compact(keep_last=0, summarize=summarizer, threshold_tokens=150)]
        )
    )
    events = await three_turns(runner)

    assert said(model.requests[2]) == [
        f"user: {Q[1]}",
        "assistant: a1",
        f"user: {Q[2]}",
        "assistant: a2",
        f"user: {Q[3]}",
    ]
    error = events[-1].error
    assert error is not None and error.type == "ContextOverflowError"
    assert error.message == (
        f"{REFUSED}; and compaction could not shorten it: the summary model failed:"
        " RuntimeError: summary server down"
    )


async def test_a_user_callback_may_fall_back_to_a_model_with_a_longer_context() -> None:
    model = ScriptedModel(["a1", "a2", overflow()])
    longer = ScriptedModel(["a3"], name="longer")
    events = await three_turns(
        Runner(LlmAgent("a", model=model, callbacks=[FallbackModels([model, longer])]))
    )

    assert said(longer.requests[0]) == said(model.requests[2])
    assert events[-2].decisions == (
        FellBack(
            "callback:FallbackModels.on_model_error",
            "model:scripted",
            "model:longer",
            "ContextOverflowError",
            REFUSED,
        ),
    )
