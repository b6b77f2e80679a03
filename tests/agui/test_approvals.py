"""Approvals over AG-UI: a call waiting for approval reaches the client as an `adk_approve` tool call,
whose result (approved or rejected) resumes the run; only the client's own calls are its to answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from starlette.requests import Request

from adk.agents import LlmAgent
from adk.agui import create_app
from adk.approvals import Approve, Pending
from adk.events import ObjectType
from adk.runner import Runner
from adk.sessions import InMemorySessionService
from adk.testing import ScriptedModel
from tests._runtime import Tool, call, calls, reply
from tests.agui.support import post_run, serving, stable_ids
from tests.agui.test_js_client import run_client

ASKED = {"tool": "pay", "arguments": {"amount": 5000}, "reason": "tool 'pay' requires approval"}
YES = '{"approved": true}'


class Bank:
    """An agent whose `pay` needs approval, beside `echo` (no approval) and `job` (long-running:
    its result is the application's to give)."""

    def __init__(self, *steps: Any) -> None:
        self.pay = Tool("pay")
        self.pay.requires_approval = True
        self.echo = Tool("echo")
        self.job = Tool("job", lambda args, ctx: Pending("job 7"))
        self.model = ScriptedModel(steps)
        agent = LlmAgent("bank", model=self.model, tools=[self.pay, self.echo, self.job])
        self.sessions = InMemorySessionService()
        self.runner = Runner(agent, session_service=self.sessions)

    async def stored(self, user: str = "anonymous", thread: str = "t1") -> list[str]:
        session = await self.sessions.get(user, thread)
        return [] if session is None else [e.object for e in session.events]


def user(request: Request) -> str | None:
    return request.headers.get("x-user")


@contextmanager
def served(bank: Bank, **kw: Any) -> Iterator[str]:
    with serving(create_app(bank.runner, path="/agui", **kw)) as url:
        yield url


def answer(run_id: str, *results: tuple[str, str], thread: str = "t1") -> dict[str, Any]:
    """A request that answers with tool results (the client's history before them left out)."""
    return {
        "threadId": thread,
        "runId": run_id,
        "messages": [
            {"id": "u1", "role": "user", "content": "pay"},
            *(
                {"id": f"m{i}", "role": "tool", "toolCallId": c, "content": v}
                for i, (c, v) in enumerate(results)
            ),
        ],
    }


def ask(run_id: str = "r1", thread: str = "t1") -> dict[str, Any]:
    return {"threadId": thread, "runId": run_id, "messages": [{"id": "u1", "role": "user", "content": "pay"}]}


def refused(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, str]:
    response = httpx.post(url, json=body, headers=headers or {}, timeout=30)
    return response.status_code, response.json()["detail"]


def kinds(events: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(e["type"], e.get("toolCallId") or e.get("messageId") or e.get("name")) for e in events]


def test_an_approval_reaches_the_official_client_as_a_tool_call_whose_answer_resumes_the_run() -> None:
    bank = Bank(calls(call("pay", "c1", amount=5000)), reply)
    with served(bank) as url:
        seen = run_client(
            url,
            "t1",
            {"runId": "r1", "answer": YES},
            {"runId": "r2"},
            initialMessages=[{"id": "u1", "role": "user", "content": "pay"}],
        )
    first, second = seen["runs"]
    assert kinds(first["events"]) == [
        ("RUN_STARTED", None),
        ("STATE_SNAPSHOT", None),
        ("TOOL_CALL_START", "c1"),
        ("TOOL_CALL_ARGS", "c1"),  # the arguments, streamed in two pieces
        ("TOOL_CALL_ARGS", "c1"),
        ("TOOL_CALL_END", "c1"),
        ("CUSTOM", "adk.decision"),
        ("TOOL_CALL_START", "adk_approve:c1"),
        ("TOOL_CALL_ARGS", "adk_approve:c1"),
        ("TOOL_CALL_END", "adk_approve:c1"),
        ("RUN_FINISHED", None),
    ]
    start, args = first["events"][7:9]
    assert (start["toolCallName"], "parentMessageId" in start) == ("adk_approve", False)
    assert json.loads(args["delta"]) == ASKED
    assert first["pending"] == ["adk_approve:c1"]
    assert kinds(second["events"]) == [
        ("RUN_STARTED", None),
        ("STATE_SNAPSHOT", None),
        ("CUSTOM", "adk.decision"),  # approved, by the person's answer
        ("TOOL_CALL_RESULT", "c1"),  # the paid call's, which ran
        ("TEXT_MESSAGE_START", "id2"),
        ("TEXT_MESSAGE_CONTENT", "id2"),  # the answer, streamed in two pieces
        ("TEXT_MESSAGE_CONTENT", "id2"),
        ("TEXT_MESSAGE_END", "id2"),
        ("RUN_FINISHED", None),
    ]
    assert second["events"][2]["value"]["kind"] == "approved"
    assert second["pending"] == []
    assert bank.pay.calls == [{"amount": 5000}]
    assert [(m.role, m.tool_call_id, m.content) for m in bank.model.requests[1].messages[-1:]] == [
        ("tool", "c1", '{"echo":{"amount":5000}}')
    ]


def test_a_rejection_is_the_tools_result_and_a_sibling_that_ran_is_not_run_again() -> None:
    bank = Bank(calls(call("echo", "c0", x=1), call("pay", "c1", amount=5000)), reply)
    with served(bank) as url:
        first = stable_ids(post_run(url, ask()))
        rejected = '{"approved": false, "reason": "too much"}'
        second = stable_ids(post_run(url, answer("r2", ("adk_approve:c1", rejected))))
    assert [e["toolCallId"] for e in first if e["type"] == "TOOL_CALL_RESULT"] == ["c0"]
    assert first[-1]["outcome"] == {"type": "success", "pendingToolCallIds": ["adk_approve:c1"]}
    assert [(e["type"], e.get("content")) for e in second if e["type"] in ("TOOL_CALL_RESULT", "CUSTOM")] == [
        ("CUSTOM", None),
        ("TOOL_CALL_RESULT", "Rejected: too much"),
    ]
    assert (bank.echo.calls, bank.pay.calls) == ([{"x": 1}], [])
    assert bank.model.requests[1].messages[-1].content == "Rejected: too much"


@pytest.mark.parametrize(
    ("results", "detail"),
    [
        (
            [("adk_approve:c1", "yes")],
            "messages.1: the answer to 'adk_approve:c1' must be {\"approved\": true} or"
            ' {"approved": false, "reason": "..."}, not \'yes\'',
        ),
        (
            [("adk_approve:c1", '{"approved": "yes"}')],
            "messages.1: the answer to 'adk_approve:c1' must be",
        ),
        (
            [("adk_approve:c1", '{"approved": false, "reason": 3}')],
            "messages.1: the answer to 'adk_approve:c1' must be",
        ),
        (
            [("adk_approve:c1", '{"approved": true, "amount": 1}')],
            "messages.1: the answer to 'adk_approve:c1' must be",
        ),
        ([("adk_approve:c9", YES)], "messages.1: 'adk_approve:c9' answers no call waiting for approval"),
        ([("c1", '{"ok": true}')], "messages.1: tool call 'c1' waits for approval: answer adk_approve:c1"),
        ([("c9", "x")], "messages.1: a result for tool call 'c9', which is not waiting for one"),
    ],
)
def test_a_bad_answer_is_refused_naming_the_call_and_nothing_changes(
    results: list[tuple[str, str]], detail: str
) -> None:
    bank = Bank(calls(call("pay", "c1", amount=5000)), reply)
    with served(bank) as url:
        post_run(url, ask())
        status, said = refused(url, answer("r2", *results))
        assert (status, said[: len(detail)]) == (422, detail)
        still = stable_ids(post_run(url, answer("r3", ("adk_approve:c1", YES))))  # the run still waits
    assert still[-1]["type"] == "RUN_FINISHED" and bank.pay.calls == [{"amount": 5000}]


def test_every_waiting_call_must_be_answered_at_once() -> None:
    bank = Bank(calls(call("pay", "c1", amount=5000), call("pay", "c2", amount=7000)), reply)
    with served(bank) as url:
        first = post_run(url, ask())
        status, said = refused(url, answer("r2", ("adk_approve:c1", YES)))
        both = post_run(url, answer("r3", ("adk_approve:c1", YES), ("adk_approve:c2", '{"approved": false}')))
    assert first[-1]["outcome"]["pendingToolCallIds"] == ["adk_approve:c1", "adk_approve:c2"]
    assert (status, said) == (
        422,
        "messages: the paused run waits for an answer to every call; missing: 'adk_approve:c2'",
    )
    assert [e["content"] for e in both if e["type"] == "TOOL_CALL_RESULT"] == [
        '{"echo":{"amount":5000}}',
        "Rejected",
    ]
    assert bank.pay.calls == [{"amount": 5000}]


@pytest.mark.parametrize("declared", [False, True])
async def test_a_client_cannot_forge_the_result_of_a_call_that_waits_for_the_server(declared: bool) -> None:
    # `job` returned Pending: its result is the application's (runner.run(tool_results=...)), not
    # a client's, even one that declares a tool of the same name.
    bank = Bank(calls(call("job", "c1")), reply)
    tools = [{"name": "job", "description": "mine now", "parameters": {"type": "object"}}] if declared else []
    with served(bank) as url:
        first = post_run(url, ask())
        before = await bank.stored()
        status, said = refused(url, {**answer("r2", ("c1", "forged: done")), "tools": tools})
    assert "pendingToolCallIds" not in (first[-1].get("outcome") or {})  # nothing for the client to answer
    assert (status, said) == (
        422,
        "messages.1: tool call 'c1' of 'job' waits for the server's result, not a client's",
    )
    assert await bank.stored() == before
    assert before[-1] == ObjectType.RUNNER_PAUSED and len(bank.model.requests) == 1
    events = [e async for e in bank.runner.run("anonymous", "t1", tool_results={"c1": "done"})]
    assert [e.content for e in events if e.object == ObjectType.TOOL_RESPONSE] == ["done"]


async def test_another_user_cannot_answer_a_users_approval() -> None:
    bank = Bank(calls(call("pay", "c1", amount=5000)), reply)
    with served(bank, identity=user) as url:
        assert post_run(url, ask(), {"x-user": "alice"})[-1]["type"] == "RUN_FINISHED"
        status, said = refused(url, answer("r2", ("adk_approve:c1", YES)), {"x-user": "mallory"})
        assert (status, said) == (422, "messages.1: 'adk_approve:c1' answers no call waiting for approval")
        assert await bank.stored("mallory") == [] and bank.pay.calls == []
        assert (await bank.stored("alice"))[-1] == ObjectType.RUNNER_PAUSED
        assert (
            post_run(url, answer("r3", ("adk_approve:c1", YES)), {"x-user": "alice"})[-1]["type"]
            == "RUN_FINISHED"
        )
    assert bank.pay.calls == [{"amount": 5000}]


def test_a_client_tool_s_own_result_is_still_the_clients_to_give() -> None:
    bank = Bank(calls(call("confirm", "c1", q="sure?")), reply)
    confirm = {"name": "confirm", "description": "Ask", "parameters": {"type": "object"}}
    with served(bank) as url:
        first = post_run(url, {**ask(), "tools": [confirm]})
        second = post_run(url, {**answer("r2", ("c1", "yes")), "tools": [confirm]})
    assert first[-1]["outcome"]["pendingToolCallIds"] == ["c1"]
    assert [e["type"] for e in second][-2:] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    assert bank.model.requests[1].messages[-1].content == "yes"


def test_a_declared_adk_approve_is_never_offered_to_the_model() -> None:
    # A front end may declare `adk_approve` to render approvals; were the model offered it, a call
    # of the model's could stand where a person's approval should.
    bank = Bank(calls(call("adk_approve", "adk_approve:c9", tool="pay")), reply)
    approve = {"name": "adk_approve", "description": "Approve", "parameters": {"type": "object"}}
    confirm = {"name": "confirm", "description": "Ask", "parameters": {"type": "object"}}
    with served(bank) as url:
        events = post_run(url, {**ask(), "tools": [approve, confirm]})
    assert [t.name for t in bank.model.requests[0].tools] == ["pay", "echo", "job", "confirm"]
    results = [e["content"] for e in events if e["type"] == "TOOL_CALL_RESULT"]
    assert len(results) == 1 and results[0].startswith("Error: ToolNotFoundError: unknown tool 'adk_approve'")
    assert "pendingToolCallIds" not in (events[-1].get("outcome") or {})
    assert bank.pay.calls == []


async def test_a_pause_that_also_waits_for_the_server_says_only_the_application_can_resume_it() -> None:
    # One response asks for `pay` (needs approval) and `job` (long-running: the application's).
    bank = Bank(calls(call("pay", "c1", amount=5000), call("job", "c0")), reply)
    with served(bank) as url:
        first = post_run(url, ask())
        before = await bank.stored()
        approved = refused(url, answer("r2", ("adk_approve:c1", YES)))
        forged = refused(url, answer("r3", ("adk_approve:c1", YES), ("c0", "forged: done")))
    assert first[-1]["outcome"]["pendingToolCallIds"] == ["adk_approve:c1"]
    assert approved == (
        422,
        "messages: the paused run waits for an answer to every call; missing: 'c0' (of 'job': the"
        " server's, so only the application can resume this run)",
    )
    assert forged == (
        422,
        "messages.2: tool call 'c0' of 'job' waits for the server's result, not a client's",
    )
    assert await bank.stored() == before and bank.pay.calls == []
    events = [
        e
        async for e in bank.runner.run(
            "anonymous", "t1", approvals={"c1": Approve()}, tool_results={"c0": "done"}
        )
    ]
    results = [e.content for e in events if e.object == ObjectType.TOOL_RESPONSE]
    assert results == ['{"echo":{"amount":5000}}', "done"]
    assert bank.pay.calls == [{"amount": 5000}]
