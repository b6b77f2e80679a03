"""Attacks on the run core's guarantees along paths the other tests do not take: each test here
failed before its fix (but the after_model test's "first attempt" case: the path that held, which
the others are held to)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from adk import (
    AgentContext,
    Approve,
    Cont,
    Defer,
    Fallback,
    LlmResponse,
    ModelContext,
    ParallelAgent,
    Raise,
    Runner,
    ToolContext,
)
from adk.agents import LlmAgent, transfer
from adk.audit import AuditLog
from adk.callbacks import Paced
from adk.limits import RateLimit
from adk.models.base import LlmRequest
from adk.sessions import InMemorySessionService
from adk.testing import ScriptedModel, transfer_to
from adk.tools import BaseTool, Toolset
from tests._runtime import Tool, call, calls, reply, shapes, summary

pytestmark = pytest.mark.usefixtures("testing")


async def test_a_later_call_that_reuses_a_transfer_calls_id_is_no_transfer() -> None:
    # Model ids are the provider's, and some number them per response: the helper's `lookup` has
    # the id of the root's transfer. It was taken for that transfer: the helper handed over to itself.
    lookup = Tool("lookup")
    helper = LlmAgent(
        "helper", model=ScriptedModel([calls(call("lookup", "c1", q=1)), reply]), tools=[lookup]
    )
    to_helper = calls(call("transfer_to_agent", "c1", agent_name="helper"))
    root = LlmAgent("root", model=ScriptedModel([to_helper]), sub_agents=[helper])
    runner = Runner(root, session_service=InMemorySessionService())

    assert await shapes(runner) == [
        ("model", "user", "hi"),
        ("model", "root", "", [("transfer_to_agent", '{"agent_name": "helper"}')]),
        ("tool", "root", "transfer_to_agent", "c1", "Transferred to agent 'helper'."),
        ("agent.transfer", "root"),
        ("model", "helper", "", [("lookup", '{"q": 1}')]),
        ("tool", "helper", "lookup", "c1", '{"echo":{"q":1}}'),
        ("model", "helper", 're: {"echo":{"q":1}}'),
        ("done", "root"),
    ]
    assert lookup.calls == [{"q": 1}]


async def test_a_transfer_on_one_parallel_branch_is_not_taken_by_a_call_of_the_same_id_on_another() -> None:
    # `a` transfers to its sub-agent `a_sub` (call c1) while `b`, beside it, calls `lookup` (also c1).
    # b's result was taken for a's transfer: b handed over to a_sub, which b cannot reach.
    transferred, b_asked_again = asyncio.Event(), asyncio.Event()

    class Signal:
        def after_tool(self, result: Any, ctx: ToolContext) -> Any:
            if ctx.tool.name == "transfer_to_agent":
                transferred.set()  # a's transfer is recorded; b's lookup may now end
            return result

    async def after_the_transfer(args: dict[str, Any], ctx: ToolContext) -> str:
        await transferred.wait()
        return "found"

    async def until_b_asks_again(args: dict[str, Any], ctx: ToolContext) -> str:
        await b_asked_again.wait()  # a's batch is not over while b's results are looked at
        return "waited"

    def asks(answer: str) -> Any:
        def step(request: LlmRequest) -> str:
            b_asked_again.set()
            return answer

        return step

    a_sub = LlmAgent("a_sub", model=ScriptedModel([asks("a_sub here")]))
    a = LlmAgent(
        "a",
        model=ScriptedModel([calls(call("transfer_to_agent", "c1", agent_name="a_sub"), call("wait", "c2"))]),
        tools=[Tool("wait", until_b_asks_again)],
        sub_agents=[a_sub],
    )
    b = LlmAgent(
        "b",
        model=ScriptedModel([calls(call("lookup", "c1")), asks("b done")]),
        tools=[Tool("lookup", after_the_transfer)],
        sub_agents=[LlmAgent("b_sub", model=ScriptedModel([]))],  # b may transfer, but only to b_sub
    )
    runner = Runner(
        ParallelAgent("both", sub_agents=[a, b]),
        session_service=InMemorySessionService(),
        callbacks=[Signal()],
    )

    got = await shapes(runner)

    assert [g for g in got if g[0] in ("agent.transfer", "model") and g[1] != "user"] == [
        ("model", "a", "", [("transfer_to_agent", '{"agent_name": "a_sub"}'), ("wait", "{}")]),
        ("model", "b", "", [("lookup", "{}")]),
        ("model", "b", "b done"),
        ("agent.transfer", "a"),
        ("model", "a_sub", "a_sub here"),
    ]


async def test_transfers_are_bounded_per_invocation_when_their_calls_reuse_an_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Counted by distinct call ids, transfers that all reuse one id never reached MAX_TRANSFERS.
    monkeypatch.setattr(transfer, "MAX_TRANSFERS", 2)
    ping = ScriptedModel(
        [transfer_to("pong", call_id="c1"), transfer_to("pong", call_id="c1"), "Ping stops."]
    )
    pong = LlmAgent("pong", model=ScriptedModel([transfer_to("ping", call_id="c1")]))
    runner = Runner(LlmAgent("ping", model=ping, sub_agents=[pong]), session_service=InMemorySessionService())

    got = await shapes(runner)

    assert [g for g in got if g[0] == "tool"] == [
        ("tool", "ping", "transfer_to_agent", "c1", "Transferred to agent 'pong'."),
        ("tool", "pong", "transfer_to_agent", "c1", "Transferred to agent 'ping'."),
        (
            "tool",
            "ping",
            "transfer_to_agent",
            "c1",
            "Error: TransferError: this invocation already made 2 transfers, the most one may"
            " (MAX_TRANSFERS); answer without transferring",
        ),
    ]
    assert got[-2:] == [("model", "ping", "Ping stops."), ("done", "ping")]


class AskFirst:
    """Defers every call until a person approves it."""

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Defer:
        return Cont(ctx) if ctx.approved else Defer("ask first")


async def test_an_approved_call_runs_as_shown_on_its_own_branch_when_another_branch_has_its_id() -> None:
    # Both branches' calls wait as c1. The approval of each ran the call shown last, whichever
    # branch it was on: `a` ran b's delete, and its own read never ran.
    read, delete = Tool("read"), Tool("delete")
    a = LlmAgent(
        "a", model=ScriptedModel([calls(call("read", "c1", path="notes")), reply]), tools=[read, delete]
    )
    b = LlmAgent(
        "b", model=ScriptedModel([calls(call("delete", "c1", path="/")), reply]), tools=[read, delete]
    )
    runner = Runner(
        ParallelAgent("both", sub_agents=[a, b]),
        session_service=InMemorySessionService(),
        callbacks=[AskFirst()],
    )
    paused = await shapes(runner)
    assert paused[-1] == ("runner.paused", "both")

    resumed = [summary(e) async for e in runner.run("u", "s", approvals={"c1": Approve()})]

    assert sorted(g for g in resumed if g[0] == "tool") == [
        ("tool", "a", "read", "c1", '{"echo":{"path":"notes"}}'),
        ("tool", "b", "delete", "c1", '{"echo":{"path":"/"}}'),
    ]
    assert (read.calls, delete.calls) == ([{"path": "notes"}], [{"path": "/"}])


class Listed(Toolset):
    """A toolset (an MCP server's, say) whose tools are known only once listed."""

    name = "listed"

    def __init__(self, *tools: BaseTool) -> None:
        self.tools = tools

    async def get_tools(self) -> list[BaseTool]:
        return list(self.tools)


async def test_an_approved_call_to_a_listed_tool_runs_when_another_process_resumes() -> None:
    # The answer comes to another worker, whose agent has listed no tools yet: the approved call
    # was answered "unknown tool" instead of running.
    store = InMemorySessionService()

    def worker(pay: Tool, *steps: Any) -> Runner:
        agent = LlmAgent("bank", model=ScriptedModel(steps), tools=[Listed(pay)], callbacks=[AskFirst()])
        return Runner(agent, session_service=store)

    first = Tool("pay")
    paused = await shapes(worker(first, calls(call("pay", "c1", amount=5))))
    assert paused[-2:] == [("tool.approval_request", "bank"), ("runner.paused", "bank")]
    pay = Tool("pay")

    resumed = [summary(e) async for e in worker(pay, reply).run("u", "s", approvals={"c1": Approve()})]

    assert resumed == [
        ("tool", "bank", "pay", "c1", '{"echo":{"amount":5}}'),
        ("model", "bank", 're: {"echo":{"amount":5}}'),
        ("done", "bank"),
    ]
    assert (first.calls, pay.calls) == ([], [{"amount": 5}])


async def test_a_call_deferred_beside_an_agent_tool_still_pauses_the_run() -> None:
    # The agent tool took every call left waiting while it ran, its caller's own `pay` among them:
    # it failed naming `pay`, and the run completed with `pay` waiting for an approval no one could give.
    deferred = asyncio.Event()

    class DeferPay:
        def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Defer:
            if ctx.tool.name != "pay" or ctx.approved:
                return Cont(ctx)
            deferred.set()
            return Defer("ask first")

    async def after_pay_waits(request: LlmRequest) -> str:
        await deferred.wait()
        return "looked"

    pay = Tool("pay")
    inner = LlmAgent("inner", model=ScriptedModel([after_pay_waits]))
    model = ScriptedModel([calls(call("inner", "c1", request="look"), call("pay", "c2", amount=5)), reply])
    runner = Runner(
        LlmAgent("bank", model=model, tools=[inner, pay]),
        session_service=InMemorySessionService(),
        callbacks=[DeferPay()],
    )

    paused = await shapes(runner)

    assert [g for g in paused if g[0] != "model"] == [
        ("tool", "bank", "inner", "c1", "looked"),
        ("tool.approval_request", "bank"),
        ("runner.paused", "bank"),
    ]
    resumed = [summary(e) async for e in runner.run("u", "s", approvals={"c2": Approve()})]
    assert resumed[0] == ("tool", "bank", "pay", "c2", '{"echo":{"amount":5}}')
    assert pay.calls == [{"amount": 5}]


async def test_calls_of_one_response_that_share_an_id_are_approved_each_as_shown() -> None:
    # Two calls as c1, each shown for approval: approving c1 ran the last one shown twice, and
    # the first (5000) never, though its request showed 5000.
    pay = Tool("pay")
    model = ScriptedModel([calls(call("pay", "c1", amount=5000), call("pay", "c1", amount=2000)), reply])
    runner = Runner(
        LlmAgent("bank", model=model, tools=[pay], callbacks=[AskFirst()]),
        session_service=InMemorySessionService(),
    )
    paused = [e async for e in runner.run("u", "s", "hi")]
    shown = [(d.call_id, d.arguments) for e in paused for d in e.decisions]
    assert shown == [("c1", {"amount": 5000}), ("c1.1", {"amount": 2000})]
    assert paused[-1].long_running_tool_ids == ["c1", "c1.1"]

    resumed = [summary(e) async for e in runner.run("u", "s", approvals={"c1": Approve(), "c1.1": Approve()})]

    assert resumed[:2] == [
        ("tool", "bank", "pay", "c1", '{"echo":{"amount":5000}}'),
        ("tool", "bank", "pay", "c1.1", '{"echo":{"amount":2000}}'),
    ]
    assert pay.calls == [{"amount": 5000}, {"amount": 2000}]


class Sorry:
    def on_agent_error(self, error: Exception, ctx: AgentContext) -> Fallback[str]:
        return Fallback("sorry")


async def test_an_agent_fallen_back_keeps_what_its_failed_calls_decided() -> None:
    # Without on_agent_error the error event records the retries; with a fallback, its event had
    # only `fell_back`, and the retries were on `attempt.failed` events alone, which are not stored.
    down = ConnectionError("down")
    agent = LlmAgent("a", model=ScriptedModel([down, down, down]), callbacks=[Sorry()])
    store = InMemorySessionService()
    await shapes(Runner(agent, session_service=store))

    session = await store.get("u", "s")
    assert session is not None
    decided = [(d.kind, d.by) for e in session.events for d in e.decisions]
    assert decided == [
        ("retried", "callback:RetryPolicy.on_model_error"),
        ("retried", "callback:RetryPolicy.on_model_error"),
        ("fell_back", "callback:Sorry.on_agent_error"),
    ]


async def test_an_agent_fallen_back_is_audited_once_and_its_retries_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The fallback's event is a chat.completion, whose decisions a live consumer was taken to have
    # seen already (on `attempt.failed`): the on_agent_error fallback was never audited.
    down = ConnectionError("down")
    agent = LlmAgent("a", model=ScriptedModel([down, down, down]), callbacks=[Sorry()])
    runner = Runner(agent, session_service=InMemorySessionService(), callbacks=[AuditLog()])
    with caplog.at_level(logging.INFO, logger="adk.audit"):
        await shapes(runner)

    decided = [r.__dict__["adk"] for r in caplog.records if "decision" in r.__dict__["adk"]]
    assert [(d["decision"], d["by"]) for d in decided] == [
        ("retried", "callback:RetryPolicy.on_model_error"),
        ("retried", "callback:RetryPolicy.on_model_error"),
        ("fell_back", "callback:Sorry.on_agent_error"),
    ]


async def test_a_paced_model_call_is_audited(caplog: pytest.LogCaptureFixture) -> None:
    # The pacing is on the response alone (no attempt failed), which AuditLog read as told already.
    paced = RateLimit(requests_per_minute=60, clock=lambda: 0.0)
    agent = LlmAgent(
        "a", model=ScriptedModel([calls(call("t", "c1")), "ok"]), tools=[Tool("t")], callbacks=[paced]
    )
    runner = Runner(agent, session_service=InMemorySessionService(), callbacks=[AuditLog()])
    with caplog.at_level(logging.INFO, logger="adk.audit"):
        await shapes(runner)

    decided = [r.__dict__["adk"] for r in caplog.records if "decision" in r.__dict__["adk"]]
    assert [(d["decision"], d["by"], d["wait"]) for d in decided] == [
        ("paced", "callback:RateLimit.before_model", 1.0)
    ]


class Broken:
    """An after_model with a bug that the model's answer "hello" sets off."""

    def after_model(self, response: LlmResponse, ctx: ModelContext) -> LlmResponse:
        if response.content == "hello":
            raise ValueError("bug")
        return response


class CatchAll:
    """Falls back on any error but a dropped connection, which the retry policy retries."""

    def on_model_error(self, error: Exception, ctx: ModelContext) -> Fallback[LlmResponse] | Raise:
        return Raise(error) if isinstance(error, ConnectionError) else Fallback(LlmResponse.text("fallback"))


@pytest.mark.parametrize("path", ["first attempt", "streamed", "after a failed attempt"])
async def test_a_failing_after_model_ends_the_run_on_every_path(path: str) -> None:
    # A model call that streams, or whose first attempt failed, goes on in its envelope, which
    # offered after_model's CallbackError to on_model_error as if the attempt had failed: a
    # catch-all fallback hid the bug, where the call answered at once ended the run with it.
    steps: list[Any] = [ConnectionError("down"), "hello"] if path == "after a failed attempt" else ["hello"]
    agent = LlmAgent("a", model=ScriptedModel(steps), callbacks=[Broken(), CatchAll()])
    runner = Runner(agent, session_service=InMemorySessionService())

    got = await shapes(runner, stream=path == "streamed")

    assert got[-1] == ("error", "a", "CallbackError", "callback:Broken.after_model")
    assert [g for g in got if g[0] == "model"] == [("model", "user", "hi")]


class SecondCallBoom:
    """A before_model with a bug that the agent's second model call sets off."""

    def __init__(self) -> None:
        self.calls = 0

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        self.calls += 1
        if self.calls == 2:
            raise KeyError("user")
        return Cont(ctx)


async def test_what_a_before_model_chain_decided_before_a_callback_failed_stays_on_the_error() -> None:
    # The call was paced (a decision, and a wait) before the next callback raised: the error event
    # that ended the run had no decisions, so the pacing was recorded nowhere.
    paced = RateLimit(requests_per_minute=60, clock=lambda: 0.0)
    model = ScriptedModel([calls(call("t", "c1")), "ok"])
    agent = LlmAgent("a", model=model, tools=[Tool("t")], callbacks=[paced, SecondCallBoom()])
    runner = Runner(agent, session_service=InMemorySessionService())

    events = [e async for e in runner.run("u", "s", "hi")]

    assert summary(events[-1]) == ("error", "a", "CallbackError", "callback:SecondCallBoom.before_model")
    assert events[-1].decisions == (Paced("callback:RateLimit.before_model", "model:scripted", 1.0),)
