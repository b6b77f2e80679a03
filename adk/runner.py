"""`Runner`: runs an agent for one user message, streams its events and keeps the session.

A run goes through its phases in order, each a method of `Runner` that `_run` calls: take the
session's lease (adk/runner_lease.py), start or resume (`_begin`), open (`_open`: the user's
event), stream the agent's steps (in `_run`: a generator of their own would cost every event a
step more), then finish (`_state_change`, `_finish`: the completion or pause event) or fail
(`_fail`: the error event), and release the lease. What the phases share is one `_Run`.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from typing import Any, TypeAlias, overload

from adk.agents.base import BaseAgent, carry_escalation
from adk.agents.steps import Driver, OneStep
from adk.agents.transfer import active_agent
from adk.approvals import Answer
from adk.callbacks.decisions import carried
from adk.callbacks.protocols import AnyCallback
from adk.callbacks.registry import Callbacks
from adk.callbacks.run import RunHooks
from adk.context import Invocation, current_invocation_var
from adk.errors import CallbackError, SessionBusyError, locate, where
from adk.events import Event, Message, ObjectType, ToolDeclaration, new_choice, new_event, new_id
from adk.limits.timeouts import deadline, positive, run_bounded
from adk.recovery import RetryPolicy
from adk.runner_lease import Claim, hold, release, took
from adk.runner_start import answers_to_paused, asked, script_args, unfinished, user_message
from adk.sessions.base import Session, SessionService
from adk.sessions.memory import InMemorySessionService

__all__ = ["Runner"]

log = logging.getLogger(__name__)

_NO_CALLBACKS = Callbacks((), {})
_DEFAULT_POLICY = RetryPolicy()
"""Shared by the runners given none (it is frozen and keeps no state), so that the callback it
becomes is resolved once per process (about 15 µs), not once per runner."""
_Extras: TypeAlias = "tuple[dict[str, Any] | None, tuple[ToolDeclaration, ...]]"
"""What a caller may bring to a run beside its message: a state delta, client tools."""


class _Run(Claim):
    """One run as its phases share it: its claim on the session (adk/runner_lease.py), what it was
    asked, and once it started its invocation and its run hooks."""

    __slots__ = (
        "agent",
        "answers",
        "callbacks",
        "ends",
        "extras",
        "hooks",
        "invocation_id",
        "message",
        "resuming",
        "stream",
        "timeout",
    )

    def __init__(
        self,
        key: tuple[str, str],
        message: Message | None,
        callbacks: Iterable[AnyCallback] | Callbacks,
        stream: bool,
        invocation_id: str | None,
        answers: tuple[Mapping[str, Answer], Mapping[str, Any]] | None,
        agent: BaseAgent | None,
        extras: _Extras | None,
    ) -> None:
        Claim.__init__(self, key)
        self.message = message
        """The new message; None to answer a paused run (`answers`) or resume a cut one."""
        # registration errors surface here, before anything runs
        self.callbacks = Callbacks.of(callbacks) if callbacks else _NO_CALLBACKS
        self.stream = stream
        self.invocation_id = invocation_id
        self.answers = answers
        self.agent = agent
        """The agent asked to take the message (`run(agent=...)`), or None."""
        self.extras = extras
        self.resuming = answers is not None or message is None
        """Whether a stored invocation goes on, rather than a new one starting."""
        self.hooks: RunHooks | None = None

    timeout: float | None
    """Seconds the run may take (its deadline), or None; set by `Runner._start`."""
    invocation: Invocation
    """Set when the run starts (`Runner._begin`)."""
    ends: tuple[float, float] | None
    """When the run must end by, and its timeout (`adk.limits.timeouts.deadline`); set with `invocation`."""


def _complete(invocation: Invocation, event: Event, bare: BaseAgent | None) -> None:
    """Put on a complete event what is the run's to carry: a pending escalation (for an agent the
    runner drives itself, as its `run()` would) and the state the agents changed so far."""
    if bare is not None and invocation.escalated:
        carry_escalation(invocation, event)
    state = invocation.state
    if state._delta:  # state.has_delta, without a property call per event
        event.actions.state_delta.update(state.take_delta())


async def _stopped(this: _Run, stopped: BaseException) -> None:
    """A run that did not end by itself (its consumer stopped iterating, or it was cancelled):
    after_run is told, and the invocation ends; both do nothing once the run had ended."""
    if this.hooks is not None and isinstance(stopped, GeneratorExit | asyncio.CancelledError):
        await this.hooks.stopped(stopped)
    this.invocation._end(stopped)


class Runner:
    """Runs `agent` turn by turn on sessions kept by `session_service`.

    Callbacks given here run for every agent of every run, before the agent's own and the run's.
    The default store is in memory; pass a `SqliteSessionService` to survive restarts, or a
    `PostgresSessionService` for many worker processes.
    """

    runs_here = True  # its runs' hooks run here, so a surface may add run callbacks (not a QueuedRunner's)

    def __init__(
        self,
        agent: BaseAgent,
        *,
        session_service: SessionService | None = None,
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        retry_policy: RetryPolicy | None = None,
        timeout: float | None = None,
    ) -> None:
        self.agent = agent
        self.timeout = positive(timeout, "Runner: timeout")
        """Seconds each run may take, unless `run(timeout=)` says otherwise (docs/limits.md)."""
        self.session_service: SessionService = session_service or InMemorySessionService()
        self.callbacks = Callbacks.of(callbacks)
        self.retry_policy = retry_policy or _DEFAULT_POLICY
        self._active: dict[tuple[str, str], Claim] = {}
        """The claim of this runner's last run of each session it holds (adk/runner_lease.py)."""
        self._hooked = RunHooks.found(self.callbacks)

    def run(
        self,
        user_id: str,
        session_id: str,
        message: str | Message | None = None,
        *,
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        stream: bool = False,
        invocation_id: str | None = None,
        agent: str | None = None,
        approvals: Mapping[str, Answer] | None = None,
        tool_results: Mapping[str, Any] | None = None,
        state_delta: Mapping[str, Any] | None = None,
        client_tools: Sequence[ToolDeclaration] = (),
        timeout: float | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Run the agent on `message`, yielding every event as it happens.

        The message goes to the agent of the tree that last answered in the session, when
        transfers could bring the conversation back from it to the root (docs/agents.md), else to
        the root; `agent` names the one to take it instead.

        Or, with no message, answer the calls a paused run left waiting (docs/approvals.md):
        `approvals={call_id: Approve() | Reject(reason)}`, `tool_results={call_id: value}`; the
        same invocation resumes. Answers that do not cover exactly the waiting calls raise
        `ApprovalError` when iterated, and change nothing.

        Complete events are stored in the session before they are yielded; partial (streamed)
        ones are only yielded. An error that ends the run, a store failure included, is yielded
        (and stored if the store allows) as a final `error` event rather than raised. Stop
        iterating at any time: the run stops, pending tool calls are cancelled, and what was
        stored stays. Iterating a run on a session that another run holds (its iterator neither
        exhausted, closed nor dropped, in this process or another sharing the store) raises
        `SessionBusyError`.

        `state_delta` is the caller's own change to session state, stored first (beside answers
        too: the waiting calls run all the same). `client_tools` are tools the caller runs itself
        (a browser's): the model is offered them beside the agent's own, and a call to one waits,
        like a long-running tool's, for its result in `tool_results`.

        `timeout` (or the runner's) is the run's deadline in seconds: past it, the step under way is
        cancelled and a `RunTimeout` error event ends the run; what was stored stays.
        """
        message, answers = asked(message, agent, approvals, tool_results)
        start = None if agent is None else self.agent.find_agent(agent)
        if agent is not None and start is None:
            raise ValueError(f"run(agent={agent!r}): {self.agent.name!r} has no agent of that name")
        delta = dict(state_delta) if state_delta else None
        extras = (delta, tuple(client_tools)) if delta or client_tools else None
        this = _Run((user_id, session_id), message, callbacks, stream, invocation_id, answers, start, extras)
        return self._start(this, timeout)

    def resume(
        self,
        user_id: str,
        session_id: str,
        *,
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        stream: bool = False,
    ) -> AsyncGenerator[Event, None]:
        """Finish the session's last invocation if it was cut short (its worker died), yielding its events.

        It keeps its invocation id and goes on from its stored events: stored tool results are
        reused, a tool call without one is re-run only if the tool is idempotent (else the model
        is told its effect is unknown), an interrupted model call is made again. A session whose
        last invocation ended (or that has none) yields nothing.
        """
        return self._start(_Run((user_id, session_id), None, callbacks, stream, None, None, None, None), None)

    def _start(self, this: _Run, timeout: float | None) -> AsyncGenerator[Event, None]:
        this.timeout = self.timeout if timeout is None else positive(timeout, "runner.run: timeout")
        events = self._run(this)
        this.run = weakref.ref(events)
        return events

    async def _run(self, this: _Run) -> AsyncGenerator[Event, None]:
        """The run's phases in order: the lease, start or resume, the agent's steps, finish or fail."""
        store = self.session_service
        hold(self._active, this)
        try:
            try:
                session = await store.acquire(this.key[0], this.key[1], this.owner, takeover=this.takeover)
            except SessionBusyError:
                raise
            except Exception as error:
                yield Event.from_error(this.invocation_id or new_id(), self.agent.name, error, where="store")
                return
            if self._begin(this, session) is None:
                return
            try:
                failure: Exception | None = None
                location = ""
                try:
                    first, opening = self._open(this)
                    if opening is not None:
                        await store.append_event(session, opening)
                        yield opening
                    invocation, ends = this.invocation, this.ends  # the invocation's session is `session`
                    driver, bare = self._driver(this, session, first)
                    try:  # current_invocation() is set around each step only (see _driver)
                        while not driver.over:
                            token = current_invocation_var.set(invocation)
                            try:
                                step = driver.batch()
                                batch = await (step if ends is None else run_bounded(step, *ends))
                            except Exception as error:
                                failure, location = error, self._located(error, bare)
                                break
                            finally:
                                current_invocation_var.reset(token)
                            for event in batch:
                                if not event.is_partial:
                                    _complete(invocation, event, bare)
                                    await store.append_event(session, event)
                                if invocation._observers:
                                    invocation._notify(event)
                                yield event
                    finally:  # a step left streaming: its agents below close now, their tool tasks cancelled
                        if driver.stream is not None:
                            await driver.aclose()
                    if failure is None:
                        if invocation.state._delta:  # state.has_delta, without a property call
                            yield await self._state_change(this)
                        yield await self._finish(this)
                        return
                except CallbackError as error:  # on_event refused the completion
                    failure, location = error, where(error) or ""
                except Exception as error:  # between the agents' steps, the runner only stores
                    failure, location = error, "store"
                yield await self._fail(this, failure, location)
            except BaseException as stopped:  # the consumer stopped iterating, or we were cancelled
                await _stopped(this, stopped)
                raise
        finally:
            await release(store, self._active, this)

    def _driver(self, this: _Run, session: Session, first: Event | None) -> tuple[Driver, BaseAgent | None]:
        """The driver of the agent that takes the run, and that agent if the runner drives its steps
        itself (`bare`: no run hooks, and the agent's class has no `run` of its own): the
        escalations and error locations that `run()` adds to its body's events are then added here
        (with agent hooks its `HookedSteps` have added them already).

        The runner sets `current_invocation()` around each of the driver's steps only: the
        consumer's context is not left pointing at the run, and runs interleaved in one task each
        see their own."""
        invocation, hooks, root = this.invocation, this.hooks, self.agent
        # without sub-agents, no transfer can have moved the conversation
        started = this.agent or (active_agent(root, session) if root.sub_agents else root)
        steps = started._runner_steps(invocation) if hooks is None else None
        if steps is not None:
            return Driver(steps), started
        run = started.run(invocation)
        return Driver(OneStep(run if hooks is None else hooks.events(run, first))), None

    def _located(self, error: Exception, bare: BaseAgent | None) -> str:
        """Where an agent's step failed: the innermost agent its error names, else the agent."""
        if bare is not None:
            locate(error, f"agent:{bare.name}")
        return where(error) or f"agent:{self.agent.name}"

    def _begin(self, this: _Run, session: Session) -> Invocation | None:
        """Start the run's invocation, or resume one: the paused one that its answers are for, or
        (no message) the session's last one if it was cut short; None when there is none to resume.

        `session` is the one whose lease the store gave the run: it is held (renewed while the run
        lasts), and the run's deadline starts now."""
        took(self.session_service, this, session)
        this.ends = None if this.timeout is None else deadline(this.timeout)
        message, invocation_id, answered = this.message, this.invocation_id, None
        if this.answers is not None:
            invocation_id, answered = answers_to_paused(session, *this.answers)
            message = user_message(session, invocation_id)
        elif message is None:
            found = unfinished(session)
            if found is None:
                return None
            invocation_id, message = found
        # runner_callbacks, run_callbacks, stream, retry_policy: by position (see Invocation.__init__)
        invocation = Invocation(
            invocation_id or new_id(),
            session,
            message,
            self.callbacks,
            this.callbacks,
            this.stream,
            self.retry_policy,
        )
        this.invocation = invocation
        if this.resuming:  # a stored invocation goes on
            invocation.resuming = set()
        if this.extras is not None:
            invocation.client_tools = this.extras[1]
        if answered:
            invocation.answers = answered
        # Run-level hooks (runner's and run's callbacks): None when there are none, and the run
        # pays nothing; else they wrap the agent's events (adk/callbacks/run.py).
        if this.callbacks.objects or self._hooked:
            this.hooks = RunHooks.of(self.callbacks + this.callbacks, invocation, self.agent)
        return invocation

    def _open(self, this: _Run) -> tuple[Event | None, Event | None]:
        """The invocation's opening: a new one's first event, the user's message (with the
        caller's state delta); or, before answers to a paused one, the caller's state change.

        Returns the first event (run hooks yield it themselves) and the event to store and yield now.
        """
        invocation = this.invocation
        inv_id = invocation.invocation_id
        state_delta = this.extras[0] if this.extras is not None else None
        if this.resuming:
            if not state_delta:
                return None, None
            return None, Event.state_update(inv_id, "user", state_delta)
        first = new_event(inv_id, "user")
        first.choices = [new_choice(invocation.message)]
        first.done = True
        if state_delta:
            first.actions.state_delta = state_delta
        return first, None if this.hooks is not None else first  # run hooks yield it themselves

    async def _state_change(self, this: _Run) -> Event:
        """The state the agents changed after their last event, on an event of its own, stored."""
        invocation = this.invocation
        event = Event.state_update(invocation.invocation_id, self.agent.name, invocation.state.take_delta())
        await self.session_service.append_event(invocation.session, event)
        if invocation._observers:
            invocation._notify(event)
        return event

    async def _finish(self, this: _Run) -> Event:
        """The invocation's last event, stored: it tells a later resume() it finished or awaits answers."""
        invocation = this.invocation
        inv_id, author = invocation.invocation_id, self.agent.name
        if invocation.waiting:
            done = new_event(inv_id, author, ObjectType.RUNNER_PAUSED)
            done.long_running_tool_ids = invocation.waiting
        else:
            done = new_event(inv_id, author, ObjectType.RUNNER_COMPLETION)
        done.done = True
        if this.hooks is not None:
            done = await this.hooks.on_event(done)
        await self.session_service.append_event(invocation.session, done)
        if invocation._observers:
            invocation._notify(done)
        invocation._end(None)
        return done

    async def _fail(self, this: _Run, failure: Exception, location: str) -> Event:
        """The error event that ends a failed run: stored if the store allows, yielded anyway."""
        invocation = this.invocation
        inv_id, state = invocation.invocation_id, invocation.state
        event = Event.from_error(inv_id, self.agent.name, failure, where=location, decisions=carried(failure))
        if state.has_delta:
            event.actions.state_delta = state.take_delta()
        if this.hooks is not None:
            event = await this.hooks.failed(event, failure)
        try:
            await self.session_service.append_event(invocation.session, event)
        except Exception:
            log.warning("could not store the error event of invocation %s", inv_id, exc_info=True)
        if invocation._observers:
            invocation._notify(event)
        invocation._end(failure)
        return event

    async def close(self) -> None:
        """Close what the agents' toolsets hold (MCP connections and server processes).

        A run still going is ended as by `end_invocation()`: its calls in flight finish (an MCP
        call with an error, its connection closed) and no model call follows, so nothing opens again.
        """
        for claim in self._active.values():
            if claim.invocation is not None:
                claim.invocation.end_invocation()
        agents = [self.agent]
        while agents:
            agent = agents.pop()
            agents.extend(agent.sub_agents)
            for toolset in getattr(agent, "toolsets", ()):
                await toolset.close()

    async def __aenter__(self) -> Runner:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @overload
    def run_sync(
        self,
        message: str | Message,
        /,
        *,
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        stream: bool = False,
        invocation_id: str | None = None,
        agent: str | None = None,
    ) -> list[Event]: ...

    @overload
    def run_sync(
        self,
        user_id: str,
        session_id: str,
        message: str | Message,
        /,
        *,
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        stream: bool = False,
        invocation_id: str | None = None,
        agent: str | None = None,
    ) -> list[Event]: ...

    def run_sync(
        self,
        *asked: str | Message,
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        stream: bool = False,
        invocation_id: str | None = None,
        agent: str | None = None,
    ) -> list[Event]:
        """Run to the end and return every event; for scripts (not from inside an event loop).

        `run_sync(message)` runs as user `"user"` in session `"default"` (a first script's);
        `run_sync(user_id, session_id, message)` names them.
        """
        user_id, session_id, message = script_args(asked)

        async def collect() -> list[Event]:
            events = self.run(
                user_id,
                session_id,
                message,
                callbacks=callbacks,
                stream=stream,
                invocation_id=invocation_id,
                agent=agent,
            )
            return [e async for e in events]

        return asyncio.run(collect())
