"""Elicitation as a pause: a server's question (`elicitation/create`) during a tool call pauses the
run like a `Defer`, and the person's `Reply` resumes it, against `server-everything`."""

from __future__ import annotations

from typing import Any

import pytest

from adk import LlmAgent, Runner
from adk.approvals import Approve, Reject, Reply
from adk.callbacks.decisions import Approved, Deferred, Rejected
from adk.errors import ApprovalError
from adk.events import Event, ObjectType
from adk.mcp import McpResult, McpToolset
from adk.testing import ScriptedModel
from tests._runtime import call, calls
from tests.mcp.servers import npm_server
from tests.mcp.test_reference_servers import Seen, hooks_of, sent

ASK = "trigger-elicitation-request"
QUESTION = "Please provide inputs for the following fields:"


def runner_of(server: McpToolset, model: ScriptedModel, hooks: Seen) -> Runner:
    return Runner(LlmAgent("a", model=model, tools=[server]), callbacks=[hooks])


async def collect(runner: Runner, **answers: Any) -> list[Event]:
    if answers:
        return [e async for e in runner.run("u", "s", **answers)]
    return [e async for e in runner.run("u", "s", "hi")]


def asked(events: list[Event]) -> Deferred:
    """The question the paused run shows the person."""
    assert [e.object for e in events[-2:]] == [ObjectType.APPROVAL_REQUEST, ObjectType.RUNNER_PAUSED]
    assert events[-2].long_running_tool_ids == ["c1"]
    (decision,) = events[-2].decisions
    assert type(decision) is Deferred
    return decision


def response(events: list[Event]) -> Event:
    (answered,) = [e for e in events if e.object == ObjectType.TOOL_RESPONSE]
    return answered


async def test_a_servers_question_pauses_the_run_and_the_persons_reply_reaches_the_server() -> None:
    hooks = Seen("cb", [])
    model = ScriptedModel([calls(call(ASK, "c1")), "thanks"])
    server = npm_server("server-everything", "stdio", elicitation=True)
    async with runner_of(server, model, hooks) as runner:
        paused = await collect(runner)
        question = asked(paused)
        assert question == Deferred(
            "mcp:server-everything", f"tool:{ASK}", "c1", {}, QUESTION, question.schema
        )
        assert question.schema is not None and question.schema["required"] == ["name"]
        assert question.schema["properties"]["integer"]["maximum"] == 100
        assert hooks_of(hooks.trace) == [("before_tool", ASK)]  # no result yet: the call is held open
        assert [Event.model_validate_json(e.model_dump_json()) for e in paused] == paused

        resumed = await collect(runner, approvals={"c1": Reply({"name": "Ada", "integer": 7})})
    model.assert_done()
    (result,) = [t[2] for t in hooks.trace if t[0] == "after_tool"]
    assert isinstance(result, McpResult)
    assert hooks_of(hooks.trace) == [("before_tool", ASK), ("before_tool", ASK), ("after_tool", ASK, result)]
    assert response(resumed).decisions == (Approved("approvals", f"tool:{ASK}", "c1"),)
    (told,) = sent(model)
    assert told.startswith("✅ User provided the requested information!\nUser inputs:\n")
    assert '"name": "Ada"' in told and '"integer": 7' in told
    assert resumed[-1].object == ObjectType.RUNNER_COMPLETION


async def test_a_reply_must_fit_the_question_shown_and_a_rejection_declines_it() -> None:
    hooks = Seen("cb", [])
    model = ScriptedModel([calls(call(ASK, "c1")), "fine"])
    server = npm_server("server-everything", "stdio", elicitation=True)
    async with runner_of(server, model, hooks) as runner:
        asked(await collect(runner))
        where = "approvals['c1'] for session 's' of user 'u'"
        unfit = f"{where} does not fit the question's schema"
        refusals = {
            f"{unfit}: name: 5 is not of type 'string'": Reply({"name": 5}),
            f"{unfit}: integer: 101 is greater than the maximum of 100": Reply(
                {"name": "Ada", "integer": 101}
            ),
            f"{unfit}: 'name' is a required property": Reply({}),
            f"{where} asks a question: it must be Reply(values) or Reject(reason), not Approve": Approve(),
        }
        for refusal, answer in refusals.items():
            with pytest.raises(ApprovalError) as refused:
                await collect(runner, approvals={"c1": answer})
            assert str(refused.value) == refusal
        declined = await collect(runner, approvals={"c1": Reject("not now")})
    model.assert_done()
    assert response(declined).decisions == (Rejected("approvals", f"tool:{ASK}", "c1", "not now"),)
    (told,) = sent(model)
    assert told.startswith("❌ User declined to provide the requested information.")
    assert [t[:2] for t in hooks_of(hooks.trace)] == [
        ("before_tool", ASK),
        ("before_tool", ASK),
        ("after_tool", ASK),
    ]


async def test_a_reply_after_the_held_call_ended_is_a_tool_error_in_one_line() -> None:
    hooks = Seen("cb", [])
    model = ScriptedModel([calls(call(ASK, "c1")), "sorry"])
    server = npm_server("server-everything", "stdio", elicitation=True)
    async with runner_of(server, model, hooks) as runner:
        asked(await collect(runner))
        await server.close()  # as if the process that asked had ended: the open call ends with it
        resumed = await collect(runner, approvals={"c1": Reply({"name": "Ada"})})
    model.assert_done()
    assert response(resumed).content == (
        "Error: McpToolError: MCP server 'server-everything': call 'c1' has no question open to reply to:"
        " it was held open by the process that asked, which has ended or closed the connection; whether"
        " the call took effect is unknown"
    )
    assert hooks_of(hooks.trace)[:2] == [("before_tool", ASK), ("before_tool", ASK)]
