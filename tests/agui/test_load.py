"""The app under load and reconnecting clients, served by a real uvicorn on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, MutableMapping
from typing import Any

import httpx
from starlette.applications import Starlette

from adk.agents import LlmAgent
from adk.agui import create_app
from adk.events import LlmResponse
from adk.models.base import LlmRequest
from adk.runner import Runner
from tests.agui.support import post_run, run_input, serving, verified

PATH = "/agui"


class Stalling:
    """Streams "Thinking"; for a message starting with "hang" it then waits until stopped, else it
    finishes the answer. Counts the waiting calls begun and stopped."""

    def __init__(self) -> None:
        self.hung = 0
        self.stopped = 0

    @property
    def name(self) -> str:
        return "stalling"

    async def generate(self, request: LlmRequest) -> AsyncGenerator[LlmResponse, None]:
        yield LlmResponse.chunk("Thinking")
        if request.messages[-1].content.startswith("hang"):
            self.hung += 1
            try:
                await asyncio.Event().wait()
            finally:
                self.stopped += 1
        yield LlmResponse.chunk(" done")
        yield LlmResponse.text("Thinking done")


def endpoint_runs(app: Starlette) -> dict[Any, Any]:
    """The runs the app's endpoint is streaming (its `runs` registry)."""
    runs: dict[Any, Any] = app.routes[0].app.runs  # type: ignore[attr-defined]
    return runs


def events_of(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in lines if line.startswith("data: ")]


def event_types(lines: list[str]) -> list[str]:
    return [e["type"] for e in events_of(lines)]


async def test_200_concurrent_streams_with_20_dropped_mid_stream_leave_nothing_behind() -> None:
    model = Stalling()
    runner = Runner(LlmAgent("helper", model=model))
    app = create_app(runner, path=PATH)

    async def stream(client: httpx.AsyncClient, url: str, i: int) -> list[dict[str, Any]]:
        dropping = i % 10 == 0
        body = run_input(f"t{i}", f"r{i}", "hang on" if dropping else "hello")
        lines: list[str] = []
        async with client.stream("POST", url, json=body) as response:
            async for line in response.aiter_lines():
                lines.append(line)
                if dropping and '"TEXT_MESSAGE_CONTENT"' in line:
                    break  # leaving the block closes the connection mid-stream
        return events_of(lines)

    with serving(app) as url:
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=0)
        async with httpx.AsyncClient(timeout=60, limits=limits) as client:
            streams = await asyncio.gather(*(stream(client, url, i) for i in range(200)))
    # `serving` has stopped uvicorn, which waits for every request it was handling.

    finished = [verified(s) for i, s in enumerate(streams) if i % 10]
    assert len(finished) == 180
    assert {(s[0]["type"], s[-1]["type"]) for s in finished} == {("RUN_STARTED", "RUN_FINISHED")}
    assert [s[-1]["type"] for i, s in enumerate(streams) if i % 10 == 0] == ["TEXT_MESSAGE_CONTENT"] * 20
    assert (model.hung, model.stopped) == (20, 20)  # every dropped run's model call was stopped
    assert runner._active == {}  # no session is left held
    assert endpoint_runs(app) == {}
    sessions = await runner.session_service.list_sessions("anonymous")
    assert len(sessions) == 200


def test_a_client_that_drops_mid_stream_and_asks_again_at_once_is_served_every_time() -> None:
    """20 times: drop a stream mid-run, then at once send the next request on the same thread."""
    model = Stalling()
    runner = Runner(LlmAgent("helper", model=model))
    app = create_app(runner, path=PATH)
    seen: list[list[str]] = []
    with serving(app) as url, httpx.Client(timeout=30) as client:
        for i in range(21):
            lines: list[str] = []
            with client.stream("POST", url, json=run_input("t1", f"r{i}", "hang on")) as response:
                for line in response.iter_lines():
                    lines.append(line)
                    if '"TEXT_MESSAGE_CONTENT"' in line or '"RUN_ERROR"' in line:
                        break
            seen.append(event_types(lines))
    assert [s for s in seen if s[-1] != "TEXT_MESSAGE_CONTENT"] == []  # no SessionBusyError
    assert (model.hung, model.stopped) == (21, 21)
    assert runner._active == {}
    assert endpoint_runs(app) == {}


