"""What the A2A tests share: a real uvicorn on 127.0.0.1, the SDK's own client, an echo agent
made with the SDK's own server classes, and a recording of what a run's tools and hooks saw."""

from __future__ import annotations

import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx
import uvicorn
from a2a.client import Client, ClientConfig, create_client
from a2a.helpers import get_message_text, new_task, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Role,
    SendMessageRequest,
    StreamResponse,
    TaskState,
)
from starlette.applications import Starlette
from starlette.types import ASGIApp

from adk.a2a import CARD_PATH


@contextmanager
def serving(make: Callable[[str], ASGIApp]) -> Iterator[str]:
    """Serve the app `make(url)` returns with a real uvicorn on 127.0.0.1, in a thread; yield its URL.

    The socket listens before the server starts, so requests queue until uvicorn accepts them.
    """
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    server = uvicorn.Server(uvicorn.Config(make(url), lifespan="off", log_config=None, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
        assert not thread.is_alive(), "uvicorn did not stop"


def unused_url() -> str:
    """A loopback URL where nothing listens (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/"


@asynccontextmanager
async def client(
    url: str, *, streaming: bool = True, headers: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    """The SDK's own client of the agent at `url` (its card read first), closed after."""
    async with httpx.AsyncClient(headers=headers or {}) as http:
        c = await create_client(url, ClientConfig(httpx_client=http, streaming=streaming))
        try:
            yield c
        finally:
            await c.close()


async def send(
    c: Client, text: str, *, task_id: str = "", context_id: str = "", data: dict[str, Any] | None = None
) -> list[StreamResponse]:
    """Send one user message (text, or a data part) and collect every response."""
    from a2a.helpers import new_data_part

    message = new_text_message(
        text, task_id=task_id or None, context_id=context_id or None, role=Role.ROLE_USER
    )
    if data is not None:
        del message.parts[:]
        message.parts.append(new_data_part(data))
    return [r async for r in c.send_message(SendMessageRequest(message=message))]


def shape(response: StreamResponse) -> tuple[Any, ...]:
    """A response as (kind, what): a task's state, a status and its text, an artifact chunk."""
    if response.HasField("task"):
        return ("task", TaskState.Name(response.task.status.state))
    if response.HasField("status_update"):
        status = response.status_update.status
        return ("status", TaskState.Name(status.state), get_message_text(status.message))
    if response.HasField("artifact_update"):
        update = response.artifact_update
        return ("artifact", update.artifact.name, update.artifact.parts[0].text, update.append)
    return ("message", get_message_text(response.message))


class EchoExecutor(AgentExecutor):
    """An agent made with the SDK alone: answers `echo: <text> (turn n)` as an artifact, n counting
    the messages of its context; `fail` fails the task."""

    def __init__(self) -> None:
        self.turns: dict[str, int] = {}

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id and context.context_id and context.message
        text = get_message_text(context.message)
        await event_queue.enqueue_event(
            new_task(context.task_id, context.context_id, TaskState.TASK_STATE_SUBMITTED)
        )
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        if text == "fail":
            await updater.failed(updater.new_agent_message([new_text_message("boom").parts[0]]))
            return
        from a2a.helpers import new_text_part

        turn = self.turns[context.context_id] = self.turns.get(context.context_id, 0) + 1
        await updater.add_artifact([new_text_part(f"echo: {text} (turn {turn})")], name="echo")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def echo_app(url: str) -> Starlette:
    """The SDK's own server around `EchoExecutor`."""
    card = AgentCard(
        name="echo",
        description="echoes",
        version="1",
        supported_interfaces=[AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="echoes")],
    )
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    return Starlette(
        routes=[*create_agent_card_routes(card, card_url=CARD_PATH), *create_jsonrpc_routes(handler, "/")]
    )
