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
    from adk.agents.conditions import Condition
    from adk.approvals import Answer
    from adk.context import AgentContext
    from adk.tools import BaseTool

__all__ = ["RESUMING", "finish_calls", "loop_iterations_done", "pending_calls"]

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


def loop_iterations_done(ctx: AgentContext, until: Condition | None) -> int | None:
    """The iterations the `LoopAgent` of `ctx` had finished in the invocation being resumed, less
    one if the invocation stopped right at the end of one (its sub-agents all pass over it again,
    doing nothing): the resumed loop goes on from there with the rest of its `max_iterations`.

    An iteration ends with a final answer of the loop's last sub-agent (its last leaf, for a
    workflow) on the loop's branch. A loop that had not started, or that starts after the agent
    that picked up on its branch, runs from its first iteration. None: it had ended (its
    sub-agents had escalated, or `until` held at the end of the iteration it stopped at).
    """
    if ctx.branch in RESUMING[ctx.invocation_id]:
        return 0
    loop = ctx.agent
    last = loop
    while last.sub_agents:
        last = last.sub_agents[-1]
    mine = [
        e
        for e in ctx.invocation.session.events
        if e.invocation_id == ctx.invocation_id and e.branch == ctx.branch and not e.is_partial
    ]
    if any(e.actions.escalate and loop.find_agent(e.author) is not None for e in mine):
        return None
    ends = [
        i
        for i, e in enumerate(mine)
        if e.author == last.name
        and e.object == ObjectType.CHAT_COMPLETION
        and (message := e.message) is not None
        and message.role == "assistant"
        and not message.tool_calls
    ]
    if not ends or ends[-1] != len(mine) - 1:
        return len(ends)
    # Stopped right at an iteration's end: had `until` ended the loop there?
    start = ends[-2] + 1 if len(ends) > 1 else 0
    step = [e for e in mine[start:] if e.author == last.name]
    return None if until is not None and until(ctx.state, step) else len(ends) - 1


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
