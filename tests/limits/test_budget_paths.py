"""One Budget counts every path of a run once: agent tools, sub-agents, streams cut short, prices."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping

import pytest

from adk import Cont, LlmAgent, LlmResponse, ModelContext, RetryPolicy, Runner
from adk.agents.tool import AgentTool
from adk.callbacks.decisions import BudgetExceeded
from adk.errors import StreamInterruptedError
from adk.events import Message, ObjectType, ToolDeclaration
from adk.limits import Budget
from adk.models.base import LlmRequest, with_max_tokens
from adk.sessions import InMemorySessionService
from adk.testing import ScriptedModel, Stream, call_tool, transfer_to
from tests._runtime import run
from tests.limits import used

pytestmark = pytest.mark.usefixtures("testing")


def team() -> tuple[LlmAgent, list[ScriptedModel]]:
    """A root that asks an agent tool, then transfers to an expert: 4 model calls in all."""
    root = ScriptedModel(
        [used(1, 1, call_tool("helper", call_id="c1", request="x")), used(1, 1, transfer_to("expert"))],
        name="root",
    )
    helper = ScriptedModel([used(1, 1, LlmResponse.text("helped"))], name="helper")
    expert = ScriptedModel([used(1, 1, LlmResponse.text("expert"))], name="expert")
    agent = LlmAgent(
        "root",
        model=root,
        tools=[AgentTool(LlmAgent("helper", model=helper))],
        sub_agents=[LlmAgent("expert", model=expert)],
    )
    return agent, [root, helper, expert]


async def test_an_agent_tool_and_a_transfer_spend_the_callers_budget() -> None:
    agent, models = team()
    events = await run(Runner(agent, callbacks=[Budget(model_calls=4)]))
    assert [len(m.requests) for m in models] == [2, 1, 1]
    assert events[-1].object == ObjectType.RUNNER_COMPLETION
    agent, models = team()  # one call less: the expert's is refused
    events = await run(Runner(agent, callbacks=[Budget(model_calls=3)]))
    assert [len(m.requests) for m in models] == [2, 1, 0]
    assert events[-1].decisions == (
        BudgetExceeded("callback:Budget.on_model_error", "model:expert", "budget", "model_calls", 3.0, 3.0),
    )


class AskFor40:
    """Sets the request's max_tokens, as an application would; seen by each attempt's reservation."""

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        return Cont(dataclasses.replace(ctx, request=dataclasses.replace(ctx.request, max_tokens=40)))


async def test_a_stream_cut_after_partial_output_keeps_its_reservation_and_the_retry_reserves_anew() -> None:
    model = ScriptedModel([Stream(["Hel", "lo"], error=StreamInterruptedError("cut")), used(1, 3)])
    budget = Budget(output_tokens=100, warn_at=1)
    reports: list[dict[str, float]] = []

    class Watch:
        def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
            reports.append(budget.report(ctx.invocation))
            return response

    runner = Runner(LlmAgent("a", model=model), callbacks=[budget, AskFor40(), Watch()])
    events = [e async for e in runner.run("u", "s", "hi", stream=True)]
    assert events[-1].object == ObjectType.RUNNER_COMPLETION
    assert [r.max_tokens for r in model.requests] == [40, 40]
    # the cut attempt keeps its reservation ("hi": 5 tokens in, 40 out; fail closed), the retry
    # settles to the 1 + 3 it used
    assert reports == [{"model_calls": 2.0, "input_tokens": 6.0, "output_tokens": 43.0, "total_tokens": 49.0}]


async def test_a_model_without_a_price_is_refused_or_counted_in_tokens_only() -> None:
    model = ScriptedModel([used(1, 1)], name="free")
    refused = await run(
        Runner(LlmAgent("a", model=model), callbacks=[Budget(usd=1, prices={"paid": (1, 1)})])
    )
    assert model.requests == []
    last = refused[-1]
    assert last.error is not None
    assert (last.error.type, last.error.message) == (
        "BudgetExceededError",
        "budget 'budget' has no price for model 'free'",
    )
    budget = Budget(usd=1, prices={"paid": (1, 1)}, unknown_model="tokens_only", total_tokens=50)
    counted = await run(Runner(LlmAgent("a", model=model), callbacks=[budget]))
    assert [r.max_tokens for r in model.requests] == [50 - 5]  # "hi": 5 tokens
    assert counted[-1].object == ObjectType.RUNNER_COMPLETION


def test_a_lowered_request_keeps_every_other_field() -> None:
    request = LlmRequest(
        model="m",
        instruction="i",
        messages=[Message.user("hi")],
        tools=[ToolDeclaration(name="t")],
        stream=True,
        temperature=0.5,
        max_tokens=900,
        tool_choice="auto",
        response_format={"type": "json_object"},
        usage_anchor=(5, Message.user("hi")),
    )
    assert with_max_tokens(request, 7) == dataclasses.replace(request, max_tokens=7)
    assert with_max_tokens(request, 900) is request


async def test_an_attempt_that_times_out_keeps_its_reservation_and_the_retry_reserves_anew() -> None:
    async def never(request: LlmRequest) -> LlmResponse:
        await asyncio.Event().wait()  # a server that accepted the request and went quiet
        raise AssertionError("unreachable")

    model = ScriptedModel([never, used(1, 3)])
    budget = Budget(output_tokens=100, warn_at=1)
    reports: list[dict[str, float]] = []

    class Watch:
        def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
            reports.append(budget.report(ctx.invocation))
            return response

    policy = RetryPolicy(attempt_timeout=0.01)
    runner = Runner(LlmAgent("a", model=model), callbacks=[budget, AskFor40(), Watch()], retry_policy=policy)
    events = [e async for e in runner.run("u", "s", "hi")]
    assert events[-1].object == ObjectType.RUNNER_COMPLETION
    assert [r.max_tokens for r in model.requests] == [40, 40]
    # the timed-out attempt keeps its 5 + 40 (fail closed: it may have been charged)
    assert reports == [{"model_calls": 2.0, "input_tokens": 6.0, "output_tokens": 43.0, "total_tokens": 49.0}]


async def test_a_reservation_that_loses_every_race_names_the_limit_it_lost_on() -> None:
    class Raced(InMemorySessionService):
        """A store where another worker always takes the room between the read and the reservation."""

        async def reserve_budget(
            self, key: str, amounts: Mapping[str, float], limits: Mapping[str, float], once: str | None = None
        ) -> str | None:
            races.append(key)
            return "total_tokens"

    races: list[str] = []
    store, model = Raced(), ScriptedModel(["never made"])
    budget = Budget(total_tokens=100, scope="session", store=store)
    events = await run(Runner(LlmAgent("a", model=model), session_service=store, callbacks=[budget]))
    assert (model.requests, len(races)) == ([], 16)
    last = events[-1]
    assert last.error is not None and last.error.message == (
        "budget 'budget': total_tokens lost 16 races for one reservation to other workers"
    )
    assert last.decisions == (  # not "usd", a limit this budget does not have
        BudgetExceeded(
            "callback:Budget.on_model_error", "model:scripted", "budget", "total_tokens", 100.0, 0.0
        ),
    )
