"""`Runner`: runs an agent for one user message, streams its events and keeps the session."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from typing import Any

from adk.agents.base import BaseAgent
from adk.callbacks.protocols import AnyCallback
from adk.callbacks.registry import Callbacks
from adk.context import Invocation, _current_invocation
from adk.errors import SessionBusyError, where
from adk.events import Choice, Event, Message, ObjectType, ToolDeclaration, new_id
from adk.recovery import RetryPolicy
from adk.sessions.base import Session, SessionService
from adk.sessions.memory import InMemorySessionService

__all__ = ["Runner"]

_NO_CALLBACKS = Callbacks((), {})


class _Claim:
    """A run's hold on its session, through a weak reference to the run's iterator.

    An iterator the caller dropped (a plain `break`) frees the session at once, although asyncio
    closes the generator only later.
    """

    __slots__ = ("run",)
    run: weakref.ref[AsyncGenerator[Event, None]]


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
        self._active: dict[tuple[str, str], _Claim] = {}

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
        ones are only yielded. An error that ends the run is yielded (and stored) as a final
        `error` event rather than raised. Stop iterating at any time: the run stops, pending tool
        calls are cancelled, and what was stored stays. Iterating a run on a session whose run is
        still going (its iterator neither exhausted, closed nor dropped) raises `SessionBusyError`.

        `state_delta` is the caller's own change to session state, stored with the message.
        `client_tools` are tools the caller runs itself: the model is offered them, and a call to
        one ends the run with the call waiting (its id in the response event's
        `long_running_tool_ids`, listed by `waiting_tool_calls`). The next run answers every
        waiting call: its `message` is their results, `Message(role="tool", ...)` each.
        """
        # registration errors surface here, before anything runs
        run_callbacks = Callbacks.of(callbacks) if callbacks else _NO_CALLBACKS
        if isinstance(message, str):
            message = Message.user(message)
        messages = [message] if isinstance(message, Message) else list(message)
        claim = _Claim()
        events = self._run(
            claim,
            (user_id, session_id),
            messages,
            run_callbacks,
            stream,
            invocation_id,
            dict(state_delta) if state_delta else {},
            tuple(client_tools),
        )
        claim.run = weakref.ref(events)
        return events

    async def waiting_tool_calls(self, user_id: str, session_id: str) -> dict[str, str]:
        """The client tool calls the session's last run left waiting for results: id -> tool name."""
        session = await self.session_service.get(user_id, session_id)
        return {} if session is None else _waiting(session)

    async def _run(
        self,
        claim: _Claim,
        key: tuple[str, str],
        messages: list[Message],
        callbacks: Callbacks,
        stream: bool,
        invocation_id: str | None,
        state_delta: dict[str, Any],
        client_tools: tuple[ToolDeclaration, ...],
    ) -> AsyncGenerator[Event, None]:
        active = self._active.get(key)
        if active is not None and active.run() is not None:
            raise SessionBusyError(f"session {key[1]!r} of user {key[0]!r} is already running")
        self._active[key] = claim
        try:
            store = self.session_service
            session = await store.get_or_create(*key)
            messages = _checked(messages, session)
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
            try:
                inv_id = invocation.invocation_id
                first = Event.new(
                    inv_id,
                    "user",
                    choices=[Choice(index=i, message=m) for i, m in enumerate(messages)],
                    done=True,
                )
                if state_delta:
                    first.actions.state_delta = state_delta
                await store.append_event(session, first)
                yield first

                failure: Exception | None = None
                state = invocation.state
                # current_invocation() is set around each step of the agent only: the consumer's
                # context is not left pointing at this run, and runs interleaved in one task each
                # see their own.
                events = self.agent.run(invocation)
                try:
                    while True:
                        token = _current_invocation.set(invocation)
                        try:
                            event = await anext(events)
                        except StopAsyncIteration:
                            break
                        except Exception as error:
                            failure = error
                            break
                        finally:
                            _current_invocation.reset(token)
                        if not event.is_partial:
                            if state.has_delta:
                                event.actions.state_delta.update(state.take_delta())
                            await store.append_event(session, event)
                        yield event
                finally:
                    await events.aclose()  # closes every agent below now, cancelling their tool tasks

                author = self.agent.name
                if failure is not None:
                    location = where(failure) or f"agent:{author}"
                    event = Event.from_error(inv_id, author, failure, where=location)
                    if state.has_delta:
                        event.actions.state_delta = state.take_delta()
                    await store.append_event(session, event)
                    invocation._end(failure)
                    yield event
                    return
                if state.has_delta:
                    event = Event.state_update(inv_id, author, state.take_delta())
                    await store.append_event(session, event)
                    yield event
                invocation._end(None)
                yield Event.new(inv_id, author, object=ObjectType.RUNNER_COMPLETION, done=True)
            except BaseException as stopped:  # the consumer stopped iterating, or we were cancelled
                invocation._end(stopped)  # does nothing once the run has ended
                raise
        finally:
            if self._active.get(key) is claim:
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
    """The run's input: one user message, or a result for every client tool call waiting (named)."""
    if not messages:
        raise ValueError("a run needs a message, or the results of the client tool calls waiting")
    if len(messages) == 1 and messages[0].role != "tool":
        return messages
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
