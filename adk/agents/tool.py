"""Agents as tools: `AgentTool(agent)` runs an agent as one tool call.

The agent runs on a child branch (`<branch>.<agent>`) in an invocation of its own that shares
the caller's id, callbacks (which fire inside, on its agents), session state and invocation
state, but not its history: the agent sees only the request. Its events stream out while the
call runs (`Relay`), its final text, or its structured output, is the tool's result, and
`ctx.end_invocation()` inside it ends the caller's invocation too.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Coroutine, Mapping
from contextlib import aclosing
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from adk.agents.base import BaseAgent
from adk.agents.checkpoints import handing
from adk.errors import ToolArgumentsError, ToolError
from adk.events import Choice, Event, Message, ToolDeclaration
from adk.sessions.base import Session
from adk.tools import BaseTool

if TYPE_CHECKING:
    from adk.context import ToolContext

__all__ = ["AgentTool", "Relay", "string_argument", "tool_events"]

T = TypeVar("T")

_emit: ContextVar[Callable[[Event], None] | None] = ContextVar("adk_agent_tool_events", default=None)
"""Where an agent tool sends its agent's events: the relay of the agent that called it."""


def tool_events() -> Callable[[Event], None] | None:
    """Where the running tool call streams events as it runs (its agent's `Relay`), or None."""
    return _emit.get()


class AgentTool(BaseTool):
    """`agent` as a tool taking a `request` (the text the agent is asked), named after the agent.

    Passing an agent in an `LlmAgent`'s `tools=` wraps it in one. A durable run makes its call
    again on recovery (`checkpointed`): its agent's model attempts and tool calls are steps.
    """

    checkpointed = False

    def __init__(self, agent: BaseAgent, *, name: str | None = None, description: str | None = None) -> None:
        if not isinstance(agent, BaseAgent):
            raise TypeError(f"AgentTool takes an agent, got {agent!r}")
        self.agent = agent
        self.name = name or agent.name
        self.description = description if description is not None else agent.description
        self._declaration = ToolDeclaration(
            name=self.name,
            description=self.description,
            parameters={
                "type": "object",
                "properties": {"request": {"type": "string", "description": f"What to ask {agent.name}."}},
                "required": ["request"],
            },
        )

    @property
    def declaration(self) -> ToolDeclaration:
        return self._declaration

    def validate(self, args: Mapping[str, Any]) -> dict[str, Any]:
        return {"request": string_argument(self.name, args, "request")}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> Any:
        """Run the agent on the request; its last answer's text, or its typed value, is the result."""
        caller = ctx.invocation
        agent = self.agent
        branch = f"{ctx.branch}.{agent.name}" if ctx.branch else agent.name
        message = Message.user(args["request"])
        asked = Event.new(
            caller.invocation_id, ctx.agent.name, branch=branch, choices=[Choice(message=message)]
        )
        session = Session(
            id=caller.session.id, user_id=caller.session.user_id, state=caller.session.state, events=[asked]
        )
        invocation = caller._fork(session, message)
        emit = _emit.get()
        if emit is not None:
            await handing(asked)
            emit(asked)
        answer: Event | None = None
        try:
            async with aclosing(agent.run(invocation, branch)) as events:
                async for event in events:
                    if not event.is_partial:
                        session.events.append(event)  # the history of its later model calls and transfers
                        reply = event.message
                        if reply is not None and reply.role == "assistant" and not reply.tool_calls:
                            answer = event
                        if emit is not None:
                            await handing(event)  # agent tools called at once: in a replay's order
                    if emit is not None:
                        emit(event)
        finally:
            # its own calls left waiting, not the caller's: those of calls beside it are the caller's
            waiting = invocation.waiting
            if invocation.ended and not waiting:
                caller.end_invocation()
        if waiting:
            # Its run cannot pause: nothing would resume it (its session is its own, in memory).
            raise ToolError(
                f"agent tool {self.name!r} stopped: inside it, call {', '.join(map(repr, waiting))} waits"
                " for an answer (an approval or a pending result), which an agent used as a tool cannot"
                " wait for; give that tool to the calling agent, or hand over with a transfer instead"
            )
        if answer is None:
            return ""
        answering = agent.find_agent(answer.author)
        return answer.content if answering is None else answering.result_of(answer)

    def __repr__(self) -> str:
        return f"AgentTool({self.agent.name!r})"


def string_argument(tool: str, args: Mapping[str, Any], name: str) -> str:
    """The one argument, a string named `name`, of a call to `tool`; else `ToolArgumentsError`."""
    value = args.get(name)
    problems = [f"argument {k!r}: unexpected argument (parameters: {name!r})" for k in args if k != name]
    if isinstance(value, str) and not problems:
        return value
    if not isinstance(value, str):
        problems.insert(0, f"argument {name!r}: a string is required, got {value!r}")
    raise ToolArgumentsError(tool, problems)


class Relay(Generic[T]):
    """Runs `work` (an agent's tool calls) as a task, and streams the events its agent tools emit.

    Iterate `events()`; when it ends, `result` is what `work` returned (or its error is raised).
    Closing the iteration early cancels the work.
    """

    def __init__(self, work: Coroutine[Any, Any, T]) -> None:
        self._work = work
        self.result: T

    async def events(self) -> AsyncGenerator[Event, None]:
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        token = _emit.set(queue.put_nowait)
        try:
            task = asyncio.get_running_loop().create_task(self._work)  # copies the context: `_emit` set
        finally:
            _emit.reset(token)
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            self.result = task.result()
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
