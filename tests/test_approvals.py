"""Approvals and long-running tools: a run pauses on calls that wait; answers resume its invocation."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

from adk import Approve, Cont, Defer, LlmAgent, ObjectType, Pending, Reject, Reply, Runner, ToolContext, tool
from adk.audit import AuditLog
from adk.callbacks import Approved, Deferred, Rejected
from adk.cli import Display
from adk.errors import ApprovalError
from adk.events import Event
from adk.sessions import InMemorySessionService, SessionService, SqliteSessionService
from adk.sessions.postgres import PostgresSessionService
from adk.testing import ScriptedModel
from tests import postgres
from tests._runtime import Recorder, Tool, call, calls, summary

Trace = list[tuple[Any, ...]]


class LargeNeedApproval(Recorder):
    """Defers a `pay` over 1000; records every tool hook."""

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Defer:  # type: ignore[override]
        self.record("before_tool", ctx)
        if ctx.tool.name == "pay" and ctx.args.get("amount", 0) > 1000:
            return Defer("over 1000")
        return Cont(ctx)


def shape(event: Event) -> tuple[Any, ...]:
    if event.object in (ObjectType.APPROVAL_REQUEST, ObjectType.TOOL_PENDING, ObjectType.RUNNER_PAUSED):
        return (event.object, event.author, event.long_running_tool_ids)
    return summary(event)


async def run(runner: Runner, message: str | None = "hi", **kw: Any) -> list[Event]:
    return [e async for e in runner.run("u", "s", message, **kw)]


def payment_agent(
    pay: Tool, lookup: Tool | None = None, *, script: list[Any]
) -> tuple[LlmAgent, ScriptedModel]:
    model = ScriptedModel(script)
    tools = [pay] if lookup is None else [lookup, pay]
    return LlmAgent("bank", model=model, tools=tools), model


async def test_approved_the_call_runs_through_before_and_after_tool_in_the_same_invocation() -> None:
    pay = Tool("pay")
    agent, model = payment_agent(pay, script=[calls(call("pay", "c1", amount=5000)), "paid"])
    trace: Trace = []
    runner = Runner(agent, callbacks=[LargeNeedApproval("cb", trace)])

    paused = await run(runner)
    assert [shape(e) for e in paused] == [
        ("model", "user", "hi"),
        ("model", "bank", "", [("pay", '{"amount": 5000}')]),
        ("tool.approval_request", "bank", ["c1"]),
        ("runner.paused", "bank", ["c1"]),
    ]
    assert paused[2].decisions == (
        Deferred("callback:LargeNeedApproval.before_tool", "tool:pay", "c1", {"amount": 5000}, "over 1000"),
    )
    assert pay.calls == []
    assert trace == [
        ("cb", "before_agent", "bank"),
        ("cb", "before_model", "bank"),
        ("cb", "after_model", "bank"),
        ("cb", "before_tool", "pay"),
    ]

    trace.clear()
    resumed = await run(runner, None, approvals={"c1": Approve()})
    assert [shape(e) for e in resumed] == [
        ("tool", "bank", "pay", "c1", '{"echo":{"amount":5000}}'),
        ("model", "bank", "paid"),
        ("done", "bank"),
    ]
    assert {e.invocation_id for e in resumed} == {paused[0].invocation_id}
    assert pay.calls == [{"amount": 5000}]
    # before_tool runs again (its Defer now goes on), then the tool, then after_tool.
    assert trace == [
        ("cb", "before_agent", "bank"),
        ("cb", "before_tool", "pay"),
        ("cb", "after_tool", "pay"),
        ("cb", "before_model", "bank"),
        ("cb", "after_model", "bank"),
        ("cb", "after_agent", "bank"),
    ]
    assert model.requests[1].messages[-1] == resumed[0].message
    model.assert_done()


async def test_an_invocation_that_pauses_again_is_answered_for_the_calls_that_wait_now() -> None:
    # Approved, the run goes on and asks again: the second answer names only the new call (the
    # first is answered, its result stored), and the same invocation finishes.
    pay = Tool("pay")
    script = [calls(call("pay", "c1", amount=5000)), calls(call("pay", "c2", amount=7000)), "paid twice"]
    agent, model = payment_agent(pay, script=script)
    runner = Runner(agent, callbacks=[LargeNeedApproval("cb", [])])
    first = await run(runner)
    assert shape(first[-1]) == ("runner.paused", "bank", ["c1"])

    second = await run(runner, None, approvals={"c1": Approve()})
    assert shape(second[-1]) == ("runner.paused", "bank", ["c2"])
    with pytest.raises(ApprovalError, match="call 'c1' is not waiting for approval"):
        await run(runner, None, approvals={"c1": Approve(), "c2": Approve()})

    third = await run(runner, None, approvals={"c2": Approve()})
    assert [shape(e) for e in third] == [
        ("tool", "bank", "pay", "c2", '{"echo":{"amount":7000}}'),
        ("model", "bank", "paid twice"),
        ("done", "bank"),
    ]
    assert {e.invocation_id for e in [*first, *second, *third]} == {first[0].invocation_id}
    assert pay.calls == [{"amount": 5000}, {"amount": 7000}]
    model.assert_done()


async def test_rejected_the_model_gets_the_rejection_as_the_result_and_the_tool_never_runs() -> None:
    @tool(requires_approval=True)
    def transfer(amount: int) -> str:
        """Move money."""
        raise AssertionError("a rejected call must not run")

    model = ScriptedModel([calls(call("transfer", "c1", amount=7)), "ok, not sent"])
    trace: Trace = []
    runner = Runner(LlmAgent("bank", model=model, tools=[transfer]), callbacks=[Recorder("cb", trace)])
    paused = await run(runner)
    assert paused[2].decisions == (
        Deferred("tool:transfer", "tool:transfer", "c1", {"amount": 7}, "tool 'transfer' requires approval"),
    )
    trace.clear()
    resumed = await run(runner, None, approvals={"c1": Reject("not today")})
    assert [shape(e) for e in resumed] == [
        ("tool", "bank", "transfer", "c1", "Rejected: not today"),
        ("model", "bank", "ok, not sent"),
        ("done", "bank"),
    ]
    assert ("cb", "before_tool", "transfer") not in trace
    assert ("cb", "after_tool", "transfer") in trace


async def test_the_answer_is_a_decision_on_the_resumed_tool_event_stored_shown_and_audited(
    caplog: pytest.LogCaptureFixture,
) -> None:
    pay = Tool("pay")
    two = calls(call("pay", "c1", amount=5000), call("pay", "c2", amount=2000))
    agent, _ = payment_agent(pay, script=[two, "one paid"])
    store = InMemorySessionService()
    runner = Runner(agent, session_service=store, callbacks=[LargeNeedApproval("cb", []), AuditLog()])
    await run(runner)
    with caplog.at_level("INFO", logger="adk.audit"):
        resumed = await run(runner, None, approvals={"c1": Approve(), "c2": Reject("too much")})

    approved, rejected = resumed[:2]
    assert approved.decisions == (Approved("approvals", "tool:pay", "c1"),)
    assert rejected.decisions == (Rejected("approvals", "tool:pay", "c2", "too much"),)
    assert pay.calls == [{"amount": 5000}]
    session = await store.get("u", "s")
    assert session is not None
    stored = [e for e in session.events if e.object == ObjectType.TOOL_RESPONSE]
    assert [e.decisions for e in stored] == [approved.decisions, rejected.decisions]
    assert [Event.model_validate_json(e.model_dump_json()) for e in resumed] == resumed

    out = io.StringIO()
    display = Display(out, io.StringIO(), color=False)
    for event in resumed:
        display.show(event)
    assert out.getvalue().splitlines()[:4] == [
        "  ✔ tool pay approved (c1); it runs",
        '  ↳ {"echo":{"amount":5000}}',
        "  ⊘ tool pay rejected (c2): too much; it does not run",
        "  ↳ Rejected: too much",
    ]
    audited = [r.__dict__["adk"] for r in caplog.records if "decision" in r.__dict__["adk"]]
    assert [(a["decision"], a["by"], a["target"], a["call_id"], a.get("reason")) for a in audited] == [
        ("approved", "approvals", "tool:pay", "c1", None),
        ("rejected", "approvals", "tool:pay", "c2", "too much"),
    ]


async def test_a_sibling_that_needed_no_approval_ran_at_once_and_is_not_rerun() -> None:
    pay, lookup = Tool("pay"), Tool("lookup")
    two = calls(call("lookup", "c1", q="rate"), call("pay", "c2", amount=5000))
    agent, model = payment_agent(pay, lookup, script=[two, "done"])
    trace: Trace = []
    runner = Runner(agent, callbacks=[LargeNeedApproval("cb", trace)])
    paused = await run(runner)
    assert [shape(e) for e in paused[2:]] == [
        ("tool", "bank", "lookup", "c1", '{"echo":{"q":"rate"}}'),
        ("tool.approval_request", "bank", ["c2"]),
        ("runner.paused", "bank", ["c2"]),
    ]
    resumed = await run(runner, None, approvals={"c2": Approve()})
    assert [shape(e) for e in resumed] == [
        ("tool", "bank", "pay", "c2", '{"echo":{"amount":5000}}'),
        ("model", "bank", "done"),
        ("done", "bank"),
    ]
    assert (lookup.calls, pay.calls) == ([{"q": "rate"}], [{"amount": 5000}])
    assert [m.tool_call_id for m in model.requests[1].messages if m.role == "tool"] == ["c1", "c2"]


async def test_a_long_running_tool_pauses_and_tool_results_give_it_its_result() -> None:
    start = Tool("render", lambda args, ctx: Pending())
    model = ScriptedModel([calls(call("render", "c1", video="v")), "rendered"])
    trace: Trace = []
    runner = Runner(LlmAgent("studio", model=model, tools=[start]), callbacks=[Recorder("cb", trace)])
    paused = await run(runner)
    assert [shape(e) for e in paused[2:]] == [
        ("tool.pending", "studio", ["c1"]),
        ("runner.paused", "studio", ["c1"]),
    ]
    assert ("cb", "after_tool", "render") not in trace
    resumed = await run(runner, None, tool_results={"c1": {"url": "https://x/v.mp4"}})
    assert [shape(e) for e in resumed] == [
        ("tool", "studio", "render", "c1", '{"url":"https://x/v.mp4"}'),
        ("model", "studio", "rendered"),
        ("done", "studio"),
    ]
    assert start.calls == [{"video": "v"}]  # not run again
    assert ("cb", "after_tool", "render") in trace


async def test_resume_of_a_paused_run_does_nothing_and_a_new_message_abandons_the_waiting_call() -> None:
    pay = Tool("pay")
    agent, _ = payment_agent(pay, script=[calls(call("pay", "c1", amount=5000)), "new turn"])
    runner = Runner(agent, callbacks=[LargeNeedApproval("cb", [])])
    await run(runner)
    assert [e async for e in runner.resume("u", "s")] == []
    fresh = await run(runner, "forget it")
    assert [shape(e) for e in fresh][-2:] == [("model", "bank", "new turn"), ("done", "bank")]
    with pytest.raises(ApprovalError, match="has no paused run"):
        await run(runner, None, approvals={"c1": Approve()})
    assert pay.calls == []


async def test_bad_answers_name_the_session_and_the_calls_and_change_nothing() -> None:
    store = InMemorySessionService()
    pay = Tool("pay")
    agent, _ = payment_agent(
        pay, script=[calls(call("pay", "c1", amount=5000), call("pay", "c2", amount=2000))]
    )
    runner = Runner(agent, session_service=store, callbacks=[LargeNeedApproval("cb", [])])

    with pytest.raises(ApprovalError) as nothing:
        await run(runner, None, approvals={"c1": Approve()})
    assert (
        str(nothing.value)
        == "session 's' of user 'u' has no paused run: no call waits, so 'c1' cannot be answered"
    )

    await run(runner)
    stored = await store.get("u", "s")
    assert stored is not None
    before = len(stored.events)
    cases: list[tuple[dict[str, Any], str]] = [
        (
            {"approvals": {"c9": Approve(), "c1": Approve(), "c2": Approve()}},
            "call 'c9' is not waiting for approval in session 's' of user 'u' (waiting: 'c1', 'c2')",
        ),
        (
            {"tool_results": {"c1": 5}},
            "call 'c1' is not waiting for a result in session 's' of user 'u' (waiting: 'c1', 'c2')",
        ),
        (
            {"approvals": {"c1": Approve()}},
            "session 's' of user 'u' waits for answers to every paused call; missing: 'c2'",
        ),
        (
            {"approvals": {"c1": True, "c2": Approve()}},
            "approvals['c1'] for session 's' of user 'u' must be Approve() or Reject(reason), not bool",
        ),
        (  # a reply answers a question (an MCP server's), which this call does not ask
            {"approvals": {"c1": Reply({"name": "Ada"}), "c2": Approve()}},
            "approvals['c1'] for session 's' of user 'u' must be Approve() or Reject(reason), not Reply",
        ),
    ]
    for answers, message in cases:
        with pytest.raises(ApprovalError) as caught:
            await run(runner, None, **answers)
        assert str(caught.value) == message
    session = await store.get("u", "s")
    assert session is not None and len(session.events) == before
    assert pay.calls == []
    with pytest.raises(ValueError, match="not both"):
        runner.run("u", "s", "hi", approvals={"c1": Approve()})
    # The session is free: the right answers still resume it.
    resumed = await run(runner, None, approvals={"c1": Reject("no"), "c2": Approve()})
    assert [summary(e)[-1] for e in resumed[:2]] == ["Rejected: no", '{"echo":{"amount":2000}}']


@pytest.fixture(params=["sqlite", "postgres"])
async def two_stores(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[SessionService, SessionService]]:
    """Two stores on one database: what two worker processes see."""
    async with AsyncExitStack() as stack:
        open_store: Callable[[], SessionService]
        if request.param == "sqlite":

            def open_store() -> SessionService:
                store = SqliteSessionService(tmp_path / "s.sqlite3")
                stack.callback(store.close)
                return store

        else:
            postgres.require()
            schema = await stack.enter_async_context(postgres.fresh_schema())

            def open_store() -> SessionService:
                store = PostgresSessionService(postgres.URL, schema=schema)
                stack.push_async_callback(store.close)
                return store

        yield open_store(), open_store()


async def test_paused_by_one_worker_and_approved_by_another(
    two_stores: tuple[SessionService, SessionService],
) -> None:
    first, second = two_stores
    pay, lookup = Tool("pay"), Tool("lookup")
    two = calls(call("lookup", "c1", q="rate"), call("pay", "c2", amount=5000))
    agent, _ = payment_agent(pay, lookup, script=[two])
    paused = await run(Runner(agent, session_service=first, callbacks=[LargeNeedApproval("cb", [])]))
    assert paused[-1].object == ObjectType.RUNNER_PAUSED

    pay2, lookup2 = Tool("pay"), Tool("lookup")
    agent2, model2 = payment_agent(pay2, lookup2, script=["sent"])
    trace: Trace = []
    other = Runner(agent2, session_service=second, callbacks=[LargeNeedApproval("cb", trace)])
    resumed = await run(other, None, approvals={"c2": Approve()})
    assert [shape(e) for e in resumed] == [
        ("tool", "bank", "pay", "c2", '{"echo":{"amount":5000}}'),
        ("model", "bank", "sent"),
        ("done", "bank"),
    ]
    assert (lookup2.calls, pay2.calls, pay.calls) == ([], [{"amount": 5000}], [])
    assert trace == [
        ("cb", "before_agent", "bank"),
        ("cb", "before_tool", "pay"),
        ("cb", "after_tool", "pay"),
        ("cb", "before_model", "bank"),
        ("cb", "after_model", "bank"),
        ("cb", "after_agent", "bank"),
    ]
    assert [m.role for m in model2.requests[0].messages] == ["user", "assistant", "tool", "tool"]
    stored = await first.get("u", "s")
    assert stored is not None and stored.events[-1].object == ObjectType.RUNNER_COMPLETION
    assert len({e.invocation_id for e in stored.events}) == 1
