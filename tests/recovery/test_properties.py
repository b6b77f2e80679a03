"""Property: for random failure sequences and policies, attempts never exceed the bound and the
outcome matches a small reference model."""

from __future__ import annotations

import asyncio

import tenacity
from hypothesis import given, settings
from hypothesis import strategies as st

from adk import LlmAgent, RetryPolicy, Runner
from adk.errors import BadRequestError, ServerError
from adk.testing import ScriptedModel, set_testing

failures = st.lists(st.sampled_from(["transient", "permanent", "ok"]), min_size=1, max_size=8)


def reference(steps: list[str], bound: int) -> tuple[int, str]:
    """(model calls, outcome) under the default recovery: retry transient errors up to `bound`."""
    attempt = 0
    while True:
        attempt += 1
        if attempt > len(steps):
            return attempt, "ScriptError"  # called once more than scripted: not transient
        step = steps[attempt - 1]
        if step == "ok":
            return attempt, "ok"
        if step == "permanent":
            return attempt, "BadRequestError"
        if attempt == bound:
            return attempt, "RetriesExhausted"


@settings(max_examples=60, deadline=None)
@given(steps=failures, bound=st.integers(min_value=1, max_value=5))
def test_attempts_never_exceed_the_bound(steps: list[str], bound: int) -> None:
    script: list[object] = [
        "fine" if s == "ok" else ServerError("5xx") if s == "transient" else BadRequestError("4xx")
        for s in steps
    ]
    model = ScriptedModel(script)  # type: ignore[arg-type]
    policy = RetryPolicy(stop=tenacity.stop_after_attempt(bound), wait=tenacity.wait_fixed(1))
    runner = Runner(LlmAgent("a", model=model), retry_policy=policy)

    async def go() -> list:
        return [e async for e in runner.run("u", "s", "hi")]

    with set_testing(True) as switch:
        events = asyncio.run(go())
    calls, outcome = reference(steps, bound)
    assert len(model.requests) == calls <= bound
    if outcome == "ok":
        assert events[-1].object == "runner.completion" and events[-2].content == "fine"
    else:
        assert events[-1].error is not None and events[-1].error.type == outcome
    assert switch.waits == [1.0] * (calls - 1)
