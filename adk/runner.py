"""`Runner`: runs an agent for one user message, streams its events and keeps the session."""

from __future__ import annotations

import asyncio
import logging
import math
import weakref
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from typing import Any

from adk.agents.base import BaseAgent
from adk.agents.resume import RESUMING
from adk.callbacks.decisions import carried
from adk.callbacks.protocols import AnyCallback
from adk.callbacks.registry import Callbacks
from adk.callbacks.run import RunHooks
from adk.context import Invocation, _current_invocation
from adk.errors import CallbackError, SessionBusyError, where
from adk.events import Choice, Event, Message, ObjectType, ToolDeclaration, new_id
from adk.recovery import RetryPolicy
from adk.sessions.base import Session, SessionService, busy
from adk.sessions.memory import InMemorySessionService

__all__ = ["Runner"]

log = logging.getLogger(__name__)

_NO_CALLBACKS = Callbacks((), {})
_ENDED = frozenset({ObjectType.RUNNER_COMPLETION, ObjectType.ERROR})
"""The objects of the event that ends an invocation: nothing after it is left to resume."""


class _Claim:
    """A run's hold on its session: its lease owner token, and a weak reference to its iterator.

    An iterator the caller dropped (a plain `break`) frees the session at once for this runner,
    which takes its lease over, although asyncio closes the generator only later; so does a run
    that ended but could not release its lease (the store failing).
    """

    __slots__ = ("ended", "owner", "run")

    def __init__(self) -> None:
        self.owner = new_id()
        self.ended = False

    run: weakref.ref[AsyncGenerator[Event, None]]


def _unfinished(session: Session) -> tuple[str, Message] | None:
    """The id and user message of the session's last invocation, if it was cut short."""
    last = session.events[-1] if session.events else None
    if last is None or last.object in _ENDED:
        return None
    invocation_id = last.invocation_id
    for event in session.events:
        if event.invocation_id == invocation_id and event.author == "user" and event.message:
            return invocation_id, event.message
    return invocation_id, Message.user("")


