"""An MCP server's question (elicitation) answered over A2A: the paused run's task is
`input-required`, its status showing the question and the reply's schema; the a2a-sdk's own client
answers with a data part holding the reply's values, checked against that schema, and the server
gets them. Against `server-everything` on stdio and `adk a2a serve`'s app on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from google.protobuf.json_format import MessageToDict
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adk import LlmAgent, Runner
from adk.a2a import create_app
from adk.callbacks.decisions import Approved, Deferred, Rejected
from adk.events import Event, ObjectType
from adk.mcp import McpResult
from adk.testing import ScriptedModel
from tests._runtime import call, calls
from tests.a2a.support import client, send, serving, shape
from tests.mcp.servers import npm_server
from tests.mcp.test_reference_servers import Seen, hooks_of, sent

pytestmark = pytest.mark.usefixtures("testing")

ASK = "trigger-elicitation-request"
QUESTION = "Please provide inputs for the following fields:"
BY = "mcp:server-everything"


def app_of(runner: Runner, url: str) -> Any:
    """`adk a2a serve`'s app, and `/close`, which closes the runner (its MCP connection) in the
    server's own loop, where the connection was opened."""
    app = create_app(runner, url=url)

    async def close(request: Request) -> Response:
        await runner.close()
        return Response()

    app.router.routes.append(Route("/close", close, methods=["POST"]))
    return app


async def asked_and_answered(*answers: dict[str, Any]) -> tuple[Runner, ScriptedModel, Seen, list[Any]]:
    """Ask (the model calls the asking tool), then send each of `answers` (the message's `text` or
    `data`) on the task; every response of each message, the first's too."""
    hooks = Seen("cb", [])
    model = ScriptedModel([calls(call(ASK, "c1")), "thanks"])
    server = npm_server("server-everything", "stdio", elicitation=True)
    runner = Runner(LlmAgent("clerk", model=model, tools=[server]), callbacks=[hooks])
    responses: list[Any] = []
    with serving(lambda url: app_of(runner, url)) as url:
        try:
            async with client(url) as c:
                responses.append(await send(c, "ask me"))
                status = responses[0][-1].status_update
                for answer in answers:
                    responses.append(
                        await send(c, task_id=status.task_id, context_id=status.context_id, **answer)
                    )
        finally:
            async with httpx.AsyncClient() as http:
                await http.post(url + "close", timeout=30)
    model.assert_done()
    return runner, model, hooks, responses


async def events_of(runner: Runner, responses: list[Any]) -> list[Event]:
    status = responses[0][-1].status_update
    session = await runner.session_service.get("anonymous", status.context_id)
    assert session is not None
    return session.events


