"""Attacks on the limits' promises (docs/limits.md): ids that join alike, numbers that are no
limit, an approval that counted a call twice, a summary stream that stalls, a timeout on a tool
that nothing can cancel, a call counted again when another worker resumes it. Each failed before
its fix."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from adk import Approve, LlmAgent, LlmResponse, RetryPolicy, Runner, ToolContext
from adk.compaction import Compact
from adk.events import ObjectType
from adk.limits import Budget, RateLimit
from adk.models.base import LlmRequest
from adk.recovery import CircuitBreaker
from adk.sessions import InMemorySessionService
from adk.sessions.sqlite import SqliteSessionService
from adk.testing import ScriptedModel, call_tool
from adk.tools import FunctionTool, tool
from tests._runtime import Tool, call, calls
from tests.limits import used

pytestmark = pytest.mark.usefixtures("testing")


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


def test_a_timeout_on_a_sync_tool_is_refused_where_it_is_given() -> None:
    # a sync tool runs inline: no timeout could cancel it, so one given was silently no bound
    def lookup(city: str) -> str:
        """Look up a city."""
        return city

    with pytest.raises(ValueError, match=r"^tool 'lookup': timeout needs") as raised:
        tool(timeout=5)(lookup)
    assert str(raised.value) == (
        "tool 'lookup': timeout needs an async function; a sync one runs inline, where no timeout can"
        " cancel it"
    )
    assert FunctionTool(lookup).timeout is None


async def test_a_call_resumed_on_another_worker_counts_once_against_a_stored_tool_cap(tmp_path: Path) -> None:
    path, in_flight, ran = tmp_path / "s.sqlite3", asyncio.Event(), []

    async def hangs(args: dict[str, Any], ctx: ToolContext) -> str:
        in_flight.set()
        await asyncio.Event().wait()  # the worker dies during the call
        return "never"

    async def pays(args: dict[str, Any], ctx: ToolContext) -> str:
        ran.append("paid")
        return "paid"

    def worker(store: SqliteSessionService, body: Any, script: list[Any]) -> Runner:
        budget = Budget(per_tool={"pay": 1}, scope="session", store=store)
        agent = LlmAgent("a", model=ScriptedModel(script), tools=[Tool("pay", body, idempotent=True)])
        return Runner(agent, session_service=store, callbacks=[budget])

    first_store = SqliteSessionService(path)
    first = worker(first_store, hangs, [calls(call("pay", "c1", amount=5))])
    running = asyncio.create_task(_drain(first.run("u", "s", "pay 5")))
    async with asyncio.timeout(10):
        await in_flight.wait()
    running.cancel()
    await asyncio.gather(running, return_exceptions=True)
    first_store.close()
    other_store = SqliteSessionService(path)
    events = [e async for e in worker(other_store, pays, ["paid once"]).resume("u", "s")]
    assert ran == ["paid"], [(e.object, e.content) for e in events]  # was refused: tool:pay 1 of 1
    assert (await other_store.budget_used("budget:session:1:u:s"))["tool:pay"] == 1.0
    other_store.close()


async def _drain(events: AsyncIterator[Any]) -> None:
    async for _ in events:
        pass
