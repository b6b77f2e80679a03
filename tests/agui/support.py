"""Helpers for the AG-UI tests: adk events to feed, AG-UI events as wire dicts with stable ids."""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import re
import shutil
import socket
import subprocess
import threading
from collections.abc import AsyncGenerator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from ag_ui.core import PROTOCOL_VERSION, BaseEvent
from ag_ui.core import Event as AguiEvent
from pydantic import TypeAdapter
from starlette.applications import Starlette

from adk.agui import TranslateContext
from adk.context import ToolContext
from adk.errors import ServerError
from adk.events import (
    Choice,
    ErrorInfo,
    Event,
    LlmResponse,
    Message,
    ObjectType,
    ToolCall,
)
from adk.models.base import LlmRequest
from adk.testing import ScriptedModel
from adk.tools import tool

INV = "r1"
AUTHOR = "helper"

_MINTED = re.compile(r"^[0-9a-f]{32}$")


def stable_ids(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`events` with minted ids renamed `id1`, `id2`... in order of appearance."""
    names: dict[str, str] = {}

    def rename(value: Any) -> Any:
        if isinstance(value, str) and _MINTED.match(value):
            return names.setdefault(value, f"id{len(names) + 1}")
        if isinstance(value, dict):
            return {k: rename(v) for k, v in value.items()}
        if isinstance(value, list):
            return [rename(v) for v in value]
        return value

    return [rename(e) for e in events]


def wire(events: list[BaseEvent]) -> list[dict[str, Any]]:
    """The events as the client reads them (camelCase JSON), with stable ids."""
    return stable_ids([e.model_dump(mode="json", by_alias=True) for e in events])


def run_started(thread: str = "t1", run: str = INV) -> dict[str, Any]:
    return {"type": "RUN_STARTED", "threadId": thread, "runId": run, "protocolVersion": PROTOCOL_VERSION}


def run_finished(thread: str = "t1", run: str = INV) -> dict[str, Any]:
    return {"type": "RUN_FINISHED", "threadId": thread, "runId": run}


def text(message_id: str, *deltas: str) -> list[dict[str, Any]]:
    """One whole text message from the agent: START, a CONTENT per delta, END."""
    return [
        {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant", "name": AUTHOR},
        *({"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": d} for d in deltas),
        {"type": "TEXT_MESSAGE_END", "messageId": message_id},
    ]


def tool_call(call_id: str, name: str, *deltas: str, parent: str | None = None) -> list[dict[str, Any]]:
    """TOOL_CALL_START (naming `parent`, if any), an ARGS per non-empty delta, END."""
    start = {"type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": name}
    if parent is not None:
        start["parentMessageId"] = parent
    args = [{"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": d} for d in deltas if d]
    return [start, *args, {"type": "TOOL_CALL_END", "toolCallId": call_id}]


def tool_result(message_id: str, call_id: str, content: str) -> dict[str, Any]:
    return {
        "type": "TOOL_CALL_RESULT",
        "messageId": message_id,
        "toolCallId": call_id,
        "content": content,
        "role": "tool",
    }


def chunk(text: str, branch: str = "", author: str = AUTHOR) -> Event:
    return Event.from_response(INV, author, LlmResponse.chunk(text), branch=branch)


def call_chunk(call_id: str, name: str, arguments: str, branch: str = "") -> Event:
    """A streamed piece of a tool call's arguments."""
    return Event.from_response(
        INV, AUTHOR, LlmResponse.chunk("", ToolCall.of(name, arguments, call_id)), branch=branch
    )


def complete(text: str = "", *calls: ToolCall, branch: str = "", author: str = AUTHOR) -> Event:
    response = LlmResponse.calls(*calls, content=text) if calls else LlmResponse.text(text)
    return Event.from_response(INV, author, response, branch=branch)


def tool_response(call_id: str, content: str, name: str = "weather") -> Event:
    message = Message.tool(content, tool_call_id=call_id, name=name)
    return Event.new(INV, AUTHOR, object=ObjectType.TOOL_RESPONSE, choices=[Choice(message=message)])


def discarded(branch: str = "") -> Event:
    return Event.new(INV, AUTHOR, branch=branch, object=ObjectType.ATTEMPT_DISCARDED, is_partial=True)


def state_update(**delta: Any) -> Event:
    return Event.state_update(INV, AUTHOR, delta)


def error(message: str = "boom", where: str | None = "model:scripted") -> Event:
    return Event.from_error(INV, AUTHOR, ErrorInfo(type="ServerError", message=message, where=where))


def completion() -> Event:
    return Event.new(INV, AUTHOR, object=ObjectType.RUNNER_COMPLETION, done=True)


CTX = TranslateContext(thread_id="t1", run_id=INV, invocation_id=INV)


@tool
def weather(city: str, ctx: ToolContext) -> dict[str, str]:
    """The weather in a city; remembers the city in session state."""
    ctx.state["last_city"] = city
    return {"city": city, "sky": "sunny"}


class FlakyStream:
    """A model whose first call streams `partial` then fails with a transient error; later calls
    answer from `script`."""

    def __init__(self, partial: str, script: ScriptedModel) -> None:
        self.partial = partial
        self.script = script
        self.failed = False

    @property
    def name(self) -> str:
        return "flaky"

    async def generate(self, request: LlmRequest) -> AsyncGenerator[LlmResponse, None]:
        if not self.failed:
            self.failed = True
            yield LlmResponse.chunk(self.partial)
            raise ServerError("upstream reset", status_code=502)
        async for response in self.script.generate(request):
            yield response


class Hanging:
    """A model whose first call streams one word then waits forever (`closed` is set when that
    call is stopped); later calls answer from `script`."""

    def __init__(self, script: ScriptedModel) -> None:
        self.script = script
        self.closed = threading.Event()

    @property
    def name(self) -> str:
        return "hanging"

    async def generate(self, request: LlmRequest) -> AsyncGenerator[LlmResponse, None]:
        if self.closed.is_set():
            async for response in self.script.generate(request):
                yield response
            return
        try:
            yield LlmResponse(
                object=ObjectType.CHAT_COMPLETION_CHUNK,
                choices=[Choice(delta=Message.assistant("Thinking"))],
                is_partial=True,
            )
            await asyncio.Event().wait()
        finally:
            self.closed.set()


@contextmanager
def serving(app: Starlette) -> Iterator[str]:
    """Serve `app` with a real uvicorn on 127.0.0.1 in a background thread; yield its URL.

    The socket is bound and listening before the server starts, so requests queue in its backlog
    until uvicorn accepts them: there is nothing to wait for.
    """
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_config=None, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}/agui"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
        assert not thread.is_alive(), "uvicorn did not stop"


