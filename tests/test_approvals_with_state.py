"""Answers that come with a state change: the change is applied, and exactly the calls that wait run."""

from __future__ import annotations

import pytest

from adk import Approve
from adk.agents import LlmAgent
from adk.errors import ApprovalError
from adk.events import ObjectType
from adk.runner import Runner
from adk.sessions import InMemorySessionService
from adk.testing import ScriptedModel
from tests._runtime import Tool, call, calls, reply, summary


def bank() -> tuple[Runner, Tool, ScriptedModel]:
    pay = Tool("pay")
    pay.requires_approval = True
    model = ScriptedModel([calls(call("pay", "c1", amount=5)), reply])
    runner = Runner(LlmAgent("bank", model=model, tools=[pay]), session_service=InMemorySessionService())
    return runner, pay, model


async def test_an_approval_sent_with_a_state_change_runs_the_approved_call_once_and_applies_the_change() -> (
    None
):
    runner, pay, model = bank()
    paused = [e async for e in runner.run("u", "s", "pay", state_delta={"theme": "light"})]
    assert paused[-1].object == ObjectType.RUNNER_PAUSED

    events = [
        summary(e)
        async for e in runner.run("u", "s", approvals={"c1": Approve()}, state_delta={"theme": "dark"})
    ]

    assert events == [
        ("state", "user", {"theme": "dark"}),
        ("tool", "bank", "pay", "c1", '{"echo":{"amount":5}}'),
        ("model", "bank", 're: {"echo":{"amount":5}}'),
        ("done", "bank"),
    ]
    assert pay.calls == [{"amount": 5}]
    session = await runner.session_service.get("u", "s")
    assert session is not None and session.state == {"theme": "dark"}
    stored = [summary(e) for e in session.events if e.object == ObjectType.TOOL_RESPONSE]
    assert stored == [("tool", "bank", "pay", "c1", '{"echo":{"amount":5}}')]
    model.assert_done()


async def test_answers_that_name_an_agent_are_refused_and_nothing_changes() -> None:
    # A resumed run goes on where it paused: `agent=` (who takes a new message) cannot be honoured.
    runner, pay, _ = bank()
    [e async for e in runner.run("u", "s", "pay")]
    before = await runner.session_service.get("u", "s")
    assert before is not None
    count = len(before.events)

    with pytest.raises(ValueError, match=r"^runner.run: agent='bank' names who takes a new message"):
        runner.run("u", "s", approvals={"c1": Approve()}, agent="bank", state_delta={"theme": "dark"})

    after = await runner.session_service.get("u", "s")
    assert after is not None and len(after.events) == count and after.state == {}
    assert pay.calls == []
    with pytest.raises(ApprovalError, match="call 'c9' is not waiting"):
        [e async for e in runner.run("u", "s", approvals={"c9": Approve()}, state_delta={"theme": "dark"})]
    after = await runner.session_service.get("u", "s")
    assert after is not None and len(after.events) == count and after.state == {}