async def test_the_status_shows_the_question_and_a_fitting_reply_reaches_the_server() -> None:
    refusals: list[dict[str, Any]] = [
        {"text": "approve"},
        {"text": "", "data": {"approvals": {"c1": {"reply": {"name": 5}}}}},
        {"text": "", "data": {"approvals": {"c1": {"reply": {"name": "Ada", "integer": 101}}}}},
        {"text": "", "data": {"approvals": {"c1": {"approved": True}}}},
    ]
    reply = {"text": "", "data": {"approvals": {"c1": {"reply": {"name": "Ada", "integer": 7}}}}}
    runner, model, hooks, responses = await asked_and_answered(*refusals, reply)
    events = await events_of(runner, responses)
    (request,) = [e for e in events if e.object == ObjectType.APPROVAL_REQUEST]
    (question,) = request.decisions
    assert type(question) is Deferred and question.schema is not None
    assert question == Deferred(BY, f"tool:{ASK}", "c1", {}, QUESTION, question.schema)
    schema = question.schema
    assert schema["required"] == ["name"] and schema["properties"]["integer"]["maximum"] == 100

    first = responses[0]
    compact = first[-1].status_update.status.message.parts[0].text.split("schema ", 1)[1]
    assert [shape(x) for x in first] == [
        ("task", "TASK_STATE_SUBMITTED"),
        ("status", "TASK_STATE_WORKING", ""),
        (
            "status",
            "TASK_STATE_INPUT_REQUIRED",
            "an answer needed for 1 call(s):\n"
            f"- {ASK}({{}}) [call c1] asks ({BY}): {QUESTION}"
            f" -- reply with values fitting the schema {compact}",
        ),
    ]
    assert json.loads(compact) == schema
    # the schema shown, as text and as data, is the one the reply is checked against
    assert MessageToDict(first[-1].status_update.status.message.parts[1].data) == {
        "questions": [
            {
                "call_id": "c1",
                "tool": ASK,
                "arguments": {},
                "asked_by": BY,
                "question": QUESTION,
                "schema": schema,
            }
        ]
    }
    one_line = [[shape(x) for x in r] for r in responses[1:5]]
    unfit = "approvals.c1.reply does not fit the question's schema"
    assert one_line == [
        [
            (
                "status",
                "TASK_STATE_INPUT_REQUIRED",
                'approvals.c1 asks a question: answer it with a data part {"approvals": {"c1":'
                ' {"reply": {...}}}} whose values fit its schema, or "reject: <reason>"',
            )
        ],
        [("status", "TASK_STATE_INPUT_REQUIRED", f"{unfit}: name: 5 is not of type 'string'")],
        [
            (
                "status",
                "TASK_STATE_INPUT_REQUIRED",
                f"{unfit}: integer: 101 is greater than the maximum of 100",
            )
        ],
        [
            (
                "status",
                "TASK_STATE_INPUT_REQUIRED",
                'approvals.c1 asks a question: answer it with a data part {"approvals": {"c1":'
                ' {"reply": {...}}}} whose values fit its schema, or "reject: <reason>"',
            )
        ],
    ]
    assert [shape(x) for x in responses[5]] == [
        ("status", "TASK_STATE_WORKING", ""),
        ("artifact", "answer", "thanks", False),
        ("status", "TASK_STATE_COMPLETED", ""),
    ]
    (result,) = [t[2] for t in hooks.trace if t[0] == "after_tool"]
    assert isinstance(result, McpResult)
    # held open while the refusals came: the call's before_tool ran again only on the reply
    assert hooks_of(hooks.trace) == [("before_tool", ASK), ("before_tool", ASK), ("after_tool", ASK, result)]
    (told,) = sent(model)
    assert told.startswith("✅ User provided the requested information!\nUser inputs:\n")
    assert '"name": "Ada"' in told and '"integer": 7' in told  # not 7.0: the person wrote 7
    (answered,) = [e for e in events if e.object == ObjectType.TOOL_RESPONSE]
    assert answered.decisions == (Approved("approvals", f"tool:{ASK}", "c1"),)
    assert [e.object for e in events][-3:] == [
        ObjectType.TOOL_RESPONSE,
        ObjectType.CHAT_COMPLETION,
        ObjectType.RUNNER_COMPLETION,
    ]


async def test_a_rejection_declines_the_question() -> None:
    runner, model, hooks, responses = await asked_and_answered({"text": "reject: not now"})
    assert [shape(x) for x in responses[1]][-2:] == [
        ("artifact", "answer", "thanks", False),
        ("status", "TASK_STATE_COMPLETED", ""),
    ]
    (told,) = sent(model)
    assert told.startswith("❌ User declined to provide the requested information.")
    (answered,) = [e for e in await events_of(runner, responses) if e.object == ObjectType.TOOL_RESPONSE]
    assert answered.decisions == (Rejected("approvals", f"tool:{ASK}", "c1", "not now"),)
    assert [t[:2] for t in hooks_of(hooks.trace)] == [
        ("before_tool", ASK),
        ("before_tool", ASK),
        ("after_tool", ASK),
    ]
