"""`Runner`: runs an agent for one user message, streams its events and keeps the session."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncGenerator, Iterable
from contextlib import aclosing

from adk.agents.base import BaseAgent
from adk.callbacks.protocols import AnyCallback
from adk.callbacks.registry import Callbacks
from adk.context import Invocation, _current_invocation
from adk.errors import SessionBusyError, where
from adk.events import Choice, Event, Message, ObjectType, new_id
from adk.recovery import RetryPolicy
from adk.sessions.base import SessionService
from adk.sessions.memory import InMemorySessionService

__all__ = ["Runner"]


class Runner:
    """Runs `agent` turn by turn on sessions kept by `session_service`.

    Callbacks given here run for every agent of every run, before the agent's own and the run's.
    The default store is in memory; pass a `SqliteSessionService` to survive restarts.
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
        self._active: dict[tuple[str, str], tuple[object, weakref.ref[AsyncGenerator[Event, None]]]] = {}

    def run(
        self,
        user_id: str,
        session_id: str,
        message: str | Message,
        *,
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        stream: bool = False,
        invocation_id: str | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Run the agent on `message`, yielding every event as it happens.

        Complete events are stored in the session before they are yielded; partial (streamed)
        ones are only yielded. An error that ends the run is yielded (and stored) as a final
        `error` event rather than raised. Stop iterating at any time: the run stops, pending tool
        calls are cancelled, and what was stored stays. Starting a run on a session whose run is
        still going (its iterator not exhausted, closed or dropped) raises `SessionBusyError`.
        """
        key = (user_id, session_id)
        running = self._active.get(key)
        if running is not None and running[1]() is not None:
            raise SessionBusyError(f"session {session_id!r} of user {user_id!r} is already running")
        run_callbacks = Callbacks.of(callbacks)  # registration errors surface before anything runs
        claim = object()
        events = self._run(claim, key, message, run_callbacks, stream, invocation_id)
        # A weak reference: an iterator the caller dropped (a plain `break`) frees the session at
        # once, although asyncio closes the generator only later.
        self._active[key] = (claim, weakref.ref(events))
        return events

    async def _run(
        self,
        claim: object,
        key: tuple[str, str],
        message: str | Message,
        callbacks: Callbacks,
        stream: bool,
        invocation_id: str | None,
    ) -> AsyncGenerator[Event, None]:
        try:
            session = await self.session_service.get_or_create(*key)
            if isinstance(message, str):
                message = Message.user(message)
            invocation = Invocation(
                invocation_id or new_id(),
                session,
                message,
                runner_callbacks=self.callbacks,
                run_callbacks=callbacks,
                stream=stream,
                retry_policy=self.retry_policy,
            )
            # current_invocation() is set around each step only: the consumer's context is not
            # left pointing at this run, and runs interleaved in one task each see their own.
            events = self._events(invocation)
            try:
                while True:
                    token = _current_invocation.set(invocation)
                    try:
                        event = await anext(events)
                    except StopAsyncIteration:
                        return
                    finally:
                        _current_invocation.reset(token)
                    yield event
            finally:
                await events.aclose()
        finally:
            if self._active.get(key, (None,))[0] is claim:
                del self._active[key]

    async def _events(self, invocation: Invocation) -> AsyncGenerator[Event, None]:
        store = self.session_service
        session = invocation.session
        first = Event.new(
            invocation.invocation_id, "user", choices=[Choice(message=invocation.message)], done=True
        )
        await store.append_event(session, first)
        yield first
        try:
            async with aclosing(self.agent.run(invocation)) as events:
                async for event in events:
                    if not event.is_partial:
                        if invocation.state.has_delta:
                            event.actions.state_delta.update(invocation.state.take_delta())
                        await store.append_event(session, event)
                    yield event
        except Exception as error:
            failure = Event.from_error(
                invocation.invocation_id,
                self.agent.name,
                error,
                where=where(error) or f"agent:{self.agent.name}",
            )
            if invocation.state.has_delta:
                failure.actions.state_delta = invocation.state.take_delta()
            await store.append_event(session, failure)
            yield failure
            return
        if invocation.state.has_delta:
            update = Event.new(invocation.invocation_id, self.agent.name, object=ObjectType.STATE_UPDATE)
            update.actions.state_delta = invocation.state.take_delta()
            await store.append_event(session, update)
            yield update
        yield Event.new(
            invocation.invocation_id, self.agent.name, object=ObjectType.RUNNER_COMPLETION, done=True
        )

    def run_sync(
        self,
        user_id: str,
        session_id: str,
        message: str | Message,
        *,
        callbacks: Iterable[AnyCallback] | Callbacks = (),
        stream: bool = False,
    ) -> list[Event]:
        """Run to the end and return every event; for scripts (not from inside an event loop)."""

        async def collect() -> list[Event]:
            return [
                e async for e in self.run(user_id, session_id, message, callbacks=callbacks, stream=stream)
            ]

        return asyncio.run(collect())
