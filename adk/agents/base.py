"""The flow every agent follows (after ADK-Go), around the body each kind of agent implements.

before_agent chain → if halted: one event with the content, the invocation ends → state changes
made so far go out as a state-delta event → the body's events, authored by this agent unless
they name their author → unless the invocation was ended: the after_agent chain, whose replaced
output is emitted as a new final event → its state delta.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Iterable, Sequence
from typing import Any, ClassVar, assert_never

from adk.agents.metering import meter_of
from adk.agents.model_call import call_aside
from adk.agents.steps import Driver, OneStep, Step, Steps
from adk.callbacks.chain import run_chain
from adk.callbacks.decisions import Decision, FellBack, Halted, Replaced, carried
from adk.callbacks.protocols import AnyCallback, Content
from adk.callbacks.registry import AFTER_AGENT, BEFORE_AGENT, ON_AGENT_ERROR, Callbacks, decided_by
from adk.callbacks.results import Cont, Fallback, Halt, Raise
from adk.callbacks.run import refuse_on_agent
from adk.context import AgentContext, Invocation, ModelContext
from adk.errors import locate
from adk.events import Choice, Event, LlmResponse, Message, ObjectType
from adk.recovery import Attempts

__all__ = ["BaseAgent", "carry_escalation"]


class BaseAgent(ABC):
    """An agent: a name, callbacks, sub-agents, and a body that yields events."""

    transfers: ClassVar[bool] = False
    """Whether the agent takes part in transfers (an `LlmAgent`): its sub-agents may then transfer
    to it and to each other (adk.agents.transfer); a workflow agent decides itself who runs."""

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

    def result_of(self, answer: Event) -> Any:
        """What its final answer `answer` gives as a value (an agent tool's result): its text."""
        return answer.content

    def finished_at(self, branch: str, events: list[Event]) -> list[int]:
        """The positions in `events` (an invocation's, being resumed: adk.agents.resume) at which
        this agent, on `branch`, finished a run, in order: with its last sub-agent, or, without
        sub-agents, with its final answer. `ParallelAgent` and `LoopAgent` answer their own way."""
        if self.sub_agents:
            return self.sub_agents[-1].finished_at(branch, events)
        return [
            i
            for i, e in enumerate(events)
            if e.branch == branch
            and e.author == self.name
            and e.object == ObjectType.CHAT_COMPLETION
            and (message := e.message) is not None
            and message.role == "assistant"
            and not message.tool_calls
        ]

    def _adopted(self) -> None:
        """Called when this agent becomes a sub-agent: its parent and peers are known from now on."""
        return  # nothing to do, unless the kind of agent depends on them (LlmAgent's transfers)

    async def run(self, invocation: Invocation, branch: str = "") -> AsyncGenerator[Event, None]:
        """Run this agent in `invocation`, yielding its events (the runner stores and streams them)."""
        driver = Driver(self.steps(invocation, branch))
        try:
            while not driver.over:
                for event in await driver.batch():
                    yield event
        finally:
            await driver.aclose()  # closes a workflow's children (and their tool tasks) now

    def steps(self, invocation: Invocation, branch: str = "", hooks: Callbacks | None = None) -> Steps:
        """This agent's run as steps (what `run` yields): its body's steps with its agent hooks
        around them (`HookedSteps`); `hooks`, those that apply to it, if the caller has them."""
        if hooks is None:
            hooks = invocation.hooks_for(self)
        ctx = AgentContext(invocation, self, branch)
        return HookedSteps(self, ctx, hooks, self._steps(ctx, hooks) or OneStep(self._run_body(ctx)))

    def _steps(self, ctx: AgentContext, hooks: Callbacks) -> Steps | None:
        """The body as steps that `run` (or the runner) awaits itself, a generator less than
        iterating `_run_body`; None: iterate `_run_body`. Only `LlmAgent` has steps."""
        return None

    def _runner_steps(self, invocation: Invocation) -> Steps | None:
        """For the runner: the body's steps, when `run` would only pass their events on (it is
        not overridden, and no agent hook applies); the steps with their hooks when one does; None
        when the class has its own `run`, or a body of one generator and no hook (the runner then
        iterates `run`). Bare steps' escalations and errors' locations are the runner's to add."""
        if self._own_run:
            return None
        hooks = invocation.hooks_for(self)
        if hooks.agent_hooks:
            return self.steps(invocation, "", hooks)
        return self._steps(AgentContext(invocation, self, ""), hooks)

    async def call_aside(self, hooks: Callbacks, mctx: ModelContext, attempts: Attempts) -> LlmResponse:
        """A model call made aside of this agent's turns, through `hooks` (a `Compact`'s summary, an
        MCP server's sampling request), metered by its run's meters as its own calls are."""
        return await call_aside(hooks, mctx, attempts, meter_of(mctx.invocation.hooks_for(self).objects))

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
        return carry_escalation(ctx.invocation, event)

    def _state_event(self, ctx: AgentContext) -> Event:
        """The state changes (and an escalation) of this agent's callbacks, as their own event."""
        event = Event.state_update(ctx.invocation_id, self.name, ctx.state.take_delta(), branch=ctx.branch)
        return carry_escalation(ctx.invocation, event)


class HookedSteps:
    """An agent's run as steps: before_agent, the body's steps (each event claimed for the agent,
    on_agent_error around them), then after_agent, unless the invocation ended.

    A step of the body that gives its events at once stays one step, so that a run with agent
    hooks is driven step by step as one without them, not event by event."""

    __slots__ = ("_phase", "agent", "body", "ctx", "hooks", "output", "over")

    def __init__(self, agent: BaseAgent, ctx: AgentContext, hooks: Callbacks, body: Steps) -> None:
        self.agent, self.ctx, self.hooks, self.body = agent, ctx, hooks, body
        self.output: Message | None = None
        """The agent's last complete answer: what after_agent is given."""
        self.over = False
        self._phase = _BEFORE

    async def next(self) -> Step:
        # The chains are awaited here, and their answers judged by plain methods: a coroutine less each.
        if self._phase == _BEFORE:
            self._phase = _BODY
            if before := self.hooks.impls["before_agent"]:
                deciders: list[object] = []
                answer: Cont[AgentContext] | Halt[Content]
                answer = await run_chain(before, BEFORE_AGENT, self.ctx, deciders=deciders)
                if not isinstance(answer, Cont):  # a class pattern would cost more
                    return self._halted(answer, deciders)
                self.ctx = passed = answer.ctx
                # state._delta: has_delta without a property call, as the runner reads it
                if passed.invocation.state._delta:  # the state its callbacks changed, as an event
                    return [self.agent._state_event(passed)]
        body = self.body
        if self._phase == _BODY and not body.over:
            try:
                step = await body.next()
            except Exception as error:
                return await self._failed(error)
            if isinstance(step, list):
                return self._claimed(step)
            return self._stream(step)
        self.over = True
        after = self.hooks.impls["after_agent"]
        if not after or self.ctx.invocation.ended:
            return []
        by: list[object] = []
        return self._ended(await run_chain(after, AFTER_AGENT, self.output, self.ctx, deciders=by), by)

    def _halted(self, answer: Halt[Content], deciders: list[object]) -> list[Event]:
        """The before_agent chain halted: its final event; the invocation then ends, and the run
        is over."""
        agent = self.agent
        self.over = True
        self.ctx.invocation.end_invocation()
        halted = Halted(decided_by(deciders[0], "before_agent"), f"agent:{agent.name}")
        return [agent._final_event(self.ctx, answer.value, (halted,))]

    def _claimed(self, events: list[Event]) -> list[Event]:
        """`events`, made the agent's (unless they name their author), with a pending escalation
        carried on the first complete one; the last complete answer is what after_agent sees."""
        invocation = self.ctx.invocation
        for event in events:
            if not event.author:
                event.author = self.agent.name
            if event.is_partial:
                continue
            if invocation.escalated:
                carry_escalation(invocation, event)
            choices = event.choices  # event.message, without a property call
            if choices and (message := choices[0].message) is not None and message.role == "assistant":
                self.output = message
        return events

    async def _stream(self, events: AsyncGenerator[Event, None]) -> AsyncGenerator[Event, None]:
        """A step of the body that streams, its events claimed; its failure offered to on_agent_error."""
        try:
            async for event in events:
                yield self._claimed([event])[0]
        except Exception as error:
            for event in await self._failed(error):
                yield event
        finally:
            await events.aclose()  # its agents below, and their tool tasks, now

    def _ended(self, replaced: Message | None, by: list[object]) -> list[Event]:
        """The after_agent chain's output `replaced` (`by` those who replaced it), as events: a new
        final event if it is not the agent's, then the state changes (and an escalation) its
        callbacks made."""
        agent, ctx = self.agent, self.ctx
        events: list[Event] = []
        if replaced is not None and replaced is not self.output:
            target = f"agent:{agent.name}"
            decisions = tuple(Replaced(decided_by(o, "after_agent"), target) for o in by)
            events.append(agent._final_event(ctx, replaced, decisions))
        if ctx.invocation.state._delta or ctx.invocation.escalated:  # has_delta, without a property call
            events.append(agent._state_event(ctx))
        return events

    async def _failed(self, error: Exception) -> list[Event]:
        """The body failed: the on_agent_error chain's final event (the body is then over), or the
        error raised again, located at this agent unless known better."""
        agent = self.agent
        locate(error, f"agent:{agent.name}")
        impls = self.hooks.impls["on_agent_error"]
        if not impls:
            raise error
        self._phase = _AFTER
        by: list[object] = []
        answer: Fallback[Content] | Raise = await run_chain(
            impls, ON_AGENT_ERROR, error, self.ctx, deciders=by
        )
        match answer:
            case Fallback(value=content):
                by_name, target = decided_by(by[0], "on_agent_error"), f"agent:{agent.name}"
                fell = FellBack(by_name, target, None, type(error).__name__, str(error))
                # what the failed envelope had decided goes on with it, as on an error event
                fell_back = agent._final_event(self.ctx, content, (*carried(error), fell))
                self.output = fell_back.message
                return [fell_back]
            case Raise(error=passed):
                raise locate(passed, f"agent:{agent.name}")
            case unreachable:
                assert_never(unreachable)


_BEFORE, _BODY, _AFTER = range(3)


def carry_escalation(invocation: Invocation, event: Event) -> Event:
    """Put a pending `escalate()` on `event`, where an enclosing `LoopAgent` sees it."""
    if invocation.escalated:
        event.actions.escalate = True
        invocation.escalated = False
    return event
