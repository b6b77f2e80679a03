"""The app exposed to strangers: body limits, JSON only, CORS, and threads scoped to their user."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from starlette.requests import Request
from starlette.types import Message as AsgiMessage

from adk.agents import LlmAgent
from adk.agui import create_app
from adk.runner import Runner
from adk.testing import ScriptedModel
from tests.agui.support import post_run, run_input, serving, verified, weather

PATH = "/agui"


def make(*answers: str) -> tuple[Runner, ScriptedModel]:
    model = ScriptedModel(answers)
    return Runner(LlmAgent("helper", model=model, tools=[weather])), model


@pytest.fixture
def model() -> ScriptedModel:
    return ScriptedModel([])


@pytest.fixture
def url(model: ScriptedModel) -> Iterator[str]:
    runner = Runner(LlmAgent("helper", model=model))
    with serving(create_app(runner, path=PATH, max_body=1000)) as url:
        yield url


# --- the body -------------------------------------------------------------------------------------


def test_a_body_declared_larger_than_the_limit_is_refused_with_413(url: str, model: ScriptedModel) -> None:
    body = json.dumps(run_input("t1", "r1", "x" * 2000)).encode()
    response = httpx.post(url, content=body, headers={"content-type": "application/json"})
    assert (response.status_code, response.json()) == (
        413,
        {"detail": "the request body is larger than the limit of 1000 bytes"},
    )
    assert model.requests == []


def test_a_chunked_body_is_refused_once_it_passes_the_limit(url: str, model: ScriptedModel) -> None:
    def chunks() -> Iterator[bytes]:  # no Content-Length: the server must count
        yield b'{"threadId": "t1", "runId": "r1", "messages": [], "junk": "'
        yield from [b"x" * 512] * 64
        yield b'"}'

    response = httpx.post(url, content=chunks(), headers={"content-type": "application/json"}, timeout=30)
    assert response.status_code == 413
    assert model.requests == []


async def test_the_endpoint_reads_no_more_than_the_limit_and_one_chunk() -> None:
    """Called as ASGI with an endless body whose Content-Length lies: it stops reading at the limit."""
    runner, model = make()
    app = create_app(runner, max_body=1000)
    reads = 0

    async def receive() -> AsgiMessage:
        nonlocal reads
        reads += 1
        return {"type": "http.request", "body": b"x" * 300, "more_body": True}

    sent: list[AsgiMessage] = []

    async def send(message: AsgiMessage) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/",
        "headers": [(b"content-type", b"application/json"), (b"content-length", b"10")],
        "query_string": b"",
    }
    await app(scope, receive, send)
    assert reads == 4  # 1200 bytes: the first count past 1000
    assert sent[0]["status"] == 413
    assert model.requests == []


async def test_a_content_length_too_long_to_be_a_number_is_413_not_a_crash() -> None:
    runner, _ = make()
    sent: list[AsgiMessage] = []

    async def receive() -> AsgiMessage:
        raise AssertionError("the body is not read")

    async def send(message: AsgiMessage) -> None:
        sent.append(message)

    headers = [(b"content-type", b"application/json"), (b"content-length", b"9" * 5000)]
    scope = {"type": "http", "method": "POST", "path": "/", "headers": headers, "query_string": b""}
    await create_app(runner, max_body=1000)(scope, receive, send)
    assert sent[0]["status"] == 413


@pytest.mark.parametrize(
    ("content_type", "named"),
    [
        ("text/plain", "text/plain"),
        ("application/x-www-form-urlencoded", "application/x-www-form-urlencoded"),
        ("multipart/form-data; boundary=x", "multipart/form-data"),
        (None, "untyped"),
    ],
)
def test_only_json_is_accepted(url: str, model: ScriptedModel, content_type: str | None, named: str) -> None:
    headers = {} if content_type is None else {"content-type": content_type}
    response = httpx.post(url, content=json.dumps(run_input("t1", "r1", "hi")), headers=headers)
    assert (response.status_code, response.json()) == (
        415,
        {"detail": f"the request body must be application/json, not {named}"},
    )
    assert model.requests == []


def test_json_with_a_charset_is_json() -> None:
    runner, model = make("ok")
    body = json.dumps(run_input("t1", "r1", "hi"))
    with serving(create_app(runner, path=PATH)) as url:
        response = httpx.post(url, content=body, headers={"content-type": "Application/JSON; charset=utf-8"})
    assert response.status_code == 200
    model.assert_done()


def test_the_limits_are_checked_when_the_app_is_made() -> None:
    runner, _ = make()
    with pytest.raises(ValueError, match="max_body: a number of bytes, at least 1, not 0"):
        create_app(runner, max_body=0)
    with pytest.raises(TypeError, match=r"cors_origins: a list of origins such as \['https://a.example'\]"):
        create_app(runner, cors_origins="https://a.example")


# --- CORS -----------------------------------------------------------------------------------------

PREFLIGHT = {"access-control-request-method": "POST", "access-control-request-headers": "content-type"}


def test_without_cors_origins_a_browser_on_another_origin_is_not_let_in() -> None:
    runner, _ = make("ok")
    with serving(create_app(runner, path=PATH)) as url:
        preflight = httpx.options(url, headers={"origin": "https://evil.example", **PREFLIGHT})
        post = post_raw(url, origin="https://evil.example")
    assert preflight.status_code == 405
    assert "access-control-allow-origin" not in preflight.headers
    assert "access-control-allow-origin" not in post.headers


def test_cors_origins_let_in_those_origins_only() -> None:
    runner, _ = make("ok")
    with serving(create_app(runner, path=PATH, cors_origins=["https://app.example"])) as url:
        allowed = httpx.options(url, headers={"origin": "https://app.example", **PREFLIGHT})
        refused = httpx.options(url, headers={"origin": "https://evil.example", **PREFLIGHT})
        post = post_raw(url, origin="https://app.example")
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://app.example"
    assert allowed.headers["access-control-allow-methods"] == "POST"
    assert refused.status_code == 400
    assert "access-control-allow-origin" not in refused.headers
    assert post.headers["access-control-allow-origin"] == "https://app.example"


def post_raw(url: str, **headers: str) -> httpx.Response:
    return httpx.post(url, json=run_input("t1", "r1", "hi"), headers=headers, timeout=30)


# --- identity -------------------------------------------------------------------------------------

TOKENS = {"Bearer alice-token": "alice", "Bearer bob-token": "bob"}


async def identity(request: Request) -> str | None:
    await asyncio.sleep(0)  # an identity function may be async (a token lookup)
    return TOKENS.get(request.headers.get("authorization", ""))


def as_user(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def post_as(url: str, token: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    with httpx.Client(timeout=30, headers=as_user(token)) as client:
        response = client.post(url, json=body)
    assert response.status_code == 200, response.text
    return verified(
        [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ")]
    )


def test_another_user_naming_a_thread_id_sees_nothing_of_it() -> None:
    runner, model = make("Your secret is safe", "Hello Bob")
    with serving(create_app(runner, path=PATH, identity=identity)) as url:
        post_as(url, "alice-token", run_input("t1", "r1", "my secret is 42", state={"pin": "1234"}))
        stolen = post_as(url, "bob-token", run_input("t1", "r2", "what did alice say?"))
    assert stolen[1] == {"type": "STATE_SNAPSHOT", "snapshot": {}}  # not alice's state
    assert [m.content for m in model.requests[1].messages] == ["what did alice say?"]  # not her history
    alice = asyncio.run(runner.session_service.get("alice", "t1"))
    assert alice is not None
    assert alice.state == {"pin": "1234"}
    assert {e.invocation_id for e in alice.events} == {"r1"}  # bob's run went elsewhere


def test_a_request_the_identity_function_refuses_gets_401_and_runs_nothing() -> None:
    runner, model = make()
    with serving(create_app(runner, path=PATH, identity=identity)) as url:
        anonymous = post_raw(url)
        forged = post_raw(url, authorization="Bearer guessed")
    for response in (anonymous, forged):
        assert (response.status_code, response.json()) == (
            401,
            {"detail": "the request carries no identity this server accepts"},
        )
    assert model.requests == []
    assert asyncio.run(runner.session_service.list_sessions("anonymous")) == []


def test_an_identity_function_returning_something_else_is_a_server_error() -> None:
    runner, model = make()
    app = create_app(runner, path=PATH, identity=lambda request: 42)  # type: ignore[arg-type,return-value]
    with serving(app) as url:
        response = post_raw(url)
    assert response.status_code == 500
    assert model.requests == []


# --- what the client sends ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "detail"),
    [
        ({"state": [1, 2]}, "state: must be a JSON object, not list"),
        (
            {"tools": [{"name": "a", "description": ""}, {"name": "a", "description": ""}]},
            "tools.1: a second tool named 'a'",
        ),
        (
            {"tools": [{"name": "a", "description": "", "parameters": "anything"}]},
            "tools.0.parameters: must be a JSON schema object",
        ),
        (
            {"messages": [{"id": "t", "role": "tool", "toolCallId": "call_x", "content": "42"}]},
            "messages.0: a result for tool call 'call_x', which is not waiting for one",
        ),
    ],
)
def test_bad_client_input_gets_422_naming_it(fields: dict[str, Any], detail: str) -> None:
    runner, model = make()
    with serving(create_app(runner, path=PATH)) as url:
        response = httpx.post(url, json=run_input("t1", "r1", "hi", **fields))
    assert (response.status_code, response.json()) == (422, {"detail": detail})
    assert model.requests == []


def test_the_clients_state_changes_only_what_differs_and_can_be_turned_off() -> None:
    runner, _ = make("one", "two", "three")
    with serving(create_app(runner, path=PATH)) as url:
        post_run(url, run_input("t1", "r1", "hi", state={"a": 1, "b": 2}))
        second = post_run(url, run_input("t1", "r2", "hi", state={"a": 1, "b": 3, "c": None}))
    with serving(create_app(runner, path=PATH, client_state=False)) as url:
        third = post_run(url, run_input("t1", "r3", "hi", state={"a": 99}))
    session = asyncio.run(runner.session_service.get("anonymous", "t1"))
    assert session is not None
    assert [e.actions.state_delta for e in session.events if e.author == "user"] == [
        {"a": 1, "b": 2},
        {"b": 3, "c": None},
        {},
    ]
    assert second[1] == {"type": "STATE_SNAPSHOT", "snapshot": {"a": 1, "b": 3}}
    assert third[1] == {"type": "STATE_SNAPSHOT", "snapshot": {"a": 1, "b": 3}}


# --- the client's state: its thread's own keys only ---------------------------------------------


@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("app:is_admin", "app: keys are shared by every user"),
        ("user:plan", "user: keys are shared by every thread of the user"),
        ("temp:step", "temp: keys live in one run, on the server"),
    ],
)
def test_a_client_cannot_write_scoped_state(key: str, why: str) -> None:
    """Mallory's `app:is_admin` would show in every thread of every user; refused, nothing stored."""
    runner, model = make("Hello Alice")
    with serving(create_app(runner, path=PATH, identity=identity)) as url:
        with httpx.Client(timeout=30, headers=as_user("bob-token")) as mallory:
            sent = run_input("m1", "r1", "hi", state={"note": "mine", key: True})
            refused = mallory.post(url, json=sent)
        alice = post_as(url, "alice-token", run_input("t1", "r2", "am I an admin?"))
    assert (refused.status_code, refused.json()) == (
        422,
        {
            "detail": f"state[{key!r}]: a client writes only its thread's own keys ({why}); send a scoped"
            " key back as the last STATE_SNAPSHOT had it, or leave it out"
        },
    )
    assert alice[1] == {"type": "STATE_SNAPSHOT", "snapshot": {}}
    assert asyncio.run(runner.session_service.list_sessions("bob")) == []  # not even "note"
    assert asyncio.run(runner.session_service.app_state()) == {}
    assert len(model.requests) == 1


