"""Resuming over AG-UI keeps adk's promises: a refused transfer stays refused, one identity's resume
is no other's business (whatever `runId` it picks), and an answer sent with changed state runs
exactly the calls that wait."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from starlette.requests import Request

from adk import Cont, Halt, ToolContext
from adk.agents import LlmAgent
from adk.agui import create_app
from adk.events import ObjectType
from adk.runner import Runner
from adk.sessions import InMemorySessionService
from adk.testing import ScriptedModel
from tests._runtime import call, calls, reply
from tests.agui.support import post_run, serving, verified
from tests.agui.test_approvals import YES, Bank, answer, ask, interrupt, through_client

CONFIRM = {"name": "confirm", "description": "Ask", "parameters": {"type": "object"}}


class NoAdmin:
    """Refuses every transfer to `admin`."""

    def before_tool(self, ctx: ToolContext) -> Cont[ToolContext] | Halt[str]:
        if ctx.tool.name == "transfer_to_agent" and ctx.args.get("agent_name") == "admin":
            return Halt("refused: not for you")
        return Cont(ctx)


async def test_answering_a_client_tool_beside_a_refused_transfer_does_not_hand_over() -> None:
    refused_and_confirm = calls(call("transfer_to_agent", "t1", agent_name="admin"), call("confirm", "c1"))
    root_model, admin_model = ScriptedModel([refused_and_confirm, reply]), ScriptedModel(["admin here"])
    admin = LlmAgent("admin", model=admin_model)
    root = LlmAgent("root", model=root_model, sub_agents=[admin], callbacks=[NoAdmin()])
    runner = Runner(root, session_service=InMemorySessionService())
    with serving(create_app(runner, path="/agui")) as url:
        first = post_run(url, {**ask(), "tools": [CONFIRM]})
        second = post_run(url, {**answer("r2", ("c1", "yes")), "tools": [CONFIRM]})
    assert first[-1]["outcome"]["pendingToolCallIds"] == ["c1"]
    assert [(e["type"], e.get("content")) for e in first if e["type"] == "TOOL_CALL_RESULT"] == [
        ("TOOL_CALL_RESULT", "refused: not for you")
    ]
    assert [e["delta"] for e in second if e["type"] == "TEXT_MESSAGE_CONTENT"] == ["re:", " yes"]
    assert second[-1]["type"] == "RUN_FINISHED"
    assert admin_model.requests == []
    session = await runner.session_service.get("anonymous", "t1")
    assert session is not None
    assert ObjectType.AGENT_TRANSFER not in [e.object for e in session.events]
    assert [e.author for e in session.events if e.object == ObjectType.CHAT_COMPLETION][-1] == "root"


def user(request: Request) -> str | None:
    return request.headers.get("x-user")


async def posted(client: httpx.AsyncClient, body: dict[str, Any], who: str) -> list[dict[str, Any]]:
    response = await client.post("/agui", json=body, headers={"x-user": who, "accept": "text/event-stream"})
    assert response.status_code == 200, response.text
    return verified(
        [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]
    )


async def test_a_run_of_another_identity_named_like_a_run_being_resumed_is_its_own_new_run() -> None:
    started, go = asyncio.Event(), asyncio.Event()

    async def slow_pay(args: dict[str, Any], ctx: ToolContext) -> str:
        started.set()
        await go.wait()
        return "paid"

    bank = Bank(calls(call("pay", "c1", amount=5000)), reply, reply)
    bank.pay._fn = slow_pay
    app = create_app(bank.runner, path="/agui", identity=user)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=30) as client:
        paused = await posted(client, ask("r1"), "alice")
        assert paused[-1]["outcome"] == {"type": "interrupt", "interrupts": [interrupt("c1", 5000)]}
        alice = asyncio.ensure_future(posted(client, answer("r2", resume={"c1": YES}), "alice"))
        await started.wait()  # alice's invocation r1 is being resumed, its tool running
        mallory = await posted(client, ask("r1"), "mallory")
        go.set()
        resumed = await alice

    assert [e["type"] for e in mallory if e["type"].startswith("RUN_")] == ["RUN_STARTED", "RUN_FINISHED"]
    assert [e["delta"] for e in mallory if e["type"] == "TEXT_MESSAGE_CONTENT"] == ["re:", " pay"]
    assert await bank.stored("mallory") == [ObjectType.CHAT_COMPLETION] * 2 + [ObjectType.RUNNER_COMPLETION]
    assert [e.get("content") for e in resumed if e["type"] == "TOOL_CALL_RESULT"] == ["paid"]
    assert resumed[-1]["type"] == "RUN_FINISHED" and bank.pay.calls == [{"amount": 5000}]


def test_an_answer_from_the_official_client_whose_state_changed_runs_the_approved_call_once() -> None:
    # The person changed a setting while the approval dialog was open: the client's next request
    # carries that state beside the answer.
    bank = Bank(calls(call("pay", "c1", amount=5000)), reply)
    first, second = through_client(
        bank,
        {"runId": "r1", "state": {"units": "metric"}},
        {"runId": "r2", "resume": {"c1": YES}, "state": {"units": "imperial"}},
    )
    assert first["events"][-1]["outcome"] == {"type": "interrupt", "interrupts": [interrupt("c1", 5000)]}
    results = [e["content"] for e in second["events"] if e["type"] == "TOOL_CALL_RESULT"]
    assert results == ['{"echo":{"amount":5000}}']
    assert "outcome" not in second["events"][-1]
    assert bank.pay.calls == [{"amount": 5000}]
    assert second["events"][1] == {"type": "STATE_SNAPSHOT", "snapshot": {"units": "imperial"}}
    tool_messages = [(m.tool_call_id, m.content) for m in bank.model.requests[1].messages if m.role == "tool"]
    assert tool_messages == [("c1", '{"echo":{"amount":5000}}')]
