"""A transfer happens only where its tool call's envelope completed as a transfer: a refused
(halted), failed or fallen-back one is never replayed as a hand-over when the invocation resumes,
after an approval or after its worker died."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adk import Approve, Cont, Defer, Halt, ToolContext
from adk.agents import LlmAgent
from adk.events import Event, ObjectType
from adk.runner import Runner
from adk.sessions import InMemorySessionService, SessionService, SqliteSessionService
from adk.testing import ScriptedModel, transfer_to
from tests._runtime import Recorder, Tool, call, calls, summary

Trace = list[tuple[Any, ...]]


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionService]:
    if request.param == "memory":
        yield InMemorySessionService()
        return
    sqlite = SqliteSessionService(tmp_path / "s.sqlite3")
    yield sqlite
    sqlite.close()


class Gate(Recorder):
    """Refuses every transfer to `admin`; defers `pay` for approval. Records the tool hooks' args."""

    def record(self, hook: str, ctx: Any) -> None:
        if isinstance(ctx, ToolContext):
            self.trace.append((hook, ctx.tool.name, ctx.args, ctx.approved))
        else:
            self.trace.append((hook, ctx.agent.name))

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[str] | Defer:  # type: ignore[override]
        self.record("before_tool", ctx)
        if ctx.tool.name == "transfer_to_agent" and ctx.args.get("agent_name") == "admin":
            return Halt("refused: not for you")
        if ctx.tool.name == "pay":
            return Defer("a person approves payments")
        return Cont(ctx)


def bank(
    store: SessionService, first: Any, then: str = "paid"
) -> tuple[Runner, ScriptedModel, ScriptedModel]:
    root_model, admin_model = ScriptedModel([first, then]), ScriptedModel(["admin here"])
    admin = LlmAgent("admin", model=admin_model)
    root = LlmAgent(
        "root", model=root_model, tools=[Tool("pay"), Tool("look", idempotent=True)], sub_agents=[admin]
    )
    return Runner(root, session_service=store), root_model, admin_model


async def test_a_refused_transfer_beside_a_call_waiting_for_approval_is_no_hand_over_once_approved(
    store: SessionService,
) -> None:
    refused_and_pay = calls(call("transfer_to_agent", "t1", agent_name="admin"), call("pay", "c1", amount=5))
    runner, root_model, admin_model = bank(store, refused_and_pay)
    trace: Trace = []
    paused = [e async for e in runner.run("u", "s", "hi", callbacks=[Gate("g", trace)])]
    assert [summary(e) for e in paused][-3:] == [
        ("tool", "root", "transfer_to_agent", "t1", "refused: not for you"),
        ("tool.approval_request", "root"),
        ("runner.paused", "root"),
    ]
    trace.clear()

    resumed = [
        e async for e in runner.run("u", "s", approvals={"c1": Approve()}, callbacks=[Gate("g", trace)])
    ]

    assert [summary(e) for e in resumed] == [
        ("tool", "root", "pay", "c1", '{"echo":{"amount":5}}'),
        ("model", "root", "paid"),
        ("done", "root"),
    ]
    assert trace == [
        ("before_agent", "root"),
        ("before_tool", "pay", {"amount": 5}, True),
        ("after_tool", "pay", {"amount": 5}, True),
        ("before_model", "root"),
        ("after_model", "root"),
        ("after_agent", "root"),
    ]
    assert admin_model.requests == []
    assert [m.content for m in root_model.requests[1].messages[-2:]] == [
        "refused: not for you",
        '{"echo":{"amount":5}}',
    ]
    root_model.assert_done()


async def test_a_completed_transfer_beside_a_call_waiting_for_approval_hands_over_after_the_call_ran(
    store: SessionService,
) -> None:
    # The transfer's envelope completed (its result marked as a transfer): once the approved call
    # has run, the turn goes to the target, with its agent.transfer event.
    to_admin_and_pay = calls(call("transfer_to_agent", "t1", agent_name="admin"), call("pay", "c1", amount=5))
    runner, root_model, admin_model = bank(store, to_admin_and_pay)

    class PayGate(Gate):
        def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[str] | Defer:  # type: ignore[override]
            return Defer("a person approves payments") if ctx.tool.name == "pay" else Cont(ctx)

    paused = [e async for e in runner.run("u", "s", "hi", callbacks=[PayGate("g", [])])]
    assert paused[-3].actions.transfer_to_agent == "admin"

    resumed = [
        e async for e in runner.run("u", "s", approvals={"c1": Approve()}, callbacks=[PayGate("g", [])])
    ]

    assert [summary(e) for e in resumed] == [
        ("tool", "root", "pay", "c1", '{"echo":{"amount":5}}'),
        ("agent.transfer", "root"),
        ("model", "admin", "admin here"),
        ("done", "root"),
    ]
    assert resumed[1].actions.transfer_to_agent == "admin"
    assert len(root_model.requests) == 1
    admin_model.assert_done()


async def test_a_refused_transfer_cut_short_by_a_dead_worker_is_no_hand_over_on_resume(
    store: SessionService,
) -> None:
    refused_and_look = calls(call("transfer_to_agent", "t1", agent_name="admin"), call("look", "c2", q="x"))
    runner, root_model, admin_model = bank(store, refused_and_look, then="looked")
    seen: list[Event] = []
    events = runner.run("u", "s", "hi", callbacks=[Gate("g", [])])
    async for event in events:  # the worker dies right after the refusal is stored
        seen.append(event)
        if event.object == ObjectType.TOOL_RESPONSE:
            break
    await events.aclose()
    assert summary(seen[-1]) == ("tool", "root", "transfer_to_agent", "t1", "refused: not for you")
    trace: Trace = []

    resumed = [e async for e in runner.resume("u", "s", callbacks=[Gate("g", trace)])]

    assert [summary(e) for e in resumed] == [
        ("tool", "root", "look", "c2", '{"echo":{"q":"x"}}'),
        ("model", "root", "looked"),
        ("done", "root"),
    ]
    assert ("before_agent", "admin") not in trace and admin_model.requests == []
    root_model.assert_done()


async def test_a_completed_transfer_cut_short_before_its_event_hands_over_with_its_event(
    store: SessionService,
) -> None:
    runner, root_model, admin_model = bank(store, transfer_to("admin", call_id="t1"))
    events = runner.run("u", "s", "hi")
    async for event in events:  # the worker dies after the transfer's result, before agent.transfer
        if event.object == ObjectType.TOOL_RESPONSE:
            break
    await events.aclose()

    resumed = [e async for e in runner.resume("u", "s")]

    assert [summary(e) for e in resumed] == [
        ("agent.transfer", "root"),
        ("model", "admin", "admin here"),
        ("done", "root"),
    ]
    assert len(root_model.requests) == 1
    admin_model.assert_done()
