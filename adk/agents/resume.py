"""Resuming an invocation whose worker died: where each `LlmAgent` picks up from its stored events.

While the runner resumes an invocation, the agents run again. On each branch, the agent whose
events end the invocation's stored events there picks up where they stop: tool calls that have
no stored result are finished (re-run if the tool is idempotent, else answered with an error
saying the call was interrupted), then the loop goes on with the next model call. An agent
that an other agent followed on its branch is skipped; one that had not started runs as usual.

A paused invocation (docs/approvals.md) resumes the same way: its waiting calls have no stored
result, and the application's answers (`Invocation.answers`) say what becomes of each.

Which branches have picked up is the invocation's own (`Invocation.resuming`), never a table of
the process: another run that happens to have the same id is none of its business.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from adk.approvals import Approve, Reply
from adk.callbacks.decisions import Deferred
from adk.events import Choice, ErrorInfo, Event, Message, ObjectType, ToolCall, actions_of

if TYPE_CHECKING:
    from adk.agents.conditions import Condition
    from adk.approvals import Answer
    from adk.context import AgentContext
    from adk.tools import BaseTool

__all__ = [
    "completed_transfer",
    "escalates",
    "finish_calls",
    "handed_over_to",
    "in_line",
    "loop_iterations_done",
    "pending_calls",
    "spoke",
]


def pending_calls(ctx: AgentContext) -> list[ToolCall] | None:
    """What the agent of `ctx` still has to do in the invocation being resumed.

    None: it had finished (or another agent followed it), skip it. A list: the tool calls it
    must finish before its next model call (empty: just go on, as in a run not resuming).
    """
    handled = ctx.invocation.resuming
    branch = ctx.branch
    if handled is None or branch in handled:
        return []
    # What agents did on the branch: their messages and transfers. Not a state change (the
    # caller's, sent with the answers, or the runner's), nor the runner's pause or a waiting event.
    mine = [
        e
        for e in ctx.invocation.session.events
        if e.invocation_id == ctx.invocation_id
        and e.branch == branch
        and e.author != "user"
        and (e.message is not None or e.object == ObjectType.AGENT_TRANSFER)
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
    its place: its last event on its branch is the `agent.transfer`. None if it is not."""
    handled = ctx.invocation.resuming
    if handled is None or ctx.branch in handled:
        return None
    last = next(_own_steps(ctx), None)
    if last is None or last.object != ObjectType.AGENT_TRANSFER:
        return None
    actions = actions_of(last)
    return None if actions is None else actions.transfer_to_agent


def completed_transfer(ctx: AgentContext) -> str | None:
    """The agent a transfer among the stored results of the last response of the `LlmAgent` of
    `ctx` hands over to, the worker having stopped before its `agent.transfer` event (or paused).

    Only a result marked with `actions.transfer_to_agent` is one: its envelope completed as a
    transfer (adk.agents.transfer.transferred). A refused, failed or fallen-back transfer is none.
    """
    handled = ctx.invocation.resuming
    if handled is None or ctx.branch in handled:
        return None
    done = None
    for event in _own_steps(ctx):
        message = event.message
        if message is None or message.role != "tool":
            break  # its last response: the results stop there
        actions = actions_of(event)
        if actions is not None and actions.transfer_to_agent:
            done = actions.transfer_to_agent  # the first in call order wins
    return done


def _own_steps(ctx: AgentContext) -> Iterator[Event]:
    """The messages and transfers of the agent of `ctx` on its branch in the invocation being
    resumed, latest first."""
    name = ctx.agent.name
    return (
        e
        for e in reversed(ctx.invocation.session.events)
        if e.invocation_id == ctx.invocation_id
        and e.branch == ctx.branch
        and e.author == name
        and (e.message is not None or e.object == ObjectType.AGENT_TRANSFER)
    )


