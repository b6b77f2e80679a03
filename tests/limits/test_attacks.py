"""Attacks on the limits' promises (docs/limits.md): ids that join alike, numbers that are no
limit, an approval that counted a call twice, a summary stream that stalls. Each failed before
its fix."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from adk import Approve, LlmAgent, LlmResponse, RetryPolicy, Runner
from adk.compaction import Compact
from adk.events import ObjectType, Usage
from adk.limits import Budget, RateLimit
from adk.models.base import LlmRequest
from adk.recovery import CircuitBreaker
from adk.sessions import InMemorySessionService
from adk.testing import ScriptedModel, call_tool
from adk.tools import FunctionTool, tool

pytestmark = pytest.mark.usefixtures("testing")


def used(prompt: int, completion: int) -> LlmResponse:
    response = LlmResponse.text("ok")
    response.usage = Usage(
        prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
    )
    return response


async def test_session_budgets_of_ids_that_join_alike_stay_apart() -> None:
    store = InMemorySessionService()
    budget = Budget(model_calls=1, scope="session", store=store)
    model = ScriptedModel([used(1, 1), used(1, 1)])
    runner = Runner(LlmAgent("a", model=model), session_service=store, callbacks=[budget])
    for user, session in (("a:b", "c"), ("a", "b:c")):  # joined with ":" both read "a:b:c"
        events = [e async for e in runner.run(user, session, "hi")]
        assert events[-1].object == ObjectType.RUNNER_COMPLETION
    assert len(model.requests) == 2  # each session made its one call
    for key in ("budget:session:3:a:b:c", "budget:session:1:a:b:c"):  # the user id's length first
        assert (await store.budget_used(key))["model_calls"] == 1.0


INF, NAN = math.inf, math.nan


def pay_tool() -> None:
    """Pay."""


@pytest.mark.parametrize(
    ("make", "line"),
    [
        (lambda: Budget(total_tokens=NAN), "Budget: total_tokens must be a positive number, not nan"),
        (lambda: Budget(usd=INF), "Budget: usd must be a positive number, not inf"),
        (
            lambda: Budget(usd=1, prices={"m": (INF, 1)}),
            "Budget: prices['m'] must be (usd_per_1M_input, usd_per_1M_output), two numbers not below 0,"
            " not (inf, 1)",
        ),
        (
            lambda: RetryPolicy(attempt_timeout=INF),
            "RetryPolicy: attempt_timeout must be a number of seconds above 0, got inf",
        ),
        (
            lambda: FunctionTool(pay_tool, timeout=INF),
            "tool 'pay_tool': timeout must be a number of seconds above 0, got inf",
        ),
        (
            lambda: CircuitBreaker(cooldown=INF),
            "CircuitBreaker: cooldown must be a number of seconds above 0, got inf",
        ),
        (lambda: RateLimit(max_wait=INF), "RateLimit: max_wait must be a number above 0, got inf"),
        (
            lambda: RateLimit(requests_per_minute=INF),
            "RateLimit: requests_per_minute must be a number above 0, got inf",
        ),
    ],
)
def test_a_number_that_is_not_finite_is_refused_where_it_is_given(make: Callable[[], Any], line: str) -> None:
    # NaN compares false with everything: as a limit it crossed nothing, so it was no limit at all
    with pytest.raises(ValueError, match=r" must be ") as raised:
        make()
    assert str(raised.value) == line


async def test_an_approved_call_counts_once_against_a_stored_tool_cap() -> None:
    store = InMemorySessionService()
    ran: list[int] = []

    @tool(requires_approval=True)
    def pay(amount: int) -> str:
        """Pay."""
        ran.append(amount)
        return "paid"

    budget = Budget(per_tool={"pay": 1}, scope="session", store=store)
    model = ScriptedModel(
        [call_tool("pay", call_id="c1", amount=5), call_tool("pay", call_id="c2", amount=6)]
    )
    runner = Runner(LlmAgent("a", model=model, tools=[pay]), session_service=store, callbacks=[budget])
    paused = [e async for e in runner.run("u", "s", "pay 5")]
    assert paused[-1].object == ObjectType.RUNNER_PAUSED
    resumed = [e async for e in runner.run("u", "s", approvals={"c1": Approve()})]
    assert ran == [5]  # the approved call ran: it was counted when approved, not also when it asked
    # the next call is over the cap: refused at once, without asking a person to approve it
    assert [(e.object, e.content) for e in resumed[1:]] == [
        ("chat.completion", ""),
        ("tool.response", "budget 'budget' refused the call to pay: tool:pay 1 of 1"),
        ("runner.completion", ""),
    ]
    assert (await store.budget_used("budget:session:1:u:s"))["tool:pay"] == 1.0


class StallsAfterOneChunk:
    """A summary model whose stream stops after one chunk and never ends."""

    name = "stalls"

    async def generate(self, request: LlmRequest) -> AsyncIterator[LlmResponse]:
        yield LlmResponse.chunk("Sum", model=self.name)
        await asyncio.Event().wait()
        yield LlmResponse.text("never", model=self.name)


async def test_a_summary_stream_that_stalls_is_cut_by_the_attempt_timeout() -> None:
    # a call aside of the turn (a Compact's summary, an MCP sampling request) reads a stream to
    # its end: each chunk must come within the attempt timeout, as for an agent's own call
    compact = Compact(keep_last=0, summarize=StallsAfterOneChunk(), threshold_tokens=5)  # type: ignore[arg-type]
    model = ScriptedModel(["a1", "a2"])
    policy = RetryPolicy(attempt_timeout=0.01)
    runner = Runner(LlmAgent("a", model=model, callbacks=[compact]), retry_policy=policy)
    [e async for e in runner.run("u", "s", "x" * 40)]
    async with asyncio.timeout(10):  # before the fix: it hung here
        events = [e async for e in runner.run("u", "s", "y" * 40)]
    # the summary failed (three attempts timed out): the request went on unshortened
    assert [(e.object, e.content) for e in events[1:]] == [
        ("chat.completion", "a2"),
        ("runner.completion", ""),
    ]
    assert len(model.requests[1].messages) == 3
