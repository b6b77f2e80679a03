"""An MCP server's progress and questions over AG-UI, through the official client: progress as
ACTIVITY_SNAPSHOT events, a server's question (elicitation) as an `input` interrupt whose resume
entry's content reaches the server."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adk.agents import LlmAgent
from adk.agui import create_app, reply_schema
from adk.mcp import McpToolset
from adk.runner import Runner
from adk.testing import ScriptedModel
from tests._runtime import call, calls
from tests.agui.support import serving
from tests.agui.test_approvals import kinds
from tests.agui.test_js_client import run_client
from tests.mcp.servers import npm_server

ASK = "trigger-elicitation-request"


@contextmanager
def served(server: McpToolset, *steps: Any) -> Iterator[tuple[str, ScriptedModel]]:
    """An agent with `server`'s tools over AG-UI; its runner closed (and the server stopped) in the
    app's own loop when done."""
    model = ScriptedModel(list(steps))
    runner = Runner(LlmAgent("a", model=model, tools=[server]))

    async def close(request: Request) -> Response:
        await runner.close()
        return Response()

    app = create_app(runner, path="/agui")
    app.router.routes.append(Route("/close", close, methods=["POST"]))
    with serving(app) as url:
        try:
            yield url, model
        finally:
            httpx.post(url.removesuffix("/agui") + "/close", timeout=30)


def test_progress_reaches_the_official_client_as_activity_snapshots() -> None:
    server = npm_server("server-everything", "stdio")
    step = calls(call("trigger-long-running-operation", "c1", duration=0, steps=2))
    with served(server, step, "done") as (url, _):
        (run,) = run_client(
            url, "t1", {"runId": "r1"}, initialMessages=[{"id": "u1", "role": "user", "content": "go"}]
        )["runs"]
    activities = [e for e in run["events"] if e["type"] == "ACTIVITY_SNAPSHOT"]
    assert [(e["messageId"], e["activityType"], e["content"]) for e in activities] == [
        (
            "c1.progress",
            "progress",
            {"toolCallId": "c1", "tool": "trigger-long-running-operation", "progress": p},
        )
        for p in ("1/2", "2/2")
    ]
    assert kinds(run["events"]) == [
        ("RUN_STARTED", None),
        ("STATE_SNAPSHOT", None),
        ("TOOL_CALL_START", "c1"),
        *[("TOOL_CALL_ARGS", "c1")] * 4,  # the arguments, streamed in pieces
        ("TOOL_CALL_END", "c1"),
        ("ACTIVITY_SNAPSHOT", "c1.progress"),  # 1/2, while the call runs
        ("ACTIVITY_SNAPSHOT", "c1.progress"),  # 2/2
        ("TOOL_CALL_RESULT", "c1"),
        ("TEXT_MESSAGE_START", "id2"),
        ("TEXT_MESSAGE_CONTENT", "id2"),
        ("TEXT_MESSAGE_END", "id2"),
        ("RUN_FINISHED", None),
    ]


def test_a_servers_question_is_an_input_interrupt_whose_content_reaches_the_server() -> None:
    server = npm_server("server-everything", "stdio", elicitation=True)
    yes = {"status": "resolved", "payload": {"approved": True, "content": {"name": "Ada"}}}
    wrong = {"status": "resolved", "payload": {"approved": True, "content": {"name": 5}}}
    bare = {"status": "resolved", "payload": {"approved": True}}
    start = [{"id": "u1", "role": "user", "content": "go"}]
    with served(server, calls(call(ASK, "c1")), "thanks", calls(call(ASK, "c1"))) as (url, model):
        asked, answered = run_client(
            url, "t1", {"runId": "r1"}, {"runId": "r2", "resume": {"c1": yes}}, initialMessages=start
        )["runs"]
        told = model.requests[1].messages[-1].content
        # another thread, paused on the same question: answers that do not fit it are refused
        first = {"threadId": "t2", "runId": "r1", "messages": start}
        assert httpx.post(url, json=first, timeout=30).status_code == 200
        for entry, detail in (
            (
                wrong,
                "resume.0.payload: interrupt 'c1' does not fit the question's schema:"
                " name: 5 is not of type 'string'",
            ),
            (
                bare,
                "resume.0.payload: interrupt 'c1' asks a question: answer"
                ' {"approved": true, "content": {...}} as its responseSchema says',
            ),
        ):
            body = {**first, "runId": "r2", "resume": [{"interruptId": "c1", **entry}]}
            refused = httpx.post(url, json=body, timeout=30)
            assert (refused.status_code, refused.json()["detail"]) == (422, detail)
    (interrupt,) = asked["interrupts"]
    schema = interrupt["responseSchema"]["properties"]["content"]
    assert interrupt == {
        "id": "c1",
        "reason": "input",
        "message": "Please provide inputs for the following fields:",
        "toolCallId": "c1",
        "responseSchema": reply_schema(schema),
        "metadata": {"tool": ASK, "arguments": {}},
    }
    assert schema["required"] == ["name"]
    (result,) = [e["content"] for e in answered["events"] if e["type"] == "TOOL_CALL_RESULT"]
    assert result == told
    assert result.startswith("✅ User provided the requested information!") and '"name": "Ada"' in result
