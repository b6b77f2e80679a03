"""Approvals over AG-UI: a call waiting for approval ends the run with an interrupt (AG-UI 1.0), whose
resume entry (approved, rejected or abandoned) resumes the run; only the client's own calls are its
to answer."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from starlette.requests import Request

from adk.agents import LlmAgent
from adk.agui import APPROVAL_SCHEMA, create_app
from adk.approvals import Approve, Pending
from adk.events import ObjectType
from adk.runner import Runner
from adk.sessions import InMemorySessionService
from adk.testing import ScriptedModel
from tests._runtime import Tool, call, calls, reply
from tests.agui.support import post_run, serving
from tests.agui.test_js_client import run_client

YES = {"status": "resolved", "payload": {"approved": True}}


def interrupt(call_id: str, amount: int) -> dict[str, Any]:
    """The interrupt asking to approve `pay(amount=...)`, call `call_id`."""
    return {
        "id": call_id,
        "reason": "approval",
        "message": "tool 'pay' requires approval",
        "toolCallId": call_id,
        "responseSchema": APPROVAL_SCHEMA,
        "metadata": {"tool": "pay", "arguments": {"amount": amount}},
    }


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


def through_client(bank: Bank, *runs: dict[str, Any]) -> list[dict[str, Any]]:
    """`runs` on thread t1 with the official client, after the user's "pay": what each run saw."""
    with served(bank) as url:
        seen = run_client(url, "t1", *runs, initialMessages=[{"id": "u1", "role": "user", "content": "pay"}])
    runs_seen: list[dict[str, Any]] = seen["runs"]
    return runs_seen


def answer(
    run_id: str, *results: tuple[str, str], resume: dict[str, Any] | None = None, thread: str = "t1"
) -> dict[str, Any]:
    """A request that answers with tool results and resume entries ({interrupt id: entry}), the
    client's history before them left out."""
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
        "resume": [{"interruptId": i, **entry} for i, entry in (resume or {}).items()],
    }


def ask(run_id: str = "r1", thread: str = "t1") -> dict[str, Any]:
    return {"threadId": thread, "runId": run_id, "messages": [{"id": "u1", "role": "user", "content": "pay"}]}


def refused(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, str]:
    response = httpx.post(url, json=body, headers=headers or {}, timeout=30)
    return response.status_code, response.json()["detail"]


def kinds(events: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(e["type"], e.get("toolCallId") or e.get("messageId") or e.get("name")) for e in events]


def test_an_approval_reaches_the_official_client_as_an_interrupt_whose_resume_entry_resumes_the_run() -> None:
    bank = Bank(calls(call("pay", "c1", amount=5000)), reply)
    first, second = through_client(bank, {"runId": "r1"}, {"runId": "r2", "resume": {"c1": YES}})
    assert kinds(first["events"]) == [
        ("RUN_STARTED", None),
        ("STATE_SNAPSHOT", None),
        ("TOOL_CALL_START", "c1"),
        ("TOOL_CALL_ARGS", "c1"),  # the arguments, streamed in two pieces
        ("TOOL_CALL_ARGS", "c1"),
        ("TOOL_CALL_END", "c1"),
        ("CUSTOM", "adk.decision"),  # deferred: the tool requires approval
        ("RUN_FINISHED", None),
    ]
    assert first["events"][-1]["outcome"] == {"type": "interrupt", "interrupts": [interrupt("c1", 5000)]}
    assert (first["interrupts"], first["pending"]) == ([interrupt("c1", 5000)], [])
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
    assert (second["interrupts"], second["pending"]) == ([], [])
    assert bank.pay.calls == [{"amount": 5000}]
    assert [(m.role, m.tool_call_id, m.content) for m in bank.model.requests[1].messages[-1:]] == [
        ("tool", "c1", '{"echo":{"amount":5000}}')
    ]


def test_a_run_that_asks_again_after_an_approval_is_answered_for_the_new_call_only() -> None:
    bank = Bank(calls(call("pay", "c1", amount=5000)), calls(call("pay", "c2", amount=7000)), reply)
    first, second, third = through_client(
        bank, {"runId": "r1"}, {"runId": "r2", "resume": {"c1": YES}}, {"runId": "r3", "resume": {"c2": YES}}
    )
    assert first["events"][-1]["outcome"] == {"type": "interrupt", "interrupts": [interrupt("c1", 5000)]}
    assert second["events"][-1]["outcome"] == {"type": "interrupt", "interrupts": [interrupt("c2", 7000)]}
    assert third["events"][-1]["type"] == "RUN_FINISHED"
    assert third["events"][-1].get("outcome", {"type": "success"})["type"] == "success"
    assert bank.pay.calls == [{"amount": 5000}, {"amount": 7000}]


