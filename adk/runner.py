"""`Runner`: runs an agent for one user message, streams its events and keeps the session."""

from __future__ import annotations

import asyncio
import logging
import math
import weakref
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from typing import Any, TypeAlias

from adk.agents.base import BaseAgent, OneStep, _carry_escalation
from adk.agents.resume import RESUMING
from adk.agents.transfer import active_agent
from adk.approvals import Answer, Approve, Reject, ToolResult, waiting_calls
from adk.callbacks.decisions import carried
from adk.callbacks.protocols import AnyCallback
from adk.callbacks.registry import Callbacks
from adk.callbacks.run import RunHooks
from adk.context import Invocation, _current_invocation
from adk.errors import ApprovalError, CallbackError, RunStopped, SessionBusyError, locate, where
from adk.events import Event, Message, ObjectType, ToolDeclaration, _choice, _event, new_id
from adk.recovery import RetryPolicy
from adk.sessions.base import Session, SessionService, busy
from adk.sessions.memory import InMemorySessionService, immediate

__all__ = ["Runner"]

log = logging.getLogger(__name__)

_NO_CALLBACKS = Callbacks((), {})
_DEFAULT_POLICY = RetryPolicy()
"""Shared by the runners given none (it is frozen and keeps no state), so that the callback it
becomes is resolved once per process (about 15 µs), not once per runner."""
_Extras: TypeAlias = "tuple[dict[str, Any] | None, tuple[ToolDeclaration, ...]]"
"""What a caller may bring to a run beside its message: a state delta, client tools."""
_ENDED = frozenset({ObjectType.RUNNER_COMPLETION, ObjectType.ERROR, ObjectType.RUNNER_PAUSED})
"""The objects of the event that ends an invocation: nothing after it is left to resume (a paused
one resumes only when its waiting calls are answered)."""


class _Claim:
    """A run's hold on its session: its lease owner token, and a weak reference to its iterator.

    An iterator the caller dropped (a plain `break`) frees the session at once for this runner,
    which takes its lease over, although asyncio closes the generator only later; so does a run
    that ended but could not release its lease (the store failing).
    """

    __slots__ = ("ended", "invocation", "owner", "run")

    def __init__(self) -> None:
        self.owner = new_id()
        self.ended = False
        self.invocation: Invocation | None = None
        """The run's invocation once it started: `Runner.close()` ends it."""

    run: weakref.ref[AsyncGenerator[Event, None]]


def _unfinished(session: Session) -> tuple[str, Message] | None:
    """The id and user message of the session's last invocation, if it was cut short."""
    last = session.events[-1] if session.events else None
    if last is None or last.object in _ENDED:
        return None
    return last.invocation_id, _user_message(session, last.invocation_id)


def _user_message(session: Session, invocation_id: str) -> Message:
    for event in session.events:
        if event.invocation_id == invocation_id and event.author == "user" and event.message:
            return event.message
    return Message.user("")


def _answers(
    session: Session, approvals: Mapping[str, Answer], results: Mapping[str, Any]
) -> tuple[str, dict[str, Answer]]:
    """The paused invocation of `session` and the answer to each of its waiting calls.

    Raises `ApprovalError`, naming the session and the calls, unless the answers cover exactly
    the calls that wait: approvals for those waiting for approval, results for pending ones.
    """
    where = f"session {session.id!r} of user {session.user_id!r}"
    last = session.events[-1] if session.events else None
    given = ", ".join(repr(i) for i in [*approvals, *results])
    if last is None or last.object != ObjectType.RUNNER_PAUSED:
        raise ApprovalError(f"{where} has no paused run: no call waits, so {given} cannot be answered")
    kinds = {i: kind for i, (kind, _) in waiting_calls(session).items()}
    waiting = ", ".join(repr(i) for i in kinds)
    answers: dict[str, Answer] = {}
    for ids, accepted, what in (
        (approvals, (ObjectType.APPROVAL_REQUEST,), "approval"),
        (results, (ObjectType.TOOL_PENDING, ObjectType.CLIENT_PENDING), "a result"),
    ):
        for call_id in ids:
            if kinds.get(call_id) not in accepted:
                raise ApprovalError(
                    f"call {call_id!r} is not waiting for {what} in {where} (waiting: {waiting})"
                )
    for call_id, answer in approvals.items():
        if not isinstance(answer, Approve | Reject):
            raise ApprovalError(
                f"approvals[{call_id!r}] for {where} must be Approve() or Reject(reason), "
                f"not {type(answer).__name__}"
            )
        answers[call_id] = answer
    answers.update((call_id, ToolResult(value)) for call_id, value in results.items())
    missing = [i for i in kinds if i not in answers]
    if missing:
        raise ApprovalError(
            f"{where} waits for answers to every paused call; missing: {', '.join(map(repr, missing))}"
        )
    return last.invocation_id, answers


