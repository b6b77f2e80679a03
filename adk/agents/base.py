"""The flow every agent follows (after ADK-Go), around the body each kind of agent implements.

before_agent chain → if halted: one event with the content, the invocation ends → state changes
made so far go out as a state-delta event → the body's events, authored by this agent unless
they name their author → unless the invocation was ended: the after_agent chain, whose replaced
output is emitted as a new final event → its state delta.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Awaitable, Iterable, Sequence
from typing import Protocol, assert_never

from adk.callbacks.chain import run_after, run_before, run_on_error
from adk.callbacks.decisions import Decision, FellBack, Halted, Replaced
from adk.callbacks.protocols import AnyCallback
from adk.callbacks.registry import Callbacks, decided_by
from adk.callbacks.results import Cont, Fallback, Halt, Raise
from adk.callbacks.run import refuse_on_agent
from adk.context import AgentContext, Invocation
from adk.errors import locate
from adk.events import Choice, Event, Message

__all__ = ["BaseAgent"]


class Steps(Protocol):
    """An agent's run as steps (`BaseAgent._steps`): await `next()` until `over`; each step gives
    its events, or the generator of a step that streams them (exhaust it before the next)."""

    over: bool

    def next(self) -> Awaitable[list[Event] | AsyncGenerator[Event, None]]: ...


class OneStep:
    """The steps of a body that is one generator: a single step, the generator."""

    __slots__ = ("_events", "over")

    def __init__(self, events: AsyncGenerator[Event, None]) -> None:
        self._events = events
        self.over = False

    async def next(self) -> AsyncGenerator[Event, None]:
        self.over = True
        return self._events


class BaseAgent(ABC):
    """An agent: a name, callbacks, sub-agents, and a body that yields events."""

    def __init__(
        self,
        name: str,
        *,
        description: str = "",
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        sub_agents: Sequence[BaseAgent] = (),
    ) -> None:
        if not name.isidentifier():
            raise ValueError(f"agent name {name!r} must be an identifier (letters, digits, underscores)")
        self.name = name
        self._own_run = type(self).run is not BaseAgent.run
        """Whether its class has its own `run`, which the runner must then go through."""
        self.description = description
        self.callbacks = Callbacks.of(callbacks)
        refuse_on_agent(name, self.callbacks)
        self.sub_agents = list(sub_agents)
        self.parent_agent: BaseAgent | None = None
        """The agent this one is a sub-agent of (set when that agent is made), or None for a root."""
        seen: set[str] = set()
        for agent in self.sub_agents:
            if not isinstance(agent, BaseAgent):
                raise TypeError(f"agent {name!r}: sub_agents holds {agent!r}, which is not an agent")
            if agent.name in seen:
                raise ValueError(f"agent {name!r}: sub_agents has two agents named {agent.name!r}")
            if agent.parent_agent is not None:
                raise ValueError(
                    f"agent {name!r}: sub-agent {agent.name!r} is already a sub-agent of"
                    f" {agent.parent_agent.name!r}; an agent has one parent (make another instance)"
                )
            seen.add(agent.name)
        for agent in self.sub_agents:
            agent.parent_agent = self
            agent._adopted()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    @property
    def root_agent(self) -> BaseAgent:
        """The root of this agent's tree (itself, for a root)."""
        agent = self
        while agent.parent_agent is not None:
            agent = agent.parent_agent
        return agent

    def find_agent(self, name: str) -> BaseAgent | None:
        """This agent or the first of its descendants (depth first) named `name`, or None."""
        if self.name == name:
            return self
        for agent in self.sub_agents:
            found = agent.find_agent(name)
            if found is not None:
                return found
        return None

    def _adopted(self) -> None:
        """Called when this agent becomes a sub-agent: its parent and peers are known from now on."""
        return  # nothing to do, unless the kind of agent depends on them (LlmAgent's transfers)

    async def run(self, invocation: Invocation, branch: str = "") -> AsyncGenerator[Event, None]:
        """Run this agent in `invocation`, yielding its events (the runner stores and streams them)."""
        hooks = invocation.hooks_for(self)
        ctx = AgentContext(invocation, self, branch)
        if hooks.get("before_agent"):
            deciders: list[object] = []
            started = await run_before(hooks, "before_agent", ctx, deciders=deciders)
            match started:
                case Halt(value=content):
                    invocation.end_invocation()
                    halted = Halted(decided_by(deciders[0], "before_agent"), f"agent:{self.name}")
                    yield self._final_event(ctx, content, (halted,))
                    return
                case Cont(ctx=ctx):
                    pass
                case unreachable:
                    assert_never(unreachable)
            if invocation.state.has_delta:
                yield self._state_event(ctx)

        output: Message | None = None
        steps = self._steps(ctx, hooks) or OneStep(self._run_body(ctx))
        body: AsyncGenerator[Event, None] | None = None
        """A step that streams, being iterated."""
        try:
            while body is not None or not steps.over:
                if body is None:
                    step = await steps.next()
                    if not isinstance(step, list):
                        body = step
                        continue
                    batch: Sequence[Event] = step
                else:
                    try:
                        batch = (await anext(body),)
                    except StopAsyncIteration:
                        body = None
                        continue
                for event in batch:
                    if not event.author:
                        event.author = self.name
                    if invocation.escalated and not event.is_partial:
                        _carry_escalation(invocation, event)
                    message = event.message
                    if message is not None and message.role == "assistant" and not event.is_partial:
                        output = message
                    yield event
        except Exception as error:
            locate(error, f"agent:{self.name}")  # the innermost agent, unless known better
            if not hooks.get("on_agent_error"):
                raise
            fell_back = await self._recover(hooks, error, ctx)
            output = fell_back.message
            yield fell_back
        finally:
            if body is not None:  # closes a workflow's children (and their tool tasks) now
                await body.aclose()

        if invocation.ended or not hooks.get("after_agent"):
            return
        by: list[object] = []
        replaced = await run_after(hooks, "after_agent", output, ctx, deciders=by)
        if replaced is not None and replaced is not output:
            target = f"agent:{self.name}"
            decisions = tuple(Replaced(decided_by(o, "after_agent"), target) for o in by)
            yield self._final_event(ctx, replaced, decisions)
        if invocation.state.has_delta or invocation.escalated:
            yield self._state_event(ctx)

    def _steps(self, ctx: AgentContext, hooks: Callbacks) -> Steps | None:
        """The body as steps that `run` (or the runner) awaits itself, a generator less than
        iterating `_run_body`; None: iterate `_run_body`. Only `LlmAgent` has steps."""
        return None

    def _bare_steps(self, invocation: Invocation) -> Steps | None:
        """For the runner: the body's steps, when `run` would only pass their events on (it is
        not overridden, and no agent hook applies); else None. The runner then carries
        escalations and locates errors itself, as `run` does."""
        if self._own_run:
            return None
        hooks = invocation.hooks_for(self)
        if hooks.objects and (
            hooks.get("before_agent") or hooks.get("after_agent") or hooks.get("on_agent_error")
        ):
            return None
        return self._steps(AgentContext(invocation, self, ""), hooks)

    async def _recover(self, hooks: Callbacks, error: Exception, ctx: AgentContext) -> Event:
        """The on_agent_error chain: the final event of a `Fallback`, or the error raised again."""
        by: list[object] = []
        match await run_on_error(hooks, "on_agent_error", error, ctx, deciders=by):
            case Fallback(value=content):
                target = f"agent:{self.name}"
                fell = FellBack(
                    decided_by(by[0], "on_agent_error"), target, None, type(error).__name__, str(error)
                )
                return self._final_event(ctx, content, (fell,))
            case Raise(error=passed):
                raise locate(passed, f"agent:{self.name}")
            case unreachable:
                assert_never(unreachable)

    @abstractmethod
    def _run_body(self, ctx: AgentContext) -> AsyncGenerator[Event, None]:
        """The agent's own work, as events."""

    def _final_event(
        self, ctx: AgentContext, content: Message | str, decisions: tuple[Decision, ...]
    ) -> Event:
        message = Message.assistant(content) if isinstance(content, str) else content
        event = Event.new(
            ctx.invocation_id,
            self.name,
            branch=ctx.branch,
            choices=[Choice(message=message, finish_reason="stop")],
            done=True,
        )
        event.decisions = decisions
        return _carry_escalation(ctx.invocation, event)

    def _state_event(self, ctx: AgentContext) -> Event:
        """The state changes (and an escalation) of this agent's callbacks, as their own event."""
        event = Event.state_update(ctx.invocation_id, self.name, ctx.state.take_delta(), branch=ctx.branch)
        return _carry_escalation(ctx.invocation, event)


def _carry_escalation(invocation: Invocation, event: Event) -> Event:
    """Put a pending `escalate()` on `event`, where an enclosing `LoopAgent` sees it."""
    if invocation.escalated:
        event.actions.escalate = True
        invocation.escalated = False
    return event