def loop_iterations_done(ctx: AgentContext, until: Condition | None) -> int | None:
    """The iterations the `LoopAgent` of `ctx` had finished in the invocation being resumed, less
    one if the invocation stopped right at the end of one (its sub-agents all pass over it again,
    doing nothing): the resumed loop goes on from there with the rest of its `max_iterations`.

    An iteration ends when the loop's last sub-agent finishes (`BaseAgent.finished_at`). In an
    iteration cut short, the branches below the loop that had no event in it yet are marked picked up: their
    agents (a `ParallelAgent`'s children, each on its own branch) run as usual, rather than being
    taken for ones that had finished it. A loop that had not started, or that starts after the
    agent that picked up on its branch, runs from its first iteration; a loop inside another
    counts only its current run, what follows the last agent outside it. None: it had ended (its
    sub-agents had escalated, an agent after it had run, or `until` held at the end of the
    iteration it stopped at).
    """
    handled = ctx.invocation.resuming
    if handled is None or ctx.branch in handled:
        return 0
    loop = ctx.agent
    events = [
        e
        for e in ctx.invocation.session.events
        if e.invocation_id == ctx.invocation_id and not e.is_partial and in_line(ctx.branch, e.branch)
    ]
    inside = [loop.find_agent(e.author) is not None for e in events]
    outside = [not inside[i] and spoke(e) for i, e in enumerate(events)]  # another agent's answer
    # This run of the loop: what follows the last agent outside it that ran before it (a loop in
    # a loop runs again in each of the outer one's iterations).
    latest = max((i for i, mine in enumerate(inside) if mine), default=None)
    if latest is None:
        handled.add(ctx.branch)  # it had not started: it picks up, and what follows on its branch is new
        return 0
    before = max((i for i in range(latest) if outside[i]), default=-1)
    first = next(i for i in range(before + 1, latest + 1) if inside[i])
    if any(escalates(e) and inside[i] for i, e in enumerate(events) if i >= first):
        return None
    last = loop.sub_agents[-1]
    ends = [i for i in last.finished_at(ctx.branch, events) if i >= first]
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


def escalates(event: Event) -> bool:
    """Whether `event` ends a `LoopAgent` (`actions.escalate`), read without making its actions."""
    actions = actions_of(event)
    return actions is not None and actions.escalate


def spoke(event: Event) -> bool:
    """Whether `event` is an agent's message (an answer, a call, a result): not the user's, nor the
    runner's pause or a state change, which tell nothing of where a loop's run ended."""
    return event.author != "user" and event.message is not None


def _below(branch: str, other: str) -> bool:
    """Whether `other` is `branch` or a branch below it (a `ParallelAgent`'s child's, inside)."""
    return not branch or other == branch or other.startswith(branch + ".")


def in_line(branch: str, other: str) -> bool:
    """Whether agents on `other` run in sequence with those on `branch`: it is `branch`, below it,
    or above it; not a branch beside it, whose agents run at the same time."""
    return _below(branch, other) or _below(other, branch)


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
        if type(answer) is Approve or type(answer) is Reply:  # covers the call as it was shown
            results.append(await run(_as_shown(ctx, call), answer))
            continue
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


def _as_shown(ctx: AgentContext, call: ToolCall) -> ToolCall:
    """`call` as the person approved it: the tool and arguments of its latest approval request,
    which are a repair's or a callback's rather than the model's when the call asked again. Its
    request is on its branch: a call id is the model's, which a call on another branch may have too."""
    for event in reversed(ctx.invocation.session.events):
        if (
            event.object != ObjectType.APPROVAL_REQUEST
            or event.branch != ctx.branch
            or call.id not in event.long_running_tool_ids
        ):
            continue
        shown = [d for d in event.decisions if type(d) is Deferred and d.call_id == call.id]
        if not shown or event.invocation_id != ctx.invocation_id:
            break
        tool = shown[-1].target.removeprefix("tool:")
        return ToolCall.of(tool, json.dumps(shown[-1].arguments), id=call.id)
    return call