def test_a_client_that_sends_back_the_snapshot_it_was_given_keeps_working() -> None:
    """The snapshot holds the thread's scoped keys; a client echoes them with its own changes."""
    runner, model = make("one", "two", "three")
    seeded = runner.run("alice", "t1", "hi", state_delta={"app:motd": "Hello", "user:name": "Alice"})
    asyncio.run(drain(seeded))  # the application (not a client) may write scoped keys
    with serving(create_app(runner, path=PATH, identity=identity)) as url:
        first = post_as(url, "alice-token", run_input("t1", "r1", "hi", state={"theme": "dark"}))
        echoed = {**first[1]["snapshot"], "theme": "light", "user:gone": None}
        second = post_as(url, "alice-token", run_input("t1", "r2", "hi", state=echoed))
        with httpx.Client(timeout=30, headers=as_user("alice-token")) as alice:
            changed = alice.post(url, json=run_input("t1", "r3", "hi", state={**echoed, "user:name": "Root"}))
    model.assert_done()  # both of the client's runs ran
    assert first[1]["snapshot"] == {"app:motd": "Hello", "user:name": "Alice", "theme": "dark"}
    assert second[1]["snapshot"] == {"app:motd": "Hello", "user:name": "Alice", "theme": "light"}
    assert changed.status_code == 422
    assert changed.json()["detail"].startswith(
        "state['user:name']: a client writes only its thread's own keys"
    )
    session = asyncio.run(runner.session_service.get("alice", "t1"))
    assert session is not None
    assert [e.actions.state_delta for e in session.events if e.author == "user"][1:] == [
        {"theme": "dark"},
        {"theme": "light"},
    ]


def test_one_clients_unencodable_state_breaks_no_one_elses_runs() -> None:
    """`"\\ud800"` kept in the in-memory store (serve's default) made every later STATE_SNAPSHOT,
    of every user, a RUN_ERROR."""
    runner, _ = make("Hello Alice")
    sent = json.dumps(run_input("m1", "r1", "hi", state={"app:x": "\ud800"}))  # json.dumps writes \ud800
    with serving(create_app(runner, path=PATH, identity=identity)) as url:
        refused = httpx.post(
            url, content=sent, headers={**as_user("bob-token"), "content-type": "application/json"}
        )
        alice = post_as(url, "alice-token", run_input("t1", "r2", "hi"))
    assert refused.status_code == 400
    assert refused.json()["detail"].startswith("the request body is not JSON adk accepts: ")
    assert [e["type"] for e in alice][-1] == "RUN_FINISHED"
    assert asyncio.run(runner.session_service.app_state()) == {}


async def drain(events: AsyncIterator[object]) -> None:
    async for _ in events:
        pass