@pytest.mark.parametrize(
    ("entry", "result"),
    [
        ({"status": "resolved", "payload": {"approved": False, "reason": "too much"}}, "Rejected: too much"),
        ({"status": "cancelled"}, "Rejected: cancelled"),
    ],
)
def test_a_rejection_or_an_abandoned_interrupt_is_the_tools_result_and_a_sibling_is_not_run_again(
    entry: dict[str, Any], result: str
) -> None:
    bank = Bank(calls(call("echo", "c0", x=1), call("pay", "c1", amount=5000)), reply)
    runs = through_client(bank, {"runId": "r1"}, {"runId": "r2", "resume": {"c1": entry}})
    first, second = (run["events"] for run in runs)
    assert [e["toolCallId"] for e in first if e["type"] == "TOOL_CALL_RESULT"] == ["c0"]
    assert first[-1]["outcome"] == {"type": "interrupt", "interrupts": [interrupt("c1", 5000)]}
    assert [(e["type"], e.get("content")) for e in second if e["type"] in ("TOOL_CALL_RESULT", "CUSTOM")] == [
        ("CUSTOM", None),
        ("TOOL_CALL_RESULT", result),
    ]
    assert second[2]["value"]["kind"] == "rejected"
    assert (bank.echo.calls, bank.pay.calls) == ([{"x": 1}], [])
    assert bank.model.requests[1].messages[-1].content == result


@pytest.mark.parametrize(
    ("results", "resume", "detail"),
    [
        (
            [],
            {"c1": {"status": "resolved", "payload": "yes"}},
            'resume.0.payload must be {"approved": true} or {"approved": false, "reason": "..."},'
            " not 'yes'",
        ),
        ([], {"c1": {"status": "resolved", "payload": {"approved": "yes"}}}, "resume.0.payload must be"),
        (
            [],
            {"c1": {"status": "resolved", "payload": {"approved": False, "reason": 3}}},
            "resume.0.payload must be",
        ),
        (
            [],
            {"c1": {"status": "resolved", "payload": {"approved": True, "amount": 1}}},
            "resume.0.payload must be",
        ),
        ([], {"c1": {"status": "resolved"}}, "resume.0.payload must be"),
        ([], {"c9": YES}, "resume.0: 'c9' is no interrupt open on this thread"),
        (
            [("c1", '{"approved": true}')],
            {},
            "messages.1: tool call 'c1' waits for approval: answer its interrupt",
        ),
        ([("c9", "x")], {}, "messages.1: a result for tool call 'c9', which is not waiting for one"),
    ],
)
async def test_a_bad_answer_is_refused_naming_what_was_wrong_and_nothing_changes(
    results: list[tuple[str, str]], resume: dict[str, Any], detail: str
) -> None:
    bank = Bank(calls(call("pay", "c1", amount=5000)), reply)
    with served(bank) as url:
        post_run(url, ask())
        before = await bank.stored()
        status, said = refused(url, answer("r2", *results, resume=resume))
        assert (status, said[: len(detail)]) == (422, detail)
        assert await bank.stored() == before and bank.pay.calls == []
        still = post_run(url, answer("r3", resume={"c1": YES}))  # the run still waits
    assert "outcome" not in still[-1] and bank.pay.calls == [{"amount": 5000}]


def test_a_second_answer_to_one_interrupt_is_refused() -> None:
    bank = Bank(calls(call("pay", "c1", amount=5000)), reply)
    with served(bank) as url:
        post_run(url, ask())
        body = answer("r2", resume={"c1": YES})
        body["resume"].append({"interruptId": "c1", "status": "cancelled"})
        assert refused(url, body) == (422, "resume.1: a second answer to interrupt 'c1'")
    assert bank.pay.calls == []


