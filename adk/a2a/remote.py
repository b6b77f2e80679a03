"""An agent elsewhere, reached over A2A: `RemoteA2aAgent` as a sub-agent, `A2aTool` as a tool.

Both send one text message to the agent at `url` (its card read from the well-known path) and
take its answer: the text of the task's artifacts, or of its status message, or of the message
it answered with. The remote context (and a task the remote left `input-required`) is kept in
session state under `a2a:<name>`, so the next message continues the same conversation there.
A failure is an adk error naming the URL: `RemoteAgentConnectionError` (unreachable) and
`RemoteAgentTimeoutError` (transient, so retry policies apply), `RemoteAgentError` (the task
failed, was rejected or canceled, or the answer is not A2A).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from adk.agents.base import BaseAgent
from adk.callbacks.protocols import AnyCallback
from adk.callbacks.registry import Callbacks
from adk.context import AgentContext, ToolContext
from adk.errors import (
    RemoteAgentConnectionError,
    RemoteAgentError,
    RemoteAgentTimeoutError,
    ToolArgumentsError,
)
from adk.events import Choice, Event, Message, ToolDeclaration
from adk.tools import BaseTool

if TYPE_CHECKING:
    from collections.abc import Iterable

    import httpx
    from a2a.types import StreamResponse

__all__ = ["A2aTool", "RemoteA2aAgent", "RemoteReply", "ask_remote"]

DEFAULT_TIMEOUT = 300.0
"""Seconds a remote agent has to finish a task (card, request and answer) before it is a timeout."""

_FAILED = {"TASK_STATE_FAILED", "TASK_STATE_REJECTED", "TASK_STATE_CANCELED"}
_WAITING = {"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"}


@dataclass(slots=True)
class RemoteReply:
    """What a remote agent answered: its text, the ids to continue with, the task's last state."""

    text: str = ""
    context_id: str = ""
    task_id: str = ""
    state: str = ""
    artifacts: dict[str, list[str]] = field(default_factory=dict)

    @property
    def waiting(self) -> bool:
        """Whether the remote task waits for the next message (`input-required`, `auth-required`)."""
        return self.state in _WAITING


async def ask_remote(
    url: str,
    text: str,
    *,
    context_id: str = "",
    task_id: str = "",
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109  # the whole exchange's bound, card included
    httpx_client: httpx.AsyncClient | None = None,
) -> RemoteReply:
    """Send `text` to the A2A agent at `url` (in its context and task, when given) and return its
    answer once the task completes or waits for input; raise a `RemoteAgentError` otherwise."""
    try:
        async with asyncio.timeout(timeout):
            reply = await _exchange(url, text, context_id, task_id, httpx_client)
    except TimeoutError as e:
        raise RemoteAgentTimeoutError(f"A2A agent at {url}: no answer within {timeout:g} s") from e
    except RemoteAgentError:
        raise
    except Exception as e:
        raise _error(url, e) from e
    if reply.state in _FAILED:
        state = reply.state.removeprefix("TASK_STATE_").lower()
        raise RemoteAgentError(
            f"A2A agent at {url}: task {reply.task_id} {state}: {reply.text or '(no message)'}"
        )
    if not reply.state and not reply.text:
        raise RemoteAgentError(f"A2A agent at {url}: the answer ended before the task finished")
    return reply


async def _exchange(
    url: str, text: str, context_id: str, task_id: str, httpx_client: httpx.AsyncClient | None
) -> RemoteReply:
    from a2a.client import ClientConfig, create_client
    from a2a.helpers import new_text_message
    from a2a.types import Role, SendMessageRequest

    message = new_text_message(
        text, context_id=context_id or None, task_id=task_id or None, role=Role.ROLE_USER
    )
    reply = RemoteReply()
    client = await create_client(url, ClientConfig(httpx_client=httpx_client))
    try:
        async for response in client.send_message(SendMessageRequest(message=message)):
            _take(reply, response)
    finally:
        await client.close()
    texts = ["".join(parts) for parts in reply.artifacts.values()]
    if texts and reply.state not in _FAILED | _WAITING:
        reply.text = "\n".join(t for t in texts if t)
    return reply