async def _observe_stop(hooks: RunHooks, stopped: GeneratorExit | asyncio.CancelledError) -> None:
    """after_run for a run that did not end by itself; a failing hook is logged (nothing can be
    yielded any more)."""
    how = "its consumer stopped iterating" if type(stopped) is GeneratorExit else "its task was cancelled"
    error = RunStopped(f"the run was stopped: {how}")
    error.__cause__ = stopped
    try:
        await hooks.after_run(error)
    except Exception:
        log.warning("after_run failed after the run was stopped", exc_info=True)


class _StoreFailed(Exception):
    """A store call failed during a run; the run ends with an error event where="store"."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


async def _save(store: SessionService, session: Session, event: Event) -> None:
    try:
        await store.append_event(session, event)
    except Exception as error:
        raise _StoreFailed(error) from error


def _saved_now(now: InMemorySessionService | None, session: Session, event: Event) -> bool:
    """Store `event` at once if the store is in memory (`now`); False: `await _save(...)` it."""
    if now is None:
        return False
    try:
        now._append(session, event)
    except Exception as error:
        raise _StoreFailed(error) from error
    return True


class _Renewal:
    """Renews a run's lease every third of the store's `lease_ttl` while the run lasts."""

    __slots__ = ("_handle", "_session", "_store", "_task")

    def __init__(self, store: SessionService, session: Session) -> None:
        self._store = store
        self._session = session
        self._task: asyncio.Task[None] | None = None
        self._handle = asyncio.get_running_loop().call_later(store.lease_ttl / 3, self._due)

    def _due(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._renew())

    async def _renew(self) -> None:
        session = self._session
        try:
            await self._store.renew(session)
        except SessionBusyError:  # lost: the run's next append is refused, and ends it
            log.warning("the run on session %r of user %r lost its lease", session.id, session.user_id)
            return
        except Exception:
            log.warning("could not renew the lease of session %r; trying again", session.id, exc_info=True)
        self._handle = asyncio.get_running_loop().call_later(self._store.lease_ttl / 3, self._due)

    def cancel(self) -> None:
        self._handle.cancel()
        if self._task is not None:
            self._task.cancel()


class Runner:
    """Runs `agent` turn by turn on sessions kept by `session_service`.

    Callbacks given here run for every agent of every run, before the agent's own and the run's.
    The default store is in memory; pass a `SqliteSessionService` to survive restarts, or a
    `PostgresSessionService` for many worker processes.
    """

    def __init__(
        self,
        agent: BaseAgent,
        *,
        session_service: SessionService | None = None,
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        retry_policy: RetryPolicy | None = None,
    ) -> None:
        self.agent = agent
        self.session_service: SessionService = session_service or InMemorySessionService()
        self._immediate = (self.session_service, immediate(self.session_service))
        """The store and, if it is in memory, itself for calls without a coroutine (`immediate`)."""
        self.callbacks = Callbacks.of(callbacks)
        self.retry_policy = retry_policy or _DEFAULT_POLICY
        self._active: dict[tuple[str, str], _Claim] = {}
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

        `state_delta` is the caller's own change to session state, stored first. `client_tools`
        are tools the caller runs itself (a browser's): the model is offered them beside the
        agent's own, and a call to one waits, like a long-running tool's, for its result in
        `tool_results`.
        """
        answers = None
        if approvals is not None or tool_results is not None:
            if message is not None:
                raise ValueError("runner.run: give a message, or approvals / tool_results, not both")
            answers = (approvals or {}, tool_results or {})
        elif message is None:
            raise ValueError("runner.run: give a message, or approvals / tool_results to resume a paused run")
        elif isinstance(message, str):
            message = Message.user(message)
        start = None if agent is None else self.agent.find_agent(agent)
        if agent is not None and start is None:
            raise ValueError(f"run(agent={agent!r}): {self.agent.name!r} has no agent of that name")
        delta = dict(state_delta) if state_delta else None
        extras = (delta, tuple(client_tools)) if delta or client_tools else None
        return self._start(
            user_id, session_id, message, callbacks, stream, invocation_id, answers, start, extras
        )

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
        return self._start(user_id, session_id, None, callbacks, stream, None, None, None, None)

    def _start(
        self,
        user_id: str,
        session_id: str,
        message: Message | None,
        callbacks: Iterable[AnyCallback] | Callbacks,
        stream: bool,
        invocation_id: str | None,
        answers: tuple[Mapping[str, Answer], Mapping[str, Any]] | None,
        agent: BaseAgent | None,
        extras: _Extras | None,
    ) -> AsyncGenerator[Event, None]:
        # registration errors surface here, before anything runs
        run_callbacks = Callbacks.of(callbacks) if callbacks else _NO_CALLBACKS
        claim = _Claim()
        key = (user_id, session_id)
        events = self._run(claim, key, message, run_callbacks, stream, invocation_id, answers, agent, extras)
        claim.run = weakref.ref(events)
        return events

    async def _run(
        self,
        claim: _Claim,
        key: tuple[str, str],
        message: Message | None,
        callbacks: Callbacks,
        stream: bool,
        invocation_id: str | None,
        answers: tuple[Mapping[str, Answer], Mapping[str, Any]] | None,
        agent: BaseAgent | None,
        extras: _Extras | None,
    ) -> AsyncGenerator[Event, None]:
        """The run: take the session's lease, run the agent (or resume, with no `message`), release."""
        active = self._active.get(key)
        if active is not None and not active.ended and active.run() is not None:
            raise busy(*key)
        self._active[key] = claim
        store = self.session_service
        known, now = self._immediate  # the in-memory store: called without a coroutine per call
        if known is not store:  # the attribute was set since
            now = immediate(store)
            self._immediate = (store, now)
        author = self.agent.name
        session: Session | None = None
        renewal: _Renewal | None = None
        try:
            try:
                takeover = active.owner if active is not None else None
                if now is not None:
                    session = now._acquire(*key, claim.owner, takeover)
                else:
                    session = await store.acquire(*key, claim.owner, takeover=takeover)
            except SessionBusyError:
                raise
            except Exception as error:
                yield Event.from_error(invocation_id or new_id(), author, error, where="store")
                return
            answered: dict[str, Answer] = {}
            if answers is not None:
                invocation_id, answered = _answers(session, *answers)
                message = _user_message(session, invocation_id)
                RESUMING[invocation_id] = set()
            elif message is None:
                found = _unfinished(session)
                if found is None:
                    return
                invocation_id, message = found
                RESUMING[invocation_id] = set()
            if math.isfinite(store.lease_ttl):
                renewal = _Renewal(store, session)
            invocation = Invocation(
                invocation_id or new_id(),
                session,
                message,
                runner_callbacks=self.callbacks,
                run_callbacks=callbacks,
                stream=stream,
                retry_policy=self.retry_policy,
            )
            claim.invocation = invocation
            state_delta = None
            if extras is not None:
                state_delta, invocation.client_tools = extras
            if answered:
                invocation.answers = answered
            inv_id = invocation.invocation_id
            state = invocation.state
            held = session
            # Run-level hooks (runner's and run's callbacks): None when there are none, and the run
            # pays nothing; else they wrap the agent's events (adk/callbacks/run.py).
            hooks = (
                RunHooks.of(self.callbacks + callbacks, invocation, self.agent)
                if callbacks.objects or self._hooked
                else None
            )

            try:
                failure: Exception | None = None
                location = ""
                try:
                    first = None
                    if inv_id not in RESUMING:
                        first = _event(inv_id, "user")
                        first.choices = [_choice(message)]
                        first.done = True
                        if state_delta:
                            first.actions.state_delta = state_delta
                    elif state_delta:  # answers resume a paused run: the caller's change goes first
                        change = Event.state_update(inv_id, "user", state_delta)
                        if not _saved_now(now, held, change):
                            await _save(store, held, change)
                        yield change
                    if first is not None and hooks is None:  # else the hooks yield it
                        if not _saved_now(now, held, first):
                            await _save(store, held, first)
                        yield first

                    root = self.agent  # without sub-agents, no transfer can have moved the conversation
                    started = agent or (active_agent(root, session) if root.sub_agents else root)
                    # With no run hooks, an agent with no agent hooks is run here step by step (a
                    # step that needs no generator has none); the escalations and error locations
                    # that its run() would add are added here.
                    steps = started._bare_steps(invocation) if hooks is None else None
                    bare = steps is not None
                    if steps is None:
                        run = started.run(invocation)
                        steps = OneStep(run if hooks is None else hooks.events(run, first))
                    events: AsyncGenerator[Event, None] | None = None
                    """A step that streams, being iterated (the agent's run, when not bare)."""
                    # current_invocation() is set around each step of the agent only: the consumer's
                    # context is not left pointing at this run, and runs interleaved in one task each
                    # see their own.
                    try:
                        while events is not None or not steps.over:
                            token = _current_invocation.set(invocation)
                            try:
                                if events is None:
                                    step = await steps.next()
                                    if not isinstance(step, list):
                                        events = step
                                        continue
                                    batch: Sequence[Event] = step
                                else:
                                    batch = (await anext(events),)
                            except StopAsyncIteration:  # a step's generator ended
                                events = None
                                continue
                            except Exception as error:
                                if bare:
                                    locate(error, f"agent:{started.name}")
                                failure, location = error, where(error) or f"agent:{author}"
                                break
                            finally:
                                _current_invocation.reset(token)
                            for event in batch:
                                if not event.is_partial:
                                    if bare and invocation.escalated:
                                        _carry_escalation(invocation, event)
                                    if state._delta:  # state.has_delta, without a property call per event
                                        event.actions.state_delta.update(state.take_delta())
                                    if not _saved_now(now, held, event):
                                        await _save(store, held, event)
                                if invocation._observers:
                                    invocation._notify(event)
                                yield event
                    finally:
                        if events is not None:  # closes every agent below now, cancelling their tool tasks
                            await events.aclose()

                    if failure is None:
                        if state._delta:
                            event = Event.state_update(inv_id, author, state.take_delta())
                            if not _saved_now(now, held, event):
                                await _save(store, held, event)
                            if invocation._observers:
                                invocation._notify(event)
                            yield event
                        # Stored too: it tells a later resume() that this invocation is finished, or
                        # paused with calls waiting for answers.
                        if invocation.waiting:
                            done = _event(inv_id, author, ObjectType.RUNNER_PAUSED)
                            done.long_running_tool_ids = invocation.waiting
                        else:
                            done = _event(inv_id, author, ObjectType.RUNNER_COMPLETION)
                        done.done = True
                        if hooks is not None:
                            done = await hooks.on_event(done)
                        if not _saved_now(now, held, done):
                            await _save(store, held, done)
                        if invocation._observers:
                            invocation._notify(done)
                        invocation._end(None)
                        yield done
                        return
                except _StoreFailed as failed:
                    failure, location = failed.error, "store"
                except CallbackError as error:  # on_event refused the completion
                    failure, location = error, where(error) or ""
                event = Event.from_error(inv_id, author, failure, where=location, decisions=carried(failure))
                if state.has_delta:
                    event.actions.state_delta = state.take_delta()
                if hooks is not None:
                    event = await hooks.failed(event, failure)
                try:
                    await store.append_event(session, event)
                except Exception:
                    log.warning("could not store the error event of invocation %s", inv_id, exc_info=True)
                if invocation._observers:
                    invocation._notify(event)
                invocation._end(failure)
                yield event
            except BaseException as stopped:  # the consumer stopped iterating, or we were cancelled
                if hooks is not None and isinstance(stopped, GeneratorExit | asyncio.CancelledError):
                    await _observe_stop(hooks, stopped)  # does nothing once after_run has run
                invocation._end(stopped)  # does nothing once the run has ended
                raise
            finally:
                RESUMING.pop(inv_id, None)
        finally:
            released = False
            if session is not None:
                if renewal is not None:
                    renewal.cancel()
                claim.ended = True
                try:
                    if now is not None:
                        now._release(session)
                    else:
                        await store.release(session)
                    released = True
                except Exception:
                    log.warning("could not release the lease of session %r", key[1], exc_info=True)
            # A lease not released stays claimed here, so that this runner's next run takes it over.
            if self._active.get(key) is claim and (released or not claim.ended):
                del self._active[key]

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

    def run_sync(
        self,
        user_id: str,
        session_id: str,
        message: str | Message,
        *,
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        stream: bool = False,
        invocation_id: str | None = None,
        agent: str | None = None,
    ) -> list[Event]:
        """Run to the end and return every event; for scripts (not from inside an event loop)."""

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