_EVENT = TypeAdapter(AguiEvent)


def run_input(thread: str, run: str, text: str, **fields: Any) -> dict[str, Any]:
    """A RunAgentInput as a client sends it (camelCase), with one user message."""
    return {
        "threadId": thread,
        "runId": run,
        "messages": [{"id": "u1", "role": "user", "content": text}],
        **fields,
    }


def post_run(url: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """POST `body` and read the whole SSE stream, which the official client must accept."""
    with (
        httpx.Client(timeout=30, headers=headers) as client,
        client.stream("POST", url, json=body, headers={"accept": "text/event-stream"}) as response,
    ):
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        events = [json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")]
    return verified(events)


def sse_messages(response: httpx.Response) -> Iterator[tuple[str | None, dict[str, Any]]]:
    """A response's SSE messages as they come: (the id it carries or None, its event)."""
    given: str | None = None
    data: list[str] = []
    for line in response.iter_lines():
        if line.startswith("id: "):
            given = line[4:]
        elif line.startswith("data: "):
            data.append(line[6:])
        elif line == "":
            if data:
                yield given, json.loads("\n".join(data))
            elif given is not None:
                yield given, {}  # an id alone: a stored event that shows nothing
            given, data = None, []


JS = Path(__file__).parent / "js"


def node() -> str | None:
    """The node binary, when node and `@ag-ui/client` are installed (`npm ci --prefix tests/agui/js`).

    Without them, None; unless ADK_AGUI_JS_REQUIRED is set (as in CI), where that is a failure.
    """
    binary = shutil.which("node")
    if binary is not None and (JS / "node_modules" / "@ag-ui" / "client").is_dir():
        return binary
    if os.environ.get("ADK_AGUI_JS_REQUIRED"):
        pytest.fail(f"ADK_AGUI_JS_REQUIRED is set but node or @ag-ui/client is missing: npm ci --prefix {JS}")
    return None


class _Verifier:
    """`verify.mjs`, kept running for the test session: the official client's checks of a stream."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None
        self._started = False

    def check(self, events: list[dict[str, Any]]) -> str:
        """ "ok", or what `@ag-ui/client` finds wrong with `events` ("ok" without node and the client)."""
        with self._lock:
            if not self._started:
                self._started = True
                binary = node()
                if binary is not None:
                    self._process = subprocess.Popen(
                        [binary, str(JS / "verify.mjs")],
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        text=True,
                    )
                    atexit.register(self._process.terminate)
            process = self._process
            if process is None:
                return "ok"
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(json.dumps(events) + "\n")
            process.stdin.flush()
            answer = process.stdout.readline().strip()
        return answer if answer == "ok" else str(json.loads(answer or '"the verifier stopped"'))


_VERIFIER = _Verifier()


def verified(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`events`, once each is a valid AG-UI event and `@ag-ui/client` accepts the stream."""
    for event in events:
        _EVENT.validate_python(event)
    problem = _VERIFIER.check(events)
    assert problem == "ok", f"@ag-ui/client refuses the stream: {problem}\n{events}"
    return events