def _take(reply: RemoteReply, response: StreamResponse) -> None:
    """Fold one streamed response (a task, a message, a status or an artifact update) into `reply`."""
    from a2a.helpers import get_message_text, get_text_parts
    from a2a.types import TaskState

    if response.HasField("message"):
        reply.text, reply.context_id = get_message_text(response.message), response.message.context_id
        reply.state = "TASK_STATE_COMPLETED"
        return
    if response.HasField("task"):
        task = response.task
        reply.task_id, reply.context_id = task.id, task.context_id
        for artifact in task.artifacts:
            reply.artifacts[artifact.artifact_id] = get_text_parts(artifact.parts)
        status = task.status
    elif response.HasField("artifact_update"):
        update = response.artifact_update
        parts = get_text_parts(update.artifact.parts)
        kept = reply.artifacts.get(update.artifact.artifact_id, []) if update.append else []
        reply.artifacts[update.artifact.artifact_id] = kept + parts
        return
    else:
        reply.task_id = response.status_update.task_id
        reply.context_id = response.status_update.context_id
        status = response.status_update.status
    reply.state = TaskState.Name(status.state)
    if status.HasField("message"):
        reply.text = get_message_text(status.message)


def _error(url: str, error: Exception) -> RemoteAgentError:
    """The adk error for what the A2A client raised: unreachable, timed out, or anything else."""
    import httpx

    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, httpx.TimeoutException):
            return RemoteAgentTimeoutError(f"A2A agent at {url}: timed out ({type(cause).__name__}: {cause})")
        if isinstance(cause, httpx.TransportError):
            return RemoteAgentConnectionError(f"A2A agent at {url}: unreachable ({cause})")
        cause = cause.__cause__
    return RemoteAgentError(f"A2A agent at {url}: {type(error).__name__}: {error}")


@dataclass(frozen=True, slots=True)
class _Remote:
    """An A2A agent, and where its conversation is remembered in session state."""

    url: str
    key: str
    timeout: float
    httpx_client: httpx.AsyncClient | None

    async def ask(self, text: str, state: MutableMapping[str, Any]) -> RemoteReply:
        kept = state.get(self.key)
        kept = kept if isinstance(kept, Mapping) else {}
        reply = await ask_remote(
            self.url,
            text,
            context_id=str(kept.get("context_id", "")),
            task_id=str(kept.get("task_id", "")),
            timeout=self.timeout,
            httpx_client=self.httpx_client,
        )
        state[self.key] = {"context_id": reply.context_id, "task_id": reply.task_id if reply.waiting else ""}
        return reply


class RemoteA2aAgent(BaseAgent):
    """A sub-agent that is an A2A agent elsewhere: the invocation's user message goes to it, and
    its answer comes back as this agent's message. `as_tool()` makes it a tool instead."""

    def __init__(
        self,
        url: str,
        *,
        name: str,
        description: str = "",
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        timeout: float = DEFAULT_TIMEOUT,
        httpx_client: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(name, description=description, callbacks=callbacks)
        self.url = url
        self.remote = _Remote(url, f"a2a:{name}", timeout, httpx_client)

    async def _run_body(self, ctx: AgentContext) -> AsyncGenerator[Event, None]:
        reply = await self.remote.ask(ctx.invocation.message.content, ctx.state)
        yield Event.new(
            ctx.invocation_id,
            self.name,
            branch=ctx.branch,
            choices=[Choice(message=Message.assistant(reply.text), finish_reason="stop")],
            done=True,
        )

    def as_tool(self, *, idempotent: bool = False) -> A2aTool:
        """This remote agent as a tool the model calls with a `request`."""
        return A2aTool(
            self.url,
            name=self.name,
            description=self.description,
            timeout=self.remote.timeout,
            httpx_client=self.remote.httpx_client,
            idempotent=idempotent,
        )


class A2aTool(BaseTool):
    """A tool whose call asks the A2A agent at `url`: its `request` is the message, the agent's
    answer the result. Its calls pass through `before_tool` / `after_tool`, and its failures reach
    `on_tool_error`, like any tool's."""

    def __init__(
        self,
        url: str,
        *,
        name: str,
        description: str = "",
        timeout: float = DEFAULT_TIMEOUT,
        httpx_client: httpx.AsyncClient | None = None,
        idempotent: bool = False,
    ) -> None:
        self.name = name
        self.description = description or f"Ask the agent {name} (over A2A)."
        self.idempotent = idempotent
        self.url = url
        self.remote = _Remote(url, f"a2a:{name}", timeout, httpx_client)
        self._declaration = ToolDeclaration(
            name=name,
            description=self.description,
            parameters={
                "type": "object",
                "properties": {"request": {"type": "string", "description": "what to ask the agent"}},
                "required": ["request"],
                "additionalProperties": False,
            },
        )

    @property
    def declaration(self) -> ToolDeclaration:
        return self._declaration

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        if set(args) != {"request"} or not isinstance(args["request"], str):
            raise ToolArgumentsError(self.name, [f"expected {{'request': <text>}}, got {sorted(args)!r}"])
        return dict(args)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        return (await self.remote.ask(args["request"], ctx.state)).text

    def __repr__(self) -> str:
        return f"A2aTool({self.name!r}, {self.url!r})"
