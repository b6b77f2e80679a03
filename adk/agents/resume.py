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

from adk.agents.transfer import TRANSFER_TOOL
from adk.events import Choice, ErrorInfo, Event, Message, ObjectType, ToolCall
from adk.tools import parse_arguments

if TYPE_CHECKING:
    from adk.agents.base import BaseAgent
    from adk.agents.conditions import Condition
    from adk.approvals import Answer
    from adk.context import AgentContext
    from adk.tools import BaseTool

__all__ = ["RESUMING", "finish_calls", "handed_over_to", "loop_iterations_done", "pending_calls"]

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
        handled.add(branch)  # it had not started: it picks up, and what follows on its branch is new
        return []
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


def handed_over_to(ctx: AgentContext) -> str | None:
    """The name of the agent the `LlmAgent` of `ctx` had handed its turn to, which runs again in
    its place: its last event on its branch is the `agent.transfer`, or the result of its call to
    `transfer_to_agent` (the worker died before the transfer's own event). None if it had not."""
    if ctx.branch in RESUMING[ctx.invocation_id]:
        return None
    name = ctx.agent.name
    mine = (  # what it did: its messages and transfers (not the runner's pause, were it the root)
        e
        for e in reversed(ctx.invocation.session.events)
        if e.invocation_id == ctx.invocation_id
        and e.branch == ctx.branch
        and e.author == name
        and (e.message is not None or e.object == ObjectType.AGENT_TRANSFER)
    )
    last = next(mine, None)
    if last is None:
        return None
    if last.object == ObjectType.AGENT_TRANSFER:
        return last.actions.transfer_to_agent
    result = last.message
    if result is None or result.role != "tool" or result.name != TRANSFER_TOOL or last.error is not None:
        return None  # not a transfer, or one that failed (the model was told why)
    for e in mine:  # back to the call it answers: its arguments were checked when it was made
        for call in e.tool_calls:
            if call.id == result.tool_call_id:
                target = parse_arguments(TRANSFER_TOOL, call.function.arguments).get("agent_name")
                return target if isinstance(target, str) else None
    return None


def loop_iterations_done(ctx: AgentContext, until: Condition | None) -> int | None:
    """The iterations the `LoopAgent` of `ctx` had finished in the invocation being resumed, less
    one if the invocation stopped right at the end of one (its sub-agents all pass over it again,
    doing nothing): the resumed loop goes on from there with the rest of its `max_iterations`.

    An iteration ends when the loop's last sub-agent finishes (`_finished`). In an iteration cut
    short, the branches below the loop that had no event in it yet are marked picked up: their
    agents (a `ParallelAgent`'s children, each on its own branch) run as usual, rather than being
    taken for ones that had finished it. A loop that had not started, or that starts after the
    agent that picked up on its branch, runs from its first iteration; a loop inside another
    counts only its current run, what follows the last agent outside it. None: it had ended (its
    sub-agents had escalated, an agent after it had run, or `until` held at the end of the
    iteration it stopped at).
    """
    handled = RESUMING[ctx.invocation_id]
    if ctx.branch in handled:
        return 0
    loop = ctx.agent
    events = [
        e
        for e in ctx.invocation.session.events
        if e.invocation_id == ctx.invocation_id and not e.is_partial and _in_line(ctx.branch, e.branch)
    ]
    inside = [loop.find_agent(e.author) is not None for e in events]
    outside = [not inside[i] and _spoke(e) for i, e in enumerate(events)]  # another agent's answer
    # This run of the loop: what follows the last agent outside it that ran before it (a loop in
    # a loop runs again in each of the outer one's iterations).
    latest = max((i for i, mine in enumerate(inside) if mine), default=None)
    if latest is None:
        handled.add(ctx.branch)  # it had not started: it picks up, and what follows on its branch is new
        return 0
    before = max((i for i in range(latest) if outside[i]), default=-1)
    first = next(i for i in range(before + 1, latest + 1) if inside[i])
    if any(e.actions.escalate and inside[i] for i, e in enumerate(events) if i >= first):
        return None
    last = loop.sub_agents[-1]
    ends = [i for i in _finished(last, ctx.branch, events) if i >= first]
    start = ends[-1] + 1 if ends else first
    if any(outside[start:]):
        return None  # an agent after the loop ran: the loop had ended
    if ends and ends[-1] == len(events) - 1:  # stopped right at an iteration's end
        begun = ends[-2] + 1 if len(ends) > 1 else first
        step = [e for e in events[begun:] if last.find_agent(e.author) is not None]
        return None if until is not None and until(ctx.state, step) else len(ends) - 1
    cut = {e.branch for e in events[:start] if _below(ctx.branch, e.branch)}
    handled.update(cut - {e.branch for e in events[start:]})
    return len(ends)


def _spoke(event: Event) -> bool:
    """Whether `event` is an agent's message (an answer, a call, a result): not the user's, nor the
    runner's pause or a state change, which tell nothing of where a loop's run ended."""
    return event.author != "user" and event.message is not None


def _below(branch: str, other: str) -> bool:
    """Whether `other` is `branch` or a branch below it (a `ParallelAgent`'s child's, inside)."""
    return not branch or other == branch or other.startswith(branch + ".")


def _in_line(branch: str, other: str) -> bool:
    """Whether agents on `other` run in sequence with those on `branch`: it is `branch`, below it,
    or above it; not a branch beside it, whose agents run at the same time."""
    return _below(branch, other) or _below(other, branch)


def _finished(agent: BaseAgent, branch: str, events: list[Event]) -> list[int]:
    """The positions in `events` at which `agent`, on `branch`, finished a run, in order.

    An `LlmAgent` finishes with its final answer; a workflow with its last sub-agent; a
    `ParallelAgent` once all of its children have (each on its own branch); a `LoopAgent` with
    its `max_iterations`-th iteration or an escalation, or, when `until` ended it, where an agent
    after it starts, on its branch or one above (no event marks where a loop's run ends).
    """
    from adk.agents.workflow import LoopAgent, ParallelAgent, parallel_branch

    if isinstance(agent, ParallelAgent):
        runs = [_finished(c, parallel_branch(branch, agent.name, c.name), events) for c in agent.sub_agents]
        return [max(run) for run in zip(*runs, strict=False)]  # the runs every child finished
    if isinstance(agent, LoopAgent):
        iteration_ends = set(_finished(agent.sub_agents[-1], branch, events))
        finished: list[int] = []
        count, running = 0, -1  # iterations of the run going on, and its latest event (-1: none)
        for i, e in enumerate(events):
            if agent.find_agent(e.author) is None:
                if running >= 0 and _in_line(branch, e.branch) and _spoke(e):
                    finished.append(running)  # an agent after it ran: its run had ended
                    count, running = 0, -1
                continue
            running = i
            if e.actions.escalate or (i in iteration_ends and (count := count + 1) == agent.max_iterations):
                finished.append(i)
                count, running = 0, -1
        return finished
    if agent.sub_agents:
        return _finished(agent.sub_agents[-1], branch, events)
    return [
        i
        for i, e in enumerate(events)
        if e.branch == branch
        and e.author == agent.name
        and e.object == ObjectType.CHAT_COMPLETION
        and (message := e.message) is not None
        and message.role == "assistant"
        and not message.tool_calls
    ]


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