class _StoreFailed(Exception):
    """A store call failed during a run; the run ends with an error event where="store"."""

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


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
        self.callbacks = Callbacks.of(callbacks)
        self.retry_policy = retry_policy or RetryPolicy()
        self._active: dict[tuple[str, str], _Claim] = {}
        self._hooked = RunHooks.found(self.callbacks)

    def run(
        self,
        user_id: str,
        session_id: str,
        message: str | Message | Sequence[Message],
        *,
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        stream: bool = False,
        invocation_id: str | None = None,
        state_delta: Mapping[str, Any] | None = None,
        client_tools: Sequence[ToolDeclaration] = (),
    ) -> AsyncGenerator[Event, None]:
        """Run the agent on `message`, yielding every event as it happens.

        Complete events are stored in the session before they are yielded; partial (streamed)
        ones are only yielded. An error that ends the run, a store failure included, is yielded
        (and stored if the store allows) as a final `error` event rather than raised. Stop
        iterating at any time: the run stops, pending tool calls are cancelled, and what was
        stored stays. Iterating a run on a session that another run holds (its iterator neither
        exhausted, closed nor dropped, in this process or another sharing the store) raises
        `SessionBusyError`.

        `state_delta` is the caller's own change to session state, stored with the message.
        `client_tools` are tools the caller runs itself: the model is offered them, and a call to
        one ends the run with the call waiting (its id in the response event's
        `long_running_tool_ids`, listed by `waiting_tool_calls`). The next run answers every
        waiting call: its `message` is their results, `Message(role="tool", ...)` each.
        """
        if isinstance(message, str):
            message = Message.user(message)
        messages = [message] if isinstance(message, Message) else list(message)
        return self._start(
            user_id,
            session_id,
            messages,
            callbacks,
            stream,
            invocation_id,
            dict(state_delta) if state_delta else None,
            tuple(client_tools),
        )

    async def waiting_tool_calls(self, user_id: str, session_id: str) -> dict[str, str]:
        """The client tool calls the session's last run left waiting for results: id -> tool name."""
        session = await self.session_service.get(user_id, session_id)
        return {} if session is None else _waiting(session)

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
        return self._start(user_id, session_id, None, callbacks, stream, None, None, ())

    def _start(
        self,
        user_id: str,
        session_id: str,
        messages: list[Message] | None,
        callbacks: Iterable[AnyCallback] | Callbacks,
        stream: bool,
        invocation_id: str | None,
        state_delta: dict[str, Any] | None,
        client_tools: tuple[ToolDeclaration, ...],
    ) -> AsyncGenerator[Event, None]:
        # registration errors surface here, before anything runs
        run_callbacks = Callbacks.of(callbacks) if callbacks else _NO_CALLBACKS
        claim = _Claim()
        events = self._run(
            claim,
            (user_id, session_id),
            messages,
            run_callbacks,
            stream,
            invocation_id,
            state_delta,
            client_tools,
        )
        claim.run = weakref.ref(events)
        return events

    async def _run(
        self,
        claim: _Claim,
        key: tuple[str, str],
        messages: list[Message] | None,
        callbacks: Callbacks,
        stream: bool,
        invocation_id: str | None,
        state_delta: dict[str, Any] | None,
        client_tools: tuple[ToolDeclaration, ...],
    ) -> AsyncGenerator[Event, None]:
        """The run: take the session's lease, run the agent (or resume, with no `messages`), release."""
        active = self._active.get(key)
        if active is not None and not active.ended and active.run() is not None:
            raise busy(*key)
        self._active[key] = claim
        store = self.session_service
        author = self.agent.name
        session: Session | None = None
        renewal: _Renewal | None = None
        try:
            try:
                takeover = active.owner if active is not None else None
                session = await store.acquire(*key, claim.owner, takeover=takeover)
            except SessionBusyError:
                raise
            except Exception as error:
                yield Event.from_error(invocation_id or new_id(), author, error, where="store")
                return
            if messages is None:
                found = _unfinished(session)
                if found is None:
                    return
                invocation_id, message = found
                messages = [message]
                RESUMING[invocation_id] = set()
            else:
                if len(messages) != 1 or messages[0].role == "tool":
                    messages = _checked(messages, session)
            if math.isfinite(store.lease_ttl):
                renewal = _Renewal(store, session)
            invocation = Invocation(
                invocation_id or new_id(),
                session,
                messages[0],
                runner_callbacks=self.callbacks,
                run_callbacks=callbacks,
                stream=stream,
                retry_policy=self.retry_policy,
                client_tools=client_tools,
            )
            inv_id = invocation.invocation_id
            state = invocation.state
            held = session
            # Run-level hooks (runner's and run's callbacks): None when there are none, and the run
            # pays nothing; else they wrap the agent's events (adk/callbacks/run.py).
            hooks = (
                RunHooks.of(self.callbacks + callbacks, invocation, self.agent)
                if callbacks or self._hooked
                else None
            )

            async def save(event: Event) -> None:
                try:
                    await store.append_event(held, event)
                except Exception as error:
                    raise _StoreFailed(error) from error

            try:
                failure: Exception | None = None
                location = ""
                try:
                    first = None
                    if inv_id not in RESUMING:
                        first = Event.new(
                            inv_id,
                            "user",
                            choices=[Choice(message=messages[0])]
                            if len(messages) == 1
                            else [Choice(index=i, message=m) for i, m in enumerate(messages)],
                            done=True,
                        )
                        if state_delta:
                            first.actions.state_delta = state_delta
                    if first is not None and hooks is None:  # else the hooks yield it
                        await save(first)
                        yield first

                    # current_invocation() is set around each step of the agent only: the consumer's
                    # context is not left pointing at this run, and runs interleaved in one task each
                    # see their own.
                    events = self.agent.run(invocation)
                    if hooks is not None:
                        events = hooks.events(events, first)
                    try:
                        while True:
                            token = _current_invocation.set(invocation)
                            try:
                                event = await anext(events)
                            except StopAsyncIteration:
                                break
                            except Exception as error:
                                failure, location = error, where(error) or f"agent:{author}"
                                break
                            finally:
                                _current_invocation.reset(token)
                            if not event.is_partial:
                                if state.has_delta:
                                    event.actions.state_delta.update(state.take_delta())
                                await save(event)
                            if invocation._observers:
                                invocation._notify(event)
                            yield event
                    finally:
                        await events.aclose()  # closes every agent below now, cancelling their tool tasks

                    if failure is None:
                        if state.has_delta:
                            event = Event.state_update(inv_id, author, state.take_delta())
                            await save(event)
                            if invocation._observers:
                                invocation._notify(event)
                            yield event
                        # Stored too: it tells a later resume() that this invocation is finished.
                        done = Event.new(inv_id, author, object=ObjectType.RUNNER_COMPLETION, done=True)
                        if hooks is not None:
                            done = await hooks.on_event(done)
                        await save(done)
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
                    await store.release(session)
                    released = True
                except Exception:
                    log.warning("could not release the lease of session %r", key[1], exc_info=True)
            # A lease not released stays claimed here, so that this runner's next run takes it over.
            if self._active.get(key) is claim and (released or not claim.ended):
                del self._active[key]

    def run_sync(
        self,
        user_id: str,
        session_id: str,
        message: str | Message | Sequence[Message],
        *,
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        stream: bool = False,
        invocation_id: str | None = None,
    ) -> list[Event]:
        """Run to the end and return every event; for scripts (not from inside an event loop)."""

        async def collect() -> list[Event]:
            events = self.run(
                user_id, session_id, message, callbacks=callbacks, stream=stream, invocation_id=invocation_id
            )
            return [e async for e in events]

        return asyncio.run(collect())


def _waiting(session: Session) -> dict[str, str]:
    """The client tool calls left without a result since the session's last user message."""
    waiting: dict[str, str] = {}
    for event in session.events:
        for choice in event.choices:
            message = choice.message
            if message is None:
                continue
            if message.role == "user":
                waiting.clear()  # a new message leaves earlier calls unanswered for good
            elif message.role == "tool":
                waiting.pop(message.tool_call_id or "", None)
            elif event.long_running_tool_ids:
                deferred = event.long_running_tool_ids
                waiting.update((c.id, c.function.name) for c in message.tool_calls if c.id in deferred)
    return waiting


def _checked(messages: list[Message], session: Session) -> list[Message]:
    """Tool results (or several messages) as a run's input: a result for every client tool call
    waiting, each named after its call's tool."""
    if not messages:
        raise ValueError("a run needs a message, or the results of the client tool calls waiting")
    waiting = _waiting(session)
    named: list[Message] = []
    for i, message in enumerate(messages):
        call = message.tool_call_id or ""
        if message.role != "tool" or call not in waiting:
            what = f"a {message.role} message" if message.role != "tool" else f"a result for call {call!r}"
            raise ValueError(
                f"message {i}: {what}, but a run's input is one message or the results of the client "
                f"tool calls waiting in session {session.id!r} ({', '.join(waiting) or 'none'})"
            )
        named.append(message.model_copy(update={"name": waiting.pop(call)}))
    if waiting:
        raise ValueError(f"no result given for the client tool call(s) waiting: {', '.join(waiting)}")
    return named
