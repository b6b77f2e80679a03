"""`adk a2a serve`'s app against the a2a-sdk's own client, on a real uvicorn on 127.0.0.1: the
card, message/send, message/stream, input-required for approvals, users kept apart, bad input."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver
from a2a.types import GetTaskRequest
from google.protobuf.json_format import MessageToDict

from adk import LlmAgent, Runner, tool
from adk.a2a import create_app
from adk.cli import main
from adk.testing import ScriptedModel, Stream, call_tool
from tests.a2a.support import client, send, serving, shape

pytestmark = pytest.mark.usefixtures("testing")

paid: list[int] = []


@tool(requires_approval=True)
def pay(amount: int) -> str:
    """Pay an amount."""
    paid.append(amount)
    return f"paid {amount}"


def runner(*steps: Any) -> tuple[Runner, ScriptedModel]:
    model = ScriptedModel(steps)
    return Runner(LlmAgent("cashier", model=model, description="takes payments", tools=[pay])), model


async def test_the_card_names_the_agent_its_tools_and_url() -> None:
    r, _ = runner()
    with serving(lambda url: create_app(r, url=url)) as url:
        async with httpx.AsyncClient() as http:
            card = MessageToDict(await A2ACardResolver(http, url).get_agent_card())
    assert card["name"] == "cashier" and card["description"] == "takes payments"
    assert card["supportedInterfaces"] == [
        {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ]
    assert card["capabilities"] == {"streaming": True, "pushNotifications": False}
    assert [(s["id"], s["description"]) for s in card["skills"]] == [("pay", "Pay an amount.")]


async def test_message_send_answers_with_the_completed_task() -> None:
    r, model = runner("Hello there")
    with serving(lambda url: create_app(r, url=url)) as url:
        async with client(url, streaming=False) as c:
            (response,) = await send(c, "hi")
    task = response.task
    assert task.status.state == 3  # TASK_STATE_COMPLETED
    # the chunks streamed (one part each), appended into one artifact
    assert [(a.name, [p.text for p in a.parts]) for a in task.artifacts] == [("answer", ["Hello", " there"])]
    assert model.requests[0].messages[-1].content == "hi"
    stored = await r.session_service.get("anonymous", task.context_id)
    assert stored is not None and {e.invocation_id for e in stored.events} == {
        task.id
    }  # task id = invocation id


async def test_message_stream_sends_text_chunks_then_completed() -> None:
    r, _ = runner(Stream(["Hel", "lo ", "there"]))
    with serving(lambda url: create_app(r, url=url)) as url:
        async with client(url) as c:
            shapes = [shape(x) for x in await send(c, "hi")]
    assert shapes == [
        ("task", "TASK_STATE_SUBMITTED"),
        ("status", "TASK_STATE_WORKING", ""),
        ("artifact", "answer", "Hel", False),
        ("artifact", "answer", "lo ", True),
        ("artifact", "answer", "there", True),
        ("status", "TASK_STATE_COMPLETED", ""),
    ]


async def test_a_paused_approval_is_input_required_then_answered_then_completed() -> None:
    paid.clear()
    r, model = runner(
        call_tool("pay", amount=5, call_id="c1"), "Done", call_tool("pay", amount=7, call_id="c2"), "Ok"
    )
    with serving(lambda url: create_app(r, url=url)) as url:
        async with client(url) as c:
            first = await send(c, "pay 5")
            asked = first[-1].status_update
            assert shape(first[-1]) == (
                "status",
                "TASK_STATE_INPUT_REQUIRED",
                "approval needed for 1 call(s):\n"
                "- pay({'amount': 5}) [call c1]: tool 'pay' requires approval",
            )
            assert MessageToDict(asked.status.message.parts[1].data) == {
                "approval_requests": [
                    {
                        "call_id": "c1",
                        "tool": "pay",
                        "arguments": {"amount": 5.0},
                        "reason": "tool 'pay' requires approval",
                    }
                ]
            }
            assert paid == []
            task, context = asked.task_id, asked.context_id
            refused = await send(c, "maybe", task_id=task, context_id=context)
            assert shape(refused[-1])[:2] == ("status", "TASK_STATE_INPUT_REQUIRED")
            assert shape(refused[-1])[2].startswith(
                "'maybe' is not an answer; answer with the text \"approve\""
            )
            assert paid == []
            done = await send(c, "approve", task_id=task, context_id=context)
            assert [shape(x) for x in done][-2:] == [
                ("artifact", "answer", "Done", False),
                ("status", "TASK_STATE_COMPLETED", ""),
            ]
            assert paid == [5]
            second = await send(c, "pay 7", context_id=context)  # the same session: a new task
            rejected = await send(
                c,
                "",
                task_id=second[-1].status_update.task_id,
                context_id=context,
                data={"approvals": {"c2": {"approved": False, "reason": "too much"}}},
            )
            assert shape(rejected[-1]) == ("status", "TASK_STATE_COMPLETED", "")
    assert paid == [5]
    assert model.requests[-1].messages[-1].content == "Rejected: too much"


async def test_each_user_sees_only_their_own_tasks_and_sessions() -> None:
    r, model = runner("one", "two")

    def identity(request: Any) -> str | None:
        return request.headers.get("x-user")

    with serving(lambda url: create_app(r, url=url, identity=identity)) as url:
        async with client(url, headers={"x-user": "alice"}) as alice:
            task = (await send(alice, "secret"))[-1].status_update
        async with client(url, headers={"x-user": "bob"}) as bob:
            with pytest.raises(Exception, match="Task not found"):
                await bob.get_task(GetTaskRequest(id=task.task_id))
            await send(bob, "hello", context_id=task.context_id)  # alice's context id names bob's own session
        async with httpx.AsyncClient() as http:
            anonymous = await http.post(
                url, json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}}
            )
            card = await http.get(url + ".well-known/agent-card.json")
    assert [m.content for m in model.requests[1].messages if m.role == "user"] == ["hello"]
    assert (await r.session_service.get("bob", task.context_id)) is not None
    assert (anonymous.status_code, anonymous.json()) == (
        401,
        {"detail": "the request carries no identity this server accepts"},
    )
    assert card.status_code == 200


async def test_a_body_over_the_limit_is_refused_unread() -> None:
    r, _ = runner()
    with serving(lambda url: create_app(r, url=url, max_body=100)) as url:
        async with httpx.AsyncClient() as http:
            response = await http.post(url, content=b"x" * 101, headers={"content-type": "application/json"})
    assert (response.status_code, response.json()) == (
        413,
        {"detail": "the request body is larger than the limit of 100 bytes"},
    )


def test_serving_beyond_loopback_needs_an_identity(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["a2a", "serve", "agent.py", "--host", "0.0.0.0"]) == 1
    assert capsys.readouterr().err == (
        "adk: refusing to serve on 0.0.0.0 without --identity MODULE:FUNCTION: every client would be "
        "'anonymous' and could read any thread it names (--insecure-anonymous serves it anyway)\n"
    )
