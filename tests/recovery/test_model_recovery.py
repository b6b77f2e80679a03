"""Model-call recovery through the Runner: retries, bounds, fallbacks, streaming, cancellation."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
import tenacity

import adk.recovery.attempts
from adk import (
    LlmAgent,
    ModelContext,
    ObjectType,
    Raise,
    Retry,
    RetryPolicy,
    Runner,
)
from adk.errors import BadRequestError, RateLimitError, ServerError
from adk.recovery import CircuitBreaker, FallbackModels, FixedFallback, RetryThenFallback, Testing
from adk.testing import ScriptedModel, Stream, set_testing
from tests._runtime import run
from tests.recovery.support import Recorder

FIXED = RetryPolicy(wait=tenacity.wait_fixed(0.5))


async def test_rate_limit_honours_retry_after_then_succeeds(testing: Testing) -> None:
    model = ScriptedModel([RateLimitError("slow down", status_code=429, retry_after=2.0), "ok"])
    rec = Recorder()
    runner = Runner(LlmAgent("a", model=model), callbacks=[rec], retry_policy=FIXED)
    events = await run(runner)
    assert rec.trace == [
        ("before_model", "scripted", 1),
        ("on_model_error", "scripted:RateLimitError", 1),
        ("after_model", "scripted", 2),
    ]
    assert testing.waits == [2.0]  # Retry-After beats the policy's 0.5 s
    assert events[-2].content == "ok"
    model.assert_done()


async def test_server_errors_beyond_the_bound_exhaust_retries(testing: Testing) -> None:
    model = ScriptedModel([ServerError("boom", status_code=500)] * 3)
    rec = Recorder()
    runner = Runner(LlmAgent("a", model=model), callbacks=[rec], retry_policy=FIXED)
    events = await run(runner)
    assert rec.trace == [
        ("before_model", "scripted", 1),
        ("on_model_error", "scripted:ServerError", 1),
        ("on_model_error", "scripted:ServerError", 2),
        ("on_model_error", "scripted:ServerError", 3),
        ("on_model_error", "scripted:RetriesExhausted", 3),  # offered once, so a fallback could act
    ]
    assert testing.waits == [0.5, 0.5]
    error = events[-1].error
    assert error is not None
    assert (error.type, error.where) == ("RetriesExhausted", "model:scripted")
    assert "gave up after 3 attempt(s): ServerError: boom" in error.message
    assert events[-1].object == ObjectType.ERROR
    stored = (await runner.session_service.get("u", "s")).events  # type: ignore[union-attr]
    assert [e.object for e in stored] == [ObjectType.CHAT_COMPLETION, ObjectType.ERROR]


async def test_bad_request_is_not_retried(testing: Testing) -> None:
    model = ScriptedModel([BadRequestError("no such field", status_code=400)])
    runner = Runner(LlmAgent("a", model=model))
    events = await run(runner)
    assert len(model.requests) == 1
    assert testing.waits == []
    assert events[-1].error is not None
    assert (events[-1].error.type, events[-1].error.where) == ("BadRequestError", "model:scripted")


async def test_retry_from_a_callback_changes_the_request(testing: Testing) -> None:
    class Shorten:
        def on_model_error(self, error: Exception, ctx: ModelContext) -> Retry[ModelContext] | Raise:
            request = ctx.request.model_copy(update={"max_tokens": 10})
            return Retry(dataclasses.replace(ctx, request=request), delay=0.25)

    model = ScriptedModel([BadRequestError("too long", status_code=400), "short"])
    runner = Runner(LlmAgent("a", model=model, callbacks=[Shorten]))
    events = await run(runner)
    assert [r.max_tokens for r in model.requests] == [None, 10]
    assert testing.waits == [0.25]
    assert events[-2].content == "short"


async def test_fallback_chain_a_then_b_then_c(testing: Testing) -> None:
    a = ScriptedModel([BadRequestError("a is down", status_code=400)], name="a")
    b = ScriptedModel([ServerError("b 500", status_code=500)] * 3, name="b")
    c = ScriptedModel(["from c"], name="c")
    rec = Recorder()
    own = RetryPolicy(wait=tenacity.wait_fixed(0.25))  # its wait, not the runner's, spaces b's attempts
    agent = LlmAgent("agent", model=a, callbacks=[rec, RetryThenFallback([b, c], own)])
    events = await run(Runner(agent, retry_policy=FIXED))
    assert rec.trace == [
        ("before_model", "a", 1),
        ("on_model_error", "a:BadRequestError", 1),
        ("on_model_error", "b:ServerError", 1),
        ("on_model_error", "b:ServerError", 2),
        ("on_model_error", "b:ServerError", 3),
        ("after_model", "c", 1),
    ]
    assert testing.waits == [0.0, 0.25, 0.25, 0.0]
    assert events[-2].content == "from c"


async def test_retry_then_fallback_when_the_agent_bound_is_tighter(testing: Testing) -> None:
    # The agent's policy allows 2 attempts per model; the exhaustion is offered to the fallback.
    a = ScriptedModel([ServerError("a 500")] * 2, name="a")
    b = ScriptedModel(["from b"], name="b")
    rec = Recorder()
    policy = RetryPolicy(stop=tenacity.stop_after_attempt(2), wait=tenacity.wait_fixed(1))
    agent = LlmAgent(
        "agent",
        model=a,
        callbacks=[rec, RetryThenFallback([b], retry=RetryPolicy(stop=tenacity.stop_after_attempt(5)))],
        retry_policy=policy,
    )
    events = await run(Runner(agent))
    assert rec.trace == [
        ("before_model", "a", 1),
        ("on_model_error", "a:ServerError", 1),
        ("on_model_error", "a:ServerError", 2),
        ("on_model_error", "a:RetriesExhausted", 2),
        ("after_model", "b", 1),
    ]
    assert events[-2].content == "from b"


async def test_fallback_models_switch_at_once(testing: Testing) -> None:
    a = ScriptedModel([ServerError("a")], name="a")
    b = ScriptedModel([ServerError("b"), "from b"], name="b")
    rec = Recorder()
    events = await run(Runner(LlmAgent("agent", model=a, callbacks=[rec, FallbackModels([b])])))
    # a fails: straight to b; b fails and there is no next model: the default policy retries b.
    assert rec.trace == [
        ("before_model", "a", 1),
        ("on_model_error", "a:ServerError", 1),
        ("on_model_error", "b:ServerError", 1),
        ("after_model", "b", 2),
    ]
    assert testing.waits[0] == 0.0 and len(testing.waits) == 2
    assert events[-2].content == "from b"


async def test_fixed_fallback_response_goes_through_after_model(testing: Testing) -> None:
    rec = Recorder()
    model = ScriptedModel([BadRequestError("nope")])
    agent = LlmAgent("a", model=model, callbacks=[rec, FixedFallback("Sorry, try later.")])
    events = await run(Runner(agent))
    assert rec.trace == [
        ("before_model", "scripted", 1),
        ("on_model_error", "scripted:BadRequestError", 1),
        ("after_model", "scripted", 1),
    ]
    assert events[-2].content == "Sorry, try later."


async def test_user_callback_answering_first_wins_over_the_default_policy(testing: Testing) -> None:
    model = ScriptedModel([ServerError("500")])
    agent = LlmAgent("a", model=model, callbacks=[FixedFallback("fallback")])
    events = await run(Runner(agent))
    assert len(model.requests) == 1  # the default policy would have retried; the fallback came first
    assert events[-2].content == "fallback"


async def test_manual_policy_leaves_retrying_to_callbacks(testing: Testing) -> None:
    model = ScriptedModel([ServerError("500")])
    runner = Runner(LlmAgent("a", model=model), retry_policy=RetryPolicy(retry=tenacity.retry_never))
    events = await run(runner)
    assert len(model.requests) == 1
    assert events[-1].error is not None and events[-1].error.type == "ServerError"


async def test_discarded_streamed_attempt_is_announced_and_never_stored(testing: Testing) -> None:
    model = ScriptedModel([Stream(["Hel", "lo"], error=ServerError("cut")), "Hello world"])
    runner = Runner(LlmAgent("a", model=model), retry_policy=FIXED)
    events = await run(runner, stream=True)
    assert [(e.object, e.content) for e in events[1:]] == [
        (ObjectType.CHAT_COMPLETION_CHUNK, "Hel"),
        (ObjectType.CHAT_COMPLETION_CHUNK, "lo"),
        (ObjectType.ATTEMPT_FAILED, ""),
        (ObjectType.ATTEMPT_DISCARDED, ""),
        (ObjectType.CHAT_COMPLETION_CHUNK, "Hello"),
        (ObjectType.CHAT_COMPLETION_CHUNK, " world"),
        (ObjectType.CHAT_COMPLETION, "Hello world"),
        (ObjectType.RUNNER_COMPLETION, ""),
    ]
    discarded = events[4]
    assert discarded.is_partial and discarded.error is not None
    assert discarded.error.where == "model:scripted"
    stored = (await runner.session_service.get("u", "s")).events  # type: ignore[union-attr]
    assert [e.object for e in stored] == [ObjectType.CHAT_COMPLETION] * 2 + [ObjectType.RUNNER_COMPLETION]


async def test_circuit_breaker_opens_then_closes_after_cooldown(testing: Testing) -> None:
    now = [0.0]
    a = ScriptedModel([ServerError("1"), ServerError("2"), "a is back"], name="a")
    b = ScriptedModel(["from b", "b again"], name="b")
    breaker = CircuitBreaker(failures=2, cooldown=30, fallbacks=[b], clock=lambda: now[0])
    policy = RetryPolicy(stop=tenacity.stop_after_attempt(2), wait=tenacity.wait_fixed(0))
    runner = Runner(LlmAgent("agent", model=a, callbacks=[breaker]), retry_policy=policy)

    first = await run(runner)  # two failures on a: exhausted, and the circuit opens
    assert first[-1].error is not None and first[-1].error.type == "RetriesExhausted"
    assert breaker.is_open(a)
    second = [e async for e in runner.run("u", "s2", "hi")]  # open: goes to b, a not called
    assert second[-2].content == "from b" and len(a.requests) == 2
    now[0] = 31.0  # cool-down over: a gets a trial, succeeds, circuit closes
    third = [e async for e in runner.run("u", "s3", "hi")]
    assert third[-2].content == "a is back"
    assert not breaker.is_open(a)


async def test_cancellation_during_a_backoff_wait_leaves_nothing_behind() -> None:
    seen: list[str] = []
    waiting = asyncio.Event()

    class Slow:
        def on_model_error(self, error: Exception, ctx: ModelContext) -> Retry[ModelContext]:
            seen.append(type(error).__name__)
            waiting.set()
            return Retry(ctx, delay=3600)  # a real wait, cancelled long before it ends

    model = ScriptedModel([ServerError("500"), "never"])
    runner = Runner(LlmAgent("a", model=model, callbacks=[Slow]))
    with set_testing(False):
        task = asyncio.create_task(run(runner))
        await waiting.wait()
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert seen == ["ServerError"]
    assert len(model.requests) == 1
    assert asyncio.all_tasks() == {asyncio.current_task()}


async def test_cancelled_error_is_never_offered_to_on_model_error(testing: Testing) -> None:
    rec = Recorder()
    model = ScriptedModel([asyncio.CancelledError()])
    runner = Runner(LlmAgent("a", model=model), callbacks=[rec])
    with pytest.raises(asyncio.CancelledError):
        await run(runner)
    assert rec.trace == [("before_model", "scripted", 1)]


async def test_testing_switch_caps_attempts_and_restores() -> None:
    with set_testing(True, attempts=1) as switch:
        model = ScriptedModel([ServerError("500")])
        events = await run(Runner(LlmAgent("a", model=model)))
        assert len(model.requests) == 1
        assert events[-1].error is not None and "1 attempt(s)" in events[-1].error.message
        assert switch.waits == []
        with set_testing(False):
            assert not adk.recovery.attempts._testing.enabled
        assert adk.recovery.attempts._testing is switch
    assert adk.recovery.attempts._testing is not switch


async def test_stop_after_delay_counts_the_first_attempt(
    testing: Testing, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    clock = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])

    def slow_failure(request: object) -> str:
        clock[0] += 10  # the first attempt "takes" ten seconds, then fails
        raise ServerError("500")

    model = ScriptedModel([slow_failure, "never"])
    policy = RetryPolicy(stop=tenacity.stop_after_delay(5), wait=tenacity.wait_fixed(0))
    events = await run(Runner(LlmAgent("a", model=model), retry_policy=policy))
    assert len(model.requests) == 1  # 10 s already spent: the 5 s budget allows no retry
    assert events[-1].error is not None
    assert events[-1].error.type == "RetriesExhausted"


async def test_an_invocation_made_without_a_policy_retries_by_the_default_one(testing: Testing) -> None:
    from adk.context import Invocation
    from adk.errors import RetriesExhausted
    from adk.events import Message
    from adk.sessions.base import Session

    invocation = Invocation("inv-1", Session(id="s-1", user_id="u-1"), Message.user("hi"))
    assert invocation.retry_policy is None  # the contexts' floor makes no policy of its own
    model = ScriptedModel([ServerError("500"), ServerError("500"), ServerError("500"), "never"])
    with pytest.raises(RetriesExhausted, match=r"^gave up after 3 attempt\(s\): ServerError: 500$"):
        [e async for e in LlmAgent("a", model=model).run(invocation)]
    assert len(model.requests) == 3  # the default policy's stop: three attempts, two waits
    assert len(testing.waits) == 2
