"""Resuming an invocation whose worker died: where each `LlmAgent` picks up from its stored events.

While the runner resumes an invocation, the agents run again. On each branch, the agent whose
events end the invocation's stored events there picks up where they stop: tool calls that have
no stored result are finished (re-run if the tool is idempotent, else answered with an error
saying the call was interrupted), then the loop goes on with the next model call. An agent
that an other agent followed on its branch is skipped; one that had not started runs as usual.

A paused invocation (docs/approvals.md) resumes the same way: its waiting calls have no stored
result, and the application's answers (`Invocation.answers`) say what becomes of each.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

from adk.events import Choice, ErrorInfo, Event, Message, ObjectType, ToolCall

if TYPE_CHECKING:
    from adk.approvals import Answer
    from adk.context import AgentContext
    from adk.tools import BaseTool

__all__ = ["RESUMING", "finish_calls", "pending_calls"]

RESUMING: dict[str, set[str]] = {}
"""Invocation ids being resumed -> the branches whose agent has already picked up."""


def pending_calls(ctx: AgentContext) -> list[ToolCall] | None:
    """What the agent of `ctx` still has to do in the invocation being resumed.

    None: it had finished (or another agent followed it), skip it. A list: the tool calls it
    must finish before its next model call (empty: just go on).
    """
    handled = RESUMING[ctx.invocation_id]
    branch = ctx.branch
    if branch in handled:
        return []
    mine = [
        e
        for e in ctx.invocation.session.events
        if e.invocation_id == ctx.invocation_id
        and e.branch == branch
        and e.object != ObjectType.RUNNER_PAUSED
    ]
    name = ctx.agent.name
    if not any(e.author == name for e in mine):
        return []  # it had not started
    if mine[-1].author != name:
        return None  # another agent ran after it on this branch
    handled.add(branch)
    answered: set[str] = set()
    for event in reversed(mine):
        message = event.message
        if message is None or event.author != name:
            continue
        if message.role == "tool":
            answered.add(message.tool_call_id or "")
        elif message.role == "assistant":
            if not message.tool_calls:
                return None  # its final answer is stored
            return [c for c in message.tool_calls if c.id not in answered]
    return []


async def finish_calls(
    ctx: AgentContext,
    calls: list[ToolCall],
    tools: Mapping[str, BaseTool],
    run: Callable[[ToolCall, Answer | None], Awaitable[Event]],
) -> list[Event]:
    """The results of `calls` that were interrupted (re-run where idempotent, else an error result)
    or answered (an approval or a pending result)."""
    results = []
    answers = ctx.invocation.answers
    for call in calls:
        name = call.function.name
        tool = tools.get(name)
        answer = answers.get(call.id)
        if answer is not None or (tool is not None and tool.idempotent):
            results.append(await run(call, answer))
            continue
        text = (
            f"Error: the call to tool {name!r} was interrupted (its worker stopped) before its result"
            " was stored; its effect is unknown: it may or may not have happened"
        )
        results.append(
            Event.new(
                ctx.invocation_id,
                ctx.agent.name,
                branch=ctx.branch,
                object=ObjectType.TOOL_RESPONSE,
                choices=[Choice(message=Message.tool(text, tool_call_id=call.id, name=name))],
                error=ErrorInfo(type="ToolInterrupted", message=text, where=f"tool:{name}"),
            )
        )
    return results
