"""An MCP tool call's progress as events: each `notifications/progress` the server sends for a
call becomes a partial `tool.progress` event, streamed by the runner while the call runs.

adk asks for progress (a progress token on every `tools/call`) only where the events can go out:
inside an agent's tool calls, whose `Relay` streams what a tool emits (`adk.agents.tool.tool_events`).
The event is partial, so it is never stored; its delta is a `tool` message answering the call
(`tool_call_id`, `name`) whose content is the progress as one line: `2/5`, `2/5: <message>`, or
`2` when the server gives no total.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from adk.context import ToolContext
from adk.events import Choice, Event, Message, ObjectType

if TYPE_CHECKING:
    from mcp.shared.dispatcher import ProgressFnT

__all__ = ["Running", "progress_event", "progress_of"]


def progress_of(call: Running) -> ProgressFnT | None:
    """The progress callback of `call`: it streams `tool.progress` events where the call runs now
    (a call held open across a pause goes on in the resumed run); None where nothing would stream
    them (no progress token is sent then)."""
    if call.emit is None:
        return None

    async def report(progress: float, total: float | None, message: str | None) -> None:
        emit = call.emit
        if emit is not None:
            emit(progress_event(call.ctx, progress, total, message))

    return report


class Running(Protocol):
    """A tool call on its way (`adk.mcp_requests.InCall`): its context, and where its events go."""

    ctx: ToolContext
    emit: Callable[[Event], None] | None


def progress_event(ctx: ToolContext, progress: float, total: float | None, message: str | None) -> Event:
    """The partial `tool.progress` event of one progress notification for the call of `ctx`."""
    line = _number(progress) if total is None else f"{_number(progress)}/{_number(total)}"
    if message:
        line = f"{line}: {' '.join(message.split())}"
    told = Message(role="tool", content=line, tool_call_id=ctx.tool_call_id, name=ctx.tool.name)
    return Event.new(
        ctx.invocation_id,
        ctx.agent.name,
        object=ObjectType.TOOL_PROGRESS,
        branch=ctx.branch,
        is_partial=True,
        choices=[Choice(delta=told)],
    )


def _number(value: float) -> str:
    """`3` for 3.0, `0.5` for 0.5."""
    return str(int(value)) if float(value).is_integer() else str(value)
