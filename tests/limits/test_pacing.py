"""Rate pacing: `RateLimit` makes model calls wait (through the testing switch) for capacity,
shared by every run that uses it, and holds every call back after a server's Retry-After."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import tenacity

from adk import Event, LlmAgent, LlmResponse, RetryPolicy, Runner
from adk.callbacks.decisions import Paced
from adk.errors import RateLimitError, ServerError
from adk.events import Usage
from adk.limits import RateLimit
from adk.recovery import CircuitBreaker, Testing, set_testing
from adk.sessions import InMemorySessionService
from adk.testing import ScriptedModel

BY = "callback:RateLimit.before_model"


def runner(pace: RateLimit, answers: list[Any], **kw: Any) -> Runner:
    model = ScriptedModel(answers, name="m")
    return Runner(LlmAgent("a", model=model), callbacks=[pace], **kw)


async def run(r: Runner, session: str) -> list[Event]:
    return [e async for e in r.run("u", session, "hi")]


def paced(events: list[Event]) -> list[float]:
    return [d.wait for e in events for d in e.decisions if isinstance(d, Paced)]


async def test_requests_are_spaced_across_runs_and_each_wait_is_a_decision(testing: Testing) -> None:
    pace = RateLimit(requests_per_minute=60)
    r = runner(pace, ["one", "two", "three"])
    first, second, third = [await run(r, s) for s in ("s1", "s2", "s3")]
    assert paced(first) == []
    assert paced(second) == [pytest.approx(1.0, abs=0.05)]
    assert paced(third) == [pytest.approx(1.0, abs=0.05)]
    assert testing.waits == [pytest.approx(1.0, abs=0.05)] * 2
    decision = second[-2].decisions[0]
    assert (decision.by, decision.target, decision.kind) == (BY, "model:m", "paced")


async def test_concurrent_runs_queue_for_capacity(testing: Testing) -> None:
    pace = RateLimit(requests_per_minute=30, clock=lambda: 100.0)  # all three asked at once
    r = runner(pace, ["a", "b", "c"])
    results = await asyncio.gather(*(run(r, s) for s in ("s1", "s2", "s3")))
    assert sorted(w for events in results for w in paced(events)) == [2.0, 4.0]  # one every 2 s
    assert sorted(testing.waits) == [2.0, 4.0]


async def test_tokens_reported_over_the_rate_hold_the_next_call_back(testing: Testing) -> None:
    pace = RateLimit(tokens_per_minute=1000)
    heavy = LlmResponse.text(
        "long", usage=Usage(prompt_tokens=1400, completion_tokens=100, total_tokens=1500)
    )
    r = runner(pace, [heavy, "next"])
    assert paced(await run(r, "s1")) == []
    assert paced(await run(r, "s2")) == [pytest.approx(30.0, abs=0.05)]  # 500 over, at 1000 a minute


async def test_a_servers_retry_after_holds_every_run_back(testing: Testing) -> None:
    pace = RateLimit()
    no_retry = RetryPolicy(retry=tenacity.retry_never)
    r = runner(pace, [RateLimitError("429", status_code=429, retry_after=20), "later"], retry_policy=no_retry)
    first = await run(r, "s1")
    assert first[-1].error is not None and first[-1].error.type == "RateLimitError"
    second = await run(r, "s2")  # another run, which never saw the 429
    assert paced(second) == [pytest.approx(20.0, abs=0.05)]
    assert second[-2].content == "later"


async def test_a_servers_retry_after_holds_calls_back_no_longer_than_max_retry_after(
    testing: Testing,
) -> None:
    pace = RateLimit(max_retry_after=30, clock=lambda: 0.0)
    no_retry = RetryPolicy(retry=tenacity.retry_never)
    day = RateLimitError("429", status_code=429, retry_after=86_400)  # a proxy's, or an attacker's
    r = runner(pace, [day, "later"], retry_policy=no_retry)
    await run(r, "s1")
    second = await run(r, "s2")
    assert paced(second) == [30.0]  # not a day: max_wait would have refused every call till then
    assert testing.waits == [30.0]
    assert second[-2].content == "later"


async def test_a_call_that_would_wait_past_max_wait_is_not_made(testing: Testing) -> None:
    pace = RateLimit(requests_per_minute=1, max_wait=5, clock=lambda: 0.0)
    model = ScriptedModel(["one"], name="m")
    r = Runner(LlmAgent("a", model=model), callbacks=[pace])
    await run(r, "s1")
    events = await run(r, "s2")
    error = events[-1].error
    assert error is not None
    assert (error.type, error.where) == ("CallbackError", "callback:RateLimit.before_model")
    assert error.message == (
        "callback RateLimit failed in before_model: raised RateLimitError: no capacity for model 'm'"
        " within max_wait=5 s (the next in 60.00 s)"
    )
    assert len(model.requests) == 1
    assert testing.waits == []


@pytest.mark.parametrize(
    ("argument", "bad"),
    [
        ("requests_per_minute", 0),
        ("tokens_per_minute", -5),
        ("max_wait", 0),
        ("requests_per_minute", "10"),
        ("max_retry_after", -1),
    ],
)
def test_a_rate_not_above_zero_is_refused_where_it_is_given(argument: str, bad: Any) -> None:
    with pytest.raises(ValueError, match=r"^RateLimit: ") as raised:
        RateLimit(**{argument: bad})
    assert str(raised.value) == f"RateLimit: {argument} must be a number above 0, got {bad!r}"


@pytest.mark.parametrize(
    ("argument", "bad", "why"),
    [
        ("failures", 0, "a whole number above 0"),
        ("failures", 2.5, "a whole number above 0"),
        ("cooldown", 0, "a number of seconds above 0"),
        ("cooldown", -1.0, "a number of seconds above 0"),
    ],
)
def test_a_breaker_with_no_failures_or_cooldown_is_refused(argument: str, bad: Any, why: str) -> None:
    with pytest.raises(ValueError, match=r"^CircuitBreaker: ") as raised:
        CircuitBreaker(**{argument: bad})
    assert str(raised.value) == f"CircuitBreaker: {argument} must be {why}, got {bad!r}"


@pytest.mark.parametrize("make", [RateLimit, CircuitBreaker])
def test_a_store_that_keeps_no_shared_limits_is_refused_where_it_is_given(make: Any) -> None:
    with pytest.raises(ValueError, match=r": store must be") as raised:
        make(store="postgresql://db")
    assert str(raised.value) == (
        f"{make.__name__}: store must be a session store that keeps shared limits (InMemorySessionService,"
        " SqliteSessionService, PostgresSessionService), got 'postgresql://db'"
    )


async def test_two_breakers_on_one_store_share_the_circuit() -> None:
    store = InMemorySessionService()
    a, b = ScriptedModel([ServerError("1")], name="a"), ScriptedModel(["from b"], name="b")
    first = CircuitBreaker(failures=1, fallbacks=[b], store=store, clock=lambda: 0.0)
    second = CircuitBreaker(failures=1, fallbacks=[b], store=store, clock=lambda: 1.0)
    with set_testing(True, attempts=1):
        failed = [e async for e in Runner(LlmAgent("x", model=a), callbacks=[first]).run("u", "s1", "hi")]
        served = [e async for e in Runner(LlmAgent("y", model=a), callbacks=[second]).run("u", "s2", "hi")]
    assert failed[-1].error is not None and failed[-1].error.type == "RetriesExhausted"
    assert served[-2].content == "from b" and len(a.requests) == 1
    assert await second.opened(a) and not await second.opened(b)
    with pytest.raises(ValueError, match=r"^CircuitBreaker.is_open: this breaker's state is in its store"):
        second.is_open(a)
