"""An `LlmAgent`'s run, as named steps: a model call, a batch of tool calls, a hand-over, and
the resume and pause steps around them. `adk.agents.steps.Driver` drives them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from adk.agents.model_call import call_model
from adk.agents.resume import completed_transfer, finish_calls, handed_over_to, pending_calls
from adk.agents.tool import Relay
from adk.agents.tool_call import call_tool, call_tools
from adk.agents.transfer import hand_over, transferred
from adk.errors import MaxIterationsExceeded
from adk.events import Event, Message, ToolCall, waiting_ids_of
from adk.models.base import LlmRequest, new_request
from adk.recovery.policy import DEFAULT_POLICY

if TYPE_CHECKING:
    from adk.agents.llm import LlmAgent
    from adk.agents.steps import Step
    from adk.approvals import Answer
    from adk.callbacks.registry import Callbacks
    from adk.context import AgentContext

__all__ = ["LlmSteps"]


class LlmSteps:
    """One run of an `LlmAgent`, as steps that a driver awaits in turn until `over`.

    A step is a model call, a batch of tool calls, or a hand-over to another agent. One whose
    events are all known when it returns (a model call that neither streams nor fails, tool
    calls without agent tools) returns them as a list; one that streams returns the generator of
    its events, which the driver exhausts before the next step. The runner and `BaseAgent.run`
    drive the steps themselves, and so does `_run_body` (for a subclass that builds on it): a
    call answered at once then makes no generator of its own (docs/decisions.md).
    """

    __slots__ = (
        "agent",
        "bare",
        "calls",
        "coming",
        "ctx",
        "error",
        "history",
        "known",
        "left",
        "meter",
        "over",
        "policy",
        "recovery",
        "relay",
        "target",
        "turn",
    )
    calls: Sequence[ToolCall]

    def __init__(self, agent: LlmAgent, ctx: AgentContext, hooks: Callbacks) -> None:
        self.agent = agent
        self.ctx = ctx
        self.over = False
        self.left = agent.max_iterations
        self.turn: list[Message] = []
        """What the run added to the conversation, after the history's first `known` messages."""
        self.coming: Callable[[LlmSteps], Awaitable[Step]]
        """The coming step: a function, not a bound method, which would make a cycle."""
        invocation = ctx.invocation
        try:
            policy = self.policy = agent.retry_policy or invocation.retry_policy or DEFAULT_POLICY
            self.recovery, self.bare, self.meter = agent.recovery(hooks, policy)
            # The session's history is shared and only ever extended: its first `known` messages
            # are this run's past.
            history = self.history = invocation.session.history(ctx.branch)
            self.known = len(history)
            client = invocation.client_tools
            if client and (clash := sorted({t.name for t in client}.intersection(agent.tools))):
                raise ValueError(
                    f"agent {agent.name!r} has its own tool {clash[0]!r}: a client tool cannot replace it"
                )
        except Exception as error:  # raised by the first step, where it is the run's error
            self.error = error
            self.coming = LlmSteps._failed
            return
        if invocation.resuming is not None:  # finishing an invocation cut short or paused
            self.coming = LlmSteps._resume
        else:
            self.coming = LlmSteps._model

    def next(self) -> Awaitable[Step]:
        """The coming step."""
        return self.coming(self)

    async def _failed(self) -> Step:
        raise self.error

    async def _resume(self) -> Step:
        """The calls left unfinished (cut short, or waiting for answers), then the turn a transfer
        of the same response hands over; or the turn it had handed over already."""
        agent, ctx = self.agent, self.ctx
        targets = agent._transfer.targets if agent._transfer is not None else {}
        handed_to = targets.get(handed_over_to(ctx) or "")
        if handed_to is not None:  # the turn it had handed over goes on there
            self.over = True
            return handed_to.run(ctx.invocation, ctx.branch)
        stored = targets.get(completed_transfer(ctx) or "")
        pending = pending_calls(ctx)
        if pending is None:
            self.over = True
            return []
        self.calls = pending
        self.coming = LlmSteps._model
        if pending and agent.toolsets:  # listed here too: this process may not have listed them yet
            await agent.list_tools()
        results = self._results(await finish_calls(ctx, pending, agent.tools, self._answer))
        if stored is not None and self.coming is not LlmSteps._pause:
            self.target = stored
            self.coming = LlmSteps._hand_over
        return results

    def _answer(self, call: ToolCall, answer: Answer | None) -> Awaitable[Event]:
        return call_tool(self.agent, self.ctx, call, self.recovery, self.policy, answer)

    _model = staticmethod(call_model)
    """A model call (adk.agents.model_call): its response's event, or the envelope that goes on
    with a call that fails or streams."""

    def turn_left(self) -> bool:
        """Count a model call against `max_iterations` (`MaxIterationsExceeded` past it); False,
        and the steps are over, if the invocation was ended."""
        if not self.left:
            agent = self.agent
            raise MaxIterationsExceeded(
                f"agent {agent.name!r}: the model still asked for tools after"
                f" max_iterations={agent.max_iterations}"
            )
        self.left -= 1
        if self.ctx.invocation.ended:
            self.over = True
            return False
        return True

    def request(self) -> LlmRequest:
        """The request of the coming model call: the run's history and turn, the agent's tools
        and a client's."""
        agent, invocation = self.agent, self.ctx.invocation
        client = invocation.client_tools
        turn = self.turn
        request = new_request(
            agent.instruction,
            self.history[: self.known] + turn if turn else self.history[: self.known],
            [*agent._declarations, *client] if client else agent._declarations,
            invocation.stream,
            agent._output.response_format if agent._output is not None else None,
        )
        kept = invocation.session.histories.get(
            self.ctx.branch
        )  # the model's own count, for estimated_tokens
        if kept is not None:
            request.usage_anchor = kept.anchor
        return request

    def answer_pending(self) -> None:
        """The model call goes on in its envelope, which must give `answered` its response before
        the next step."""
        self.coming = LlmSteps._unanswered

    async def _unanswered(self) -> Step:
        raise RuntimeError(f"agent {self.agent.name!r}: a model call ended without a response")

    def answered(self, event: Event) -> Event:
        """Take a model call's final response: its message (its calls' ids made distinct) joins
        the turn, its tool calls are the next step; without calls it is the final answer (its
        output is settled before it goes: the event carries the `output_key`)."""
        choices = event.choices  # event.message, without a property call
        message = choices[0].message if choices else None
        calls = message.tool_calls if message is not None else ()
        if message is not None:
            if len(calls) > 1 and len({c.id for c in calls}) < len(calls):
                message = choices[0].message = _distinct(message)
                calls = message.tool_calls
            self.turn.append(message)
        if calls:
            self.calls = calls
            self.coming = LlmSteps._tools
        else:
            self.over = True
            output = self.agent._output
            if output is not None:
                output.settle(self.ctx, event)
        return event

    async def _tools(self) -> Step:
        """The calls of the last response: their results in call order; with agent tools, their
        agents' events first, as the calls run."""
        agent = self.agent
        work = call_tools(agent, self.ctx, self.calls, self.recovery, self.policy)
        if agent._relays:
            relay = self.relay = Relay(work)
            self.coming = LlmSteps._relayed
            return relay.events()
        self.coming = LlmSteps._model
        return self._results(await work)

    async def _relayed(self) -> Step:
        self.coming = LlmSteps._model
        return self._results(self.relay.result)

    def _results(self, results: list[Event]) -> list[Event]:
        """A batch of tool results; what follows it is decided here, and happens in the next step."""
        turn = self.turn
        waits = False  # a call waits for a person or a result: the run pauses after them
        for result in results:  # loops, not a generator made per result
            for choice in result.choices:
                if choice.message is not None:
                    turn.append(choice.message)
            if waiting_ids_of(result):
                waits = True
        # Marks the results of completed transfers, before anything is stored: a resumed run goes by it.
        target = transferred(self.ctx.invocation, results) if self.agent._transfer is not None else None
        if waits:
            self.coming = LlmSteps._pause
        elif target is not None:
            self.target = target
            self.coming = LlmSteps._hand_over
        return results

    async def _pause(self) -> Step:
        self.ctx.invocation.end_invocation()
        self.over = True
        return []

    async def _hand_over(self) -> Step:
        self.over = True
        return hand_over(self.ctx, self.target)


def _distinct(message: Message) -> Message:
    """`message` with its calls' ids made distinct: each call is known by its id (its approval, its
    result, a transfer), and a model's ids may repeat. A repeat becomes `<id>.<position>`, the
    same whenever the response is taken again (a durable run's replay)."""
    seen: set[str] = set()
    calls = []
    for i, call in enumerate(message.tool_calls):
        new = call.id
        while new in seen:
            new = f"{new}.{i}"
        seen.add(new)
        calls.append(call if new == call.id else dataclasses.replace(call, id=new))
    return dataclasses.replace(message, tool_calls=tuple(calls))
