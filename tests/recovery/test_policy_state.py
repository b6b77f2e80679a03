"""Recovery policies judge on their own tenacity state: one per envelope, model and policy.

Waits are never slept (the testing switch records them and advances the retry clock by them);
`time.monotonic` is frozen so that delay-based stops see only those waits.
"""

from __future__ import annotations

import time

import pytest
import tenacity

from adk import LlmAgent, ModelContext, Retry, RetryPolicy, Runner
from adk.callbacks.decisions import FellBack, Retried
from adk.errors import RateLimitError, ServerError
from adk.recovery import RetryThenFallback, Testing
from adk.testing import ScriptedModel
from tests._runtime import run
from tests.recovery.support import Recorder

RUNNER = RetryPolicy(stop=tenacity.stop_after_attempt(6), wait=tenacity.wait_fixed(0.3))


@pytest.fixture(autouse=True)
def frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time, "monotonic", lambda: 1000.0)


def on_a(trace: list[tuple[str, str, int]]) -> list[int]:
    return [attempt for hook, model, attempt in trace if hook == "on_model_error" and model.startswith("a:")]


async def test_retry_then_fallback_follows_its_own_delay_and_wait_not_the_runners(testing: Testing) -> None:
    # The case: a was called 6 times, 0.3 s apart (the runner's policy), ignoring its own.
    a = ScriptedModel([ServerError("a 503")] * 6, name="a")
    b = ScriptedModel(["from b"], name="b")
    own = RetryPolicy(stop=tenacity.stop_after_delay(0.05), wait=tenacity.wait_fixed(0.02))
    rec = Recorder()
    agent = LlmAgent("agent", model=a, callbacks=[rec, RetryThenFallback([b], retry=own)])
    events = await run(Runner(agent, retry_policy=RUNNER))
    # failures at 0, 0.02, 0.04 are within 0.05 s; the one at 0.06 is not: on to b at once
    assert on_a(rec.trace) == [1, 2, 3, 4]
    assert testing.waits == [0.02, 0.02, 0.02, 0.0]
    assert events[-2].content == "from b"
    retried = Retried("callback:RetryThenFallback.on_model_error", "model:a", 2, 0.02, "ServerError", "a 503")
    assert events[-2].decisions == (
        retried,
        Retried(retried.by, "model:a", 3, 0.02, "ServerError", "a 503"),
        Retried(retried.by, "model:a", 4, 0.02, "ServerError", "a 503"),
        FellBack(retried.by, "model:a", "model:b", "ServerError", "a 503"),
    )


async def test_each_model_has_its_own_state(testing: Testing) -> None:
    # wait_exponential reads the attempt number: it starts again on b.
    a = ScriptedModel([ServerError("a")] * 3, name="a")
    b = ScriptedModel([ServerError("b"), ServerError("b"), "from b"], name="b")
    own = RetryPolicy(stop=tenacity.stop_after_attempt(3), wait=tenacity.wait_exponential(multiplier=1))
    agent = LlmAgent("agent", model=a, callbacks=[RetryThenFallback([b], retry=own)])
    events = await run(Runner(agent, retry_policy=RUNNER))
    assert testing.waits == [1.0, 2.0, 0.0, 1.0, 2.0]
    assert events[-2].content == "from b"


async def test_stop_before_delay_sees_the_upcoming_wait_as_in_tenacity(testing: Testing) -> None:
    # tenacity computes the wait before asking stop: 0.08 s gone + 0.04 to wait reaches 0.1.
    a = ScriptedModel([ServerError("a")] * 3, name="a")
    b = ScriptedModel(["from b"], name="b")
    own = RetryPolicy(stop=tenacity.stop_before_delay(0.1), wait=tenacity.wait_fixed(0.04))
    rec = Recorder()
    agent = LlmAgent("agent", model=a, callbacks=[rec, RetryThenFallback([b], retry=own)])
    await run(Runner(agent, retry_policy=RUNNER))
    assert on_a(rec.trace) == [1, 2, 3]
    assert testing.waits == [0.04, 0.04, 0.0]


async def test_its_own_predicate_decides_what_it_retries(testing: Testing) -> None:
    a = ScriptedModel([RateLimitError("429"), ServerError("503")], name="a")
    b = ScriptedModel(["from b"], name="b")
    only_rate_limits = RetryPolicy(
        retry=tenacity.retry_if_exception_type(RateLimitError), wait=tenacity.wait_fixed(0.5)
    )
    agent = LlmAgent("agent", model=a, callbacks=[RetryThenFallback([b], retry=only_rate_limits)])
    events = await run(Runner(agent, retry_policy=RUNNER))
    assert testing.waits == [0.5, 0.0]  # the 429 retried after its wait; the 503 goes to b at once
    assert events[-2].content == "from b"


async def test_the_bounding_policy_still_bounds_a_looser_policy(testing: Testing) -> None:
    a = ScriptedModel([ServerError("a")] * 2, name="a")
    b = ScriptedModel(["from b"], name="b")
    loose = RetryPolicy(stop=tenacity.stop_after_attempt(10), wait=tenacity.wait_fixed(0.1))
    tight = RetryPolicy(stop=tenacity.stop_after_attempt(2), wait=tenacity.wait_fixed(5))
    rec = Recorder()
    agent = LlmAgent("agent", model=a, callbacks=[rec, RetryThenFallback([b], retry=loose)])
    await run(Runner(agent, retry_policy=tight))
    assert on_a(rec.trace) == [1, 2, 2]  # the third offer is the exhaustion, which sends it to b
    assert testing.waits == [0.1, 0.0]  # the answering policy's wait, not the bound's 5 s


class Again:
    def on_model_error(self, error: Exception, ctx: ModelContext) -> Retry[ModelContext]:
        return Retry(ctx)


async def test_a_plain_retry_from_a_callback_waits_as_the_bounding_policy_says(testing: Testing) -> None:
    model = ScriptedModel([ServerError("1"), ServerError("2"), "ok"])
    policy = RetryPolicy(wait=tenacity.wait_incrementing(start=1, increment=1))
    events = await run(Runner(LlmAgent("a", model=model, callbacks=[Again()]), retry_policy=policy))
    assert testing.waits == [1.0, 2.0]  # one tenacity state across the envelope's attempts
    assert [d.by for d in events[-2].decisions] == ["callback:Again.on_model_error"] * 2


def test_a_policy_called_outside_an_envelope_judges_the_failure_alone() -> None:
    policy = RetryPolicy(wait=tenacity.wait_fixed(0.5))
    assert policy._judge(ServerError("503"), _ctx(attempt=1)) == 0.5
    assert policy._judge(ServerError("503"), _ctx(attempt=3)) is None  # stop_after_attempt(3)


def _ctx(attempt: int) -> ModelContext:
    return ModelContext(None, None, "", None, ScriptedModel([]), attempt)  # type: ignore[arg-type]