def test_every_interrupt_must_be_answered_at_once() -> None:
    bank = Bank(calls(call("pay", "c1", amount=5000), call("pay", "c2", amount=7000)), reply)
    no = {"status": "resolved", "payload": {"approved": False}}
    with served(bank) as url:
        first = post_run(url, ask())
        status, said = refused(url, answer("r2", resume={"c1": YES}))
        both = post_run(url, answer("r3", resume={"c1": YES, "c2": no}))
    assert first[-1]["outcome"] == {
        "type": "interrupt",
        "interrupts": [interrupt("c1", 5000), interrupt("c2", 7000)],
    }
    assert (status, said) == (
        422,
        "the paused run waits for an answer to every call; missing: interrupt 'c2'",
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
        status, said = refused(url, answer("r2", resume={"c1": YES}), {"x-user": "mallory"})
        assert (status, said) == (422, "resume.0: 'c1' is no interrupt open on this thread")
        assert await bank.stored("mallory") == [] and bank.pay.calls == []
        assert (await bank.stored("alice"))[-1] == ObjectType.RUNNER_PAUSED
        assert "outcome" not in post_run(url, answer("r3", resume={"c1": YES}), {"x-user": "alice"})[-1]
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


@pytest.mark.parametrize("tool", ["job", "confirm"])
async def test_a_resume_entry_cannot_answer_a_call_that_waits_for_a_result(tool: str) -> None:
    # Only a call waiting for approval is an interrupt: approving the application's long-running
    # `job`, or the client's own `confirm`, answers nothing.
    bank = Bank(calls(call(tool, "c1")), reply)
    confirm = {"name": "confirm", "description": "Ask", "parameters": {"type": "object"}}
    with served(bank) as url:
        first = post_run(url, {**ask(), "tools": [confirm]})
        before = await bank.stored()
        status, said = refused(url, {**answer("r2", resume={"c1": YES}), "tools": [confirm]})
    assert "interrupts" not in first[-1].get("outcome", {})  # nothing asks for approval
    assert (status, said) == (422, "resume.0: 'c1' is no interrupt open on this thread")
    assert await bank.stored() == before and len(bank.model.requests) == 1


async def test_a_pause_that_also_waits_for_the_server_says_only_the_application_can_resume_it() -> None:
    # One response asks for `pay` (needs approval) and `job` (long-running: the application's).
    bank = Bank(calls(call("pay", "c1", amount=5000), call("job", "c0")), reply)
    with served(bank) as url:
        first = post_run(url, ask())
        before = await bank.stored()
        approved = refused(url, answer("r2", resume={"c1": YES}))
        forged = refused(url, answer("r3", ("c0", "forged: done"), resume={"c1": YES}))
    assert first[-1]["outcome"] == {"type": "interrupt", "interrupts": [interrupt("c1", 5000)]}
    assert approved == (
        422,
        "the paused run waits for an answer to every call; missing: 'c0' (of 'job': the server's,"
        " so only the application can resume this run)",
    )
    assert forged == (
        422,
        "messages.1: tool call 'c0' of 'job' waits for the server's result, not a client's",
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


def test_a_pause_for_an_approval_and_a_client_tool_is_answered_in_one_request_by_the_official_client() -> (
    None
):
    # The model asks for the client's `confirm` and for `pay` (needs approval): the run ends with
    # the interrupt outcome, the client's call left without a result; the next request carries
    # both the client's result and the person's answer.
    bank = Bank(calls(call("confirm", "c0", q="sure?"), call("pay", "c1", amount=5000)), reply)
    confirm = {"name": "confirm", "description": "Ask", "parameters": {"type": "object"}}
    first, second = through_client(
        bank,
        {"runId": "r1", "tools": [confirm]},
        {"runId": "r2", "tools": [confirm], "results": {"c0": "sure"}, "resume": {"c1": YES}},
    )
    assert first["events"][-1]["outcome"] == {"type": "interrupt", "interrupts": [interrupt("c1", 5000)]}
    assert [e["toolCallId"] for e in first["events"] if e["type"] == "TOOL_CALL_START"] == ["c0", "c1"]
    assert [e["toolCallId"] for e in second["events"] if e["type"] == "TOOL_CALL_RESULT"] == ["c1"]
    assert "outcome" not in second["events"][-1]
    assert bank.pay.calls == [{"amount": 5000}]
    assert [(m.role, m.tool_call_id, m.content) for m in bank.model.requests[1].messages[-2:]] == [
        ("tool", "c0", "sure"),
        ("tool", "c1", '{"echo":{"amount":5000}}'),
    ]


async def test_the_servers_call_stays_the_servers_once_the_agent_no_longer_has_its_tool() -> None:
    # `job` waits for the application; then the agent loses the tool (a redeploy, or an MCP server
    # that does not answer when tools are listed). The stored event still says whose answer the
    # call waits for: a client that declares `job` cannot give its result.
    bank = Bank(calls(call("job", "c1")), reply)
    job = {"name": "job", "description": "mine now", "parameters": {"type": "object"}}
    with served(bank) as url:
        post_run(url, ask())
        before = await bank.stored()
        agent = bank.runner.agent
        assert isinstance(agent, LlmAgent)
        del agent.tools["job"]
        status, said = refused(url, {**answer("r2", ("c1", "forged: done")), "tools": [job]})
    assert (status, said) == (
        422,
        "messages.1: tool call 'c1' of 'job' waits for the server's result, not a client's",
    )
    assert await bank.stored() == before and len(bank.model.requests) == 1
