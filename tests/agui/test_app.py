"""The ASGI app under a real uvicorn on 127.0.0.1, driven by a Python client over httpx."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.requests import Request

from adk.agents import LlmAgent
from adk.agui import TranslateContext, create_app
from adk.errors import BadRequestError
from adk.events import Event, LlmResponse, ObjectType, ToolCall
from adk.models.base import Model
from adk.runner import Runner
from adk.sessions.sqlite import SqliteSessionService
from adk.testing import ScriptedModel
from tests.agui.support import (
    Hanging,
    post_run,
    run_finished,
    run_input,
    run_started,
    serving,
    stable_ids,
    text,
    tool_call,
    tool_result,
    weather,
)

PATH = "/agui"


def weather_script() -> ScriptedModel:
    call = ToolCall.of("weather", '{"city": "Paris"}', id="call_1")
    return ScriptedModel([LlmResponse.calls(call, content="Checking"), "Sunny in Paris"])


def make_runner(model: Model) -> Runner:
    return Runner(LlmAgent("helper", model=model, tools=[weather]))


@pytest.fixture
def model() -> ScriptedModel:
    return weather_script()


@pytest.fixture
def runner(model: ScriptedModel) -> Runner:
    return make_runner(model)


@pytest.fixture
def url(runner: Runner) -> Iterator[str]:
    with serving(create_app(runner, path=PATH)) as url:
        yield url


WEATHER_RUN = [
    run_started("t1", "r1"),
    {"type": "STATE_SNAPSHOT", "snapshot": {}},
    *text("id1", "Checking")[:-1],
    *tool_call("call_1", "weather", '{"city":', ' "Paris"}', parent="id1")[:-1],
    {"type": "TEXT_MESSAGE_END", "messageId": "id1"},
    {"type": "TOOL_CALL_END", "toolCallId": "call_1"},
    tool_result("id2", "call_1", '{"city":"Paris","sky":"sunny"}'),
    {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/last_city", "value": "Paris"}]},
    *text("id3", "Sunny", " in", " Paris"),
    run_finished("t1", "r1"),
]


def test_a_streamed_tool_run_arrives_as_the_complete_event_sequence(url: str, model: ScriptedModel) -> None:
    assert stable_ids(post_run(url, run_input("t1", "r1", "Weather in Paris?"))) == WEATHER_RUN
    assert [r.stream for r in model.requests] == [True, True]
    assert model.requests[0].messages[-1].content == "Weather in Paris?"


def test_the_thread_is_the_session_and_the_run_is_the_invocation(runner: Runner, url: str) -> None:
    post_run(url, run_input("t1", "r1", "Weather in Paris?"))
    runner.agent.model = ScriptedModel(["Still sunny"])  # type: ignore[attr-defined]
    second = post_run(url, run_input("t1", "r2", "And now?"))
    assert stable_ids(second) == [
        run_started("t1", "r2"),
        {"type": "STATE_SNAPSHOT", "snapshot": {"last_city": "Paris"}},
        *text("id1", "Still", " sunny"),
        run_finished("t1", "r2"),
    ]
    session = asyncio.run(runner.session_service.get("anonymous", "t1"))
    assert session is not None
    assert [e.invocation_id for e in session.events if e.author == "user"] == ["r1", "r2"]


def test_the_last_user_message_is_the_message_and_text_parts_are_joined(
    url: str, model: ScriptedModel
) -> None:
    body = run_input("t1", "r1", "ignored")
    body["messages"] += [
        {"id": "a1", "role": "assistant", "content": "earlier answer"},
        {
            "id": "u2",
            "role": "user",
            "content": [{"type": "text", "text": "Weather "}, {"type": "text", "text": "in Paris?"}],
        },
    ]
    post_run(url, body)
    assert [m.content for m in model.requests[0].messages] == ["Weather in Paris?"]


@pytest.mark.parametrize(
    ("body", "status", "detail"),
    [
        (
            b"{not json",
            400,
            "the request body is not JSON adk accepts: key must be a string at line 1 column 2",
        ),
        (
            json.dumps({"threadId": "t1", "messages": []}).encode(),
            422,
            "invalid RunAgentInput: runId: Field required",
        ),
        (
            json.dumps(
                {"threadId": "t1", "runId": "r1", "messages": [{"id": "m", "role": "robot"}]}
            ).encode(),
            422,
            "invalid RunAgentInput: messages.0: Input tag 'robot' found using 'role' does not match",
        ),
        (
            json.dumps(run_input("t1", "r1", "hi", messages=[])).encode(),
            422,
            "messages: there is no user message to answer",
        ),
        (
            json.dumps(
                run_input(
                    "t1",
                    "r1",
                    "",
                    messages=[
                        {
                            "id": "u1",
                            "role": "user",
                            "content": [
                                {"type": "text", "text": "what is this?"},
                                {
                                    "type": "image",
                                    "source": {"type": "url", "value": "http://127.0.0.1/x.png"},
                                },
                            ],
                        }
                    ],
                )
            ).encode(),
            422,
            "messages.0.content.1: only text parts are supported, not 'image'",
        ),
    ],
)
def test_bad_input_gets_a_4xx_naming_the_problem(
    url: str, model: ScriptedModel, body: bytes, status: int, detail: str
) -> None:
    response = httpx.post(url, content=body, headers={"content-type": "application/json"})
    assert response.status_code == status
    assert response.json()["detail"].startswith(detail)
    assert model.requests == []


def body(thread: str = '"t1"', run: str = '"r1"', state: str = "{}", message: str = '"hi"') -> bytes:
    """A RunAgentInput written by hand, so that it can say what `json.dumps` never writes."""
    messages = f'[{{"id": "u1", "role": "user", "content": {message}}}]'
    return f'{{"threadId": {thread}, "runId": {run}, "state": {state}, "messages": {messages}}}'.encode()


LONG = "x" * 300_000
NOT_JSON = "the request body is not JSON adk accepts: "
CALL = {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}


@pytest.mark.parametrize(
    ("sent", "status", "detail"),
    [
        # Within the 1 MiB limit; Python's json module raised RecursionError: a 500.
        (b"[" * 200_000, 400, NOT_JSON + "recursion limit exceeded at line 1 column 202"),
        (
            body(state='{"a": ' * 250 + "1" + "}" * 250),
            400,
            NOT_JSON + "recursion limit exceeded at line 1 column",
        ),
        # A lone surrogate: SQLite raised UnicodeEncodeError (a 500); in memory, it broke every run.
        (body(thread='"\\ud800"'), 400, NOT_JSON + "unexpected end of hex escape at line 1 column 21"),
        (body(message='"\\udc00"'), 400, NOT_JSON + "lone leading surrogate in hex escape at line 1 column"),
        (body(state='{"app:x": "\\ud800"}'), 400, NOT_JSON + "unexpected end of hex escape at line 1 column"),
        (body(state='{"x": NaN}'), 400, NOT_JSON + "expected value at line 1 column"),
        (body(state='{"x": 1e400}'), 400, NOT_JSON + "a number beyond the range of a double (such as 1e400)"),
        (body(run=f'"{LONG}"'), 422, "runId: an id of at most 256 characters, not 300000"),
        (body(thread=f'"{LONG}"'), 422, "threadId: an id of at most 256 characters, not 300000"),
    ],
    ids=["deep", "deep state", "thread", "message", "state", "NaN", "1e400", "run id", "thread id"],
)
def test_json_no_store_or_stream_can_hold_is_a_4xx_with_one_line_and_no_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, sent: bytes, status: int, detail: str
) -> None:
    model = ScriptedModel([])
    runner = Runner(LlmAgent("helper", model=model), session_service=SqliteSessionService(tmp_path / "s.db"))
    with serving(create_app(runner, path=PATH)) as url:
        response = httpx.post(url, content=sent, headers={"content-type": "application/json"}, timeout=30)
    assert response.status_code == status
    assert response.json()["detail"].startswith(detail)
    assert "\n" not in response.json()["detail"]
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert model.requests == []
    assert asyncio.run(runner.session_service.list_sessions("anonymous")) == []


@pytest.mark.parametrize(
    ("fields", "detail"),
    [
        ({"parentRunId": LONG}, "parentRunId"),
        ({"messages": [{"id": LONG, "role": "user", "content": "hi"}]}, "messages.0.id"),
        (
            {
                "messages": [
                    {"id": "u1", "role": "user", "content": "hi"},
                    {"id": "a1", "role": "assistant", "toolCalls": [CALL, {**CALL, "id": LONG}]},
                    {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "42"},
                ]
            },
            "messages.1.toolCalls.1.id",
        ),
        (
            {"messages": [{"id": "t1", "role": "tool", "toolCallId": LONG, "content": "42"}]},
            "messages.0.toolCallId",
        ),
        ({"resume": [{"interruptId": LONG, "status": "cancelled"}]}, "resume.0.interruptId"),
    ],
)
def test_every_id_a_client_sends_is_at_most_256_characters(
    url: str, fields: dict[str, Any], detail: str
) -> None:
    response = httpx.post(url, json=run_input("t1", "r1", "hi", **fields), timeout=30)
    assert (response.status_code, response.json()) == (
        422,
        {"detail": f"{detail}: an id of at most 256 characters, not 300000"},
    )
    ok = httpx.post(url, json=run_input("t1", "r" * 256, "hi"), timeout=30)
    assert ok.status_code == 200


def test_only_post_runs_and_a_get_says_what_to_post(url: str) -> None:
    assert httpx.put(url).status_code == 405
    got = httpx.get(url)  # a browser's: told what the endpoint takes, not "Method Not Allowed"
    assert (got.status_code, got.json()["method"], got.json()["docs"]) == (200, "POST", "docs/agui.md")


def test_an_error_that_ends_the_run_is_a_run_error_event() -> None:
    model = ScriptedModel([BadRequestError("context too long", status_code=400)])
    with serving(create_app(make_runner(model), path=PATH)) as url:
        events = post_run(url, run_input("t1", "r1", "hi"))
    assert events[2:] == [
        {"type": "RUN_ERROR", "message": "context too long (at model:scripted)", "code": "BadRequestError"}
    ]


class FailOnResults:
    def before_translate(self, event: Event, ctx: TranslateContext) -> Event | None:
        if event.object == ObjectType.TOOL_RESPONSE:
            raise RuntimeError(f"cannot show results of run {ctx.run_id}")
        return None


def test_a_failure_once_the_stream_started_is_a_run_error_and_stops_the_run(model: ScriptedModel) -> None:
    runner = make_runner(model)
    with serving(create_app(runner, path=PATH, translate_callbacks=[FailOnResults])) as url:
        events = stable_ids(post_run(url, run_input("t1", "r1", "Weather in Paris?")))
    assert events == [
        *WEATHER_RUN[:9],
        {
            "type": "RUN_ERROR",
            "message": "callback FailOnResults failed in before_translate: "
            "raised RuntimeError: cannot show results of run r1",
            "code": "CallbackError",
        },
    ]
    assert len(model.requests) == 1  # the run stopped: the model was not called again


def test_a_client_that_disconnects_mid_run_stops_it() -> None:
    model = Hanging(ScriptedModel(["Back again"]))
    runner = make_runner(model)
    with serving(create_app(runner, path=PATH)) as url:
        with (
            httpx.Client(timeout=30) as client,
            client.stream("POST", url, json=run_input("t1", "r1", "hi")) as response,
        ):
            for line in response.iter_lines():
                if '"TEXT_MESSAGE_CONTENT"' in line:
                    busy = post_run(url, run_input("t1", "r-busy", "me too"))
                    break  # dropping the stream closes the connection mid-run
        assert model.closed.wait(timeout=30), "the model call was not stopped"
        # The session is free again: a new run on the same thread goes through.
        events = post_run(url, run_input("t1", "r2", "hi again"))
    assert [e["type"] for e in events][-1] == "RUN_FINISHED"
    assert busy[1:] == [
        {
            "type": "RUN_ERROR",
            "message": "session 't1' of user 'anonymous' is already running",
            "code": "SessionBusyError",
        }
    ]


def test_the_user_id_may_come_from_the_request() -> None:
    runner = make_runner(ScriptedModel(["Hello"]))

    def user(request: Request) -> str:
        return request.headers["x-user"]

    with serving(create_app(runner, path=PATH, identity=user)) as url:
        with httpx.Client(timeout=30, headers={"x-user": "alice"}) as client:
            response = client.post(url, json=run_input("t9", "r1", "hi"))
        assert response.status_code == 200
    assert asyncio.run(runner.session_service.list_sessions("alice")) == ["t9"]