def test_a_client_that_sends_its_next_request_as_soon_as_a_run_finishes_is_served() -> None:
    runner = Runner(LlmAgent("helper", model=Stalling()))
    with serving(create_app(runner, path=PATH)) as url:
        ends = [post_run(url, run_input("t1", f"r{i}", "hello"))[-1]["type"] for i in range(20)]
    assert ends == ["RUN_FINISHED"] * 20


def test_a_second_live_client_on_a_running_thread_is_refused_after_a_short_grace() -> None:
    model = Stalling()
    runner = Runner(LlmAgent("helper", model=model))
    with (
        serving(create_app(runner, path=PATH)) as url,
        httpx.Client(timeout=30) as client,
        client.stream("POST", url, json=run_input("t1", "r1", "hang on")) as response,
    ):
        for line in response.iter_lines():
            if '"TEXT_MESSAGE_CONTENT"' in line:
                busy = post_run(url, run_input("t1", "r2", "me too"))
                break
    assert busy[1:] == [
        {
            "type": "RUN_ERROR",
            "message": "session 't1' of user 'anonymous' is already running",
            "code": "SessionBusyError",
        }
    ]


# --- the races, made certain: requests driven through ASGI by hand ----------------------------------


class Request:
    """One request to the app through ASGI: its body, then a disconnect once `leave` is set."""

    def __init__(self, body: dict[str, Any], on_chunk: Any = None) -> None:
        self.body = json.dumps(body).encode()
        self.on_chunk = on_chunk
        self.leave = asyncio.Event()
        self.lines: list[str] = []
        self._read = False

    async def __call__(self, app: Starlette) -> None:
        scope = {
            "type": "http",
            "method": "POST",
            "path": "/",
            "headers": [(b"content-type", b"application/json")],
            "query_string": b"",
        }
        await app(scope, self.receive, self.send)

    async def receive(self) -> dict[str, Any]:
        if not self._read:
            self._read = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.leave.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.body" and message["body"]:
            chunk = message["body"].decode()
            self.lines += chunk.splitlines()
            if self.on_chunk is not None:
                await self.on_chunk(chunk)

    @property
    def types(self) -> list[str]:
        return event_types(self.lines)


async def test_a_request_waits_for_the_run_of_a_client_whose_disconnect_is_seen_late() -> None:
    """The next request arrives before the server noticed that the last client left."""
    model = Stalling()
    app = create_app(Runner(LlmAgent("helper", model=model)))
    streaming = asyncio.Event()

    async def on_chunk(chunk: str) -> None:
        if '"TEXT_MESSAGE_CONTENT"' in chunk:
            streaming.set()

    dropped = Request(run_input("t1", "r1", "hang on"), on_chunk)
    first = asyncio.create_task(dropped(app))
    await streaming.wait()
    started = asyncio.Event()

    async def on_start(chunk: str) -> None:
        started.set()

    again = Request(run_input("t1", "r2", "hello"), on_start)
    second = asyncio.create_task(again(app))
    await started.wait()  # RUN_STARTED went out: the run has found the thread busy and waits
    dropped.leave.set()  # only now does the server see the first client go
    await asyncio.gather(first, second)
    assert dropped.types == ["RUN_STARTED", "STATE_SNAPSHOT", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"]
    assert again.types[-1] == "RUN_FINISHED"
    assert (model.hung, model.stopped) == (1, 1)


async def test_the_thread_is_free_when_run_finished_reaches_the_client() -> None:
    """The client sends its next request the moment RUN_FINISHED arrives, before the server goes on."""
    app = create_app(Runner(LlmAgent("helper", model=Stalling())))
    nxt = Request(run_input("t1", "r2", "hello"))

    async def on_chunk(chunk: str) -> None:
        if '"RUN_FINISHED"' in chunk:
            await nxt(app)

    await Request(run_input("t1", "r1", "hello"), on_chunk)(app)
    assert nxt.types[-1] == "RUN_FINISHED"
