"""The run-level hooks, declared here and run by the runner around each run (docs/runtime.md).

`on_user_message` → the user event → `before_run` → the root agent (or the answer of a `Halt`)
→ `after_run` → the runner's completion; `on_event` sees every event, partial ones too, before
it is stored and yielded. Only the runner's and the run's callbacks take part: an agent may run
under many runners or as a sub-agent, so an agent's callback that implements a run-level hook is
refused when the agent is built (`refuse_on_agent`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncGenerator
from contextlib import aclosing
from types import NoneType
from typing import TYPE_CHECKING

from adk.callbacks.chain import run_chain
from adk.callbacks.decisions import Decision, Halted, Replaced
from adk.callbacks.registry import (
    AFTER,
    BEFORE,
    REPLACE,
    Callbacks,
    Hook,
    HookImpl,
    callback_name,
    decided_by,
    declare_hooks,
)
from adk.callbacks.results import Halt
from adk.context import Invocation, RunContext
from adk.errors import CallbackError, CallbackRegistrationError, RunStopped, where
from adk.events import Choice, Event, Message

if TYPE_CHECKING:
    from adk.agents.base import BaseAgent

__all__ = [
    "AFTER_RUN",
    "BEFORE_RUN",
    "ON_EVENT",
    "ON_USER_MESSAGE",
    "RUN_HOOKS",
    "RunHooks",
    "refuse_on_agent",
]

log = logging.getLogger(__name__)

ON_USER_MESSAGE, BEFORE_RUN, ON_EVENT, AFTER_RUN = RUN_HOOKS = declare_hooks(
    Hook(
        "on_user_message", AFTER, Message, "a Message (or a Halt)", halt=((Message, str), "a Message or str")
    ),
    Hook("before_run", BEFORE, (Message, str), "a Message or str"),
    Hook("on_event", AFTER, Event, "an Event"),
    Hook("after_run", REPLACE, NoneType, "None", unary=True),
)


def refuse_on_agent(agent: str, callbacks: Callbacks) -> None:
    """Refuse an agent's callbacks that implement a run-level hook: they would never fire."""
    for hook in RUN_HOOKS:
        for _, _, owner in callbacks.get(hook):
            raise CallbackRegistrationError(
                f"callback {callback_name(owner)} of agent {agent!r} implements {hook.name}, a run-level "
                "hook: register it with Runner(callbacks=...) or runner.run(..., callbacks=...)"
            )


class RunHooks:
    """The run-level hooks of one run, with its `RunContext`. Built only when one is registered."""

    __slots__ = ("_after", "_after_ran", "_before", "_event", "_target", "_user", "ctx")

    def __init__(self, ctx: RunContext, hooks: tuple[tuple[HookImpl, ...], ...]) -> None:
        self.ctx = ctx
        self._user, self._before, self._event, self._after = hooks
        self._after_ran = False
        self._target = f"run:{ctx.agent.name}"

    @classmethod
    def of(cls, callbacks: Callbacks, invocation: Invocation, agent: BaseAgent) -> RunHooks | None:
        """The run-level hooks in `callbacks` for a run of `agent`, or None when there are none."""
        hooks = tuple(callbacks.get(hook) for hook in RUN_HOOKS)
        return cls(RunContext(invocation, agent), hooks) if any(hooks) else None

    @staticmethod
    def found(callbacks: Callbacks) -> bool:
        """Whether `callbacks` implement a run-level hook."""
        return any(callbacks.get(hook) for hook in RUN_HOOKS)

    async def events(
        self, agent_events: AsyncGenerator[Event, None], first: Event | None
    ) -> AsyncGenerator[Event, None]:
        """The run's events up to the agent's last: the user event `first` (None when resuming),
        then the agent's or a halt's answer, then after_run and its state changes; each through
        on_event."""
        ctx = self.ctx
        invocation = ctx.invocation
        answer: Event | None = None
        async with aclosing(agent_events):
            if first is not None:
                decisions: tuple[Decision, ...] = ()
                if self._user:
                    by: list[object] = []
                    out = await run_chain(self._user, ON_USER_MESSAGE, invocation.message, ctx, deciders=by)
                    if type(out) is Halt:
                        answer = self._answer(out.value, decided_by(by[0], "on_user_message"))
                    else:
                        invocation.message = out
                        decisions = tuple(
                            Replaced(decided_by(o, "on_user_message"), self._target) for o in by
                        )
                if decisions:  # the message was replaced: the event carries the new one
                    first.choices = [Choice(message=invocation.message), *first.choices[1:]]
                first.decisions = decisions
                yield await self.on_event(first)
            if answer is None and self._before:
                by = []
                started = await run_chain(self._before, BEFORE_RUN, ctx, deciders=by)
                if type(started) is Halt:
                    answer = self._answer(started.value, decided_by(by[0], "before_run"))
            if answer is None:
                async for event in agent_events:
                    yield await self.on_event(event)
            else:
                invocation.end_invocation()
                yield await self.on_event(answer)
        await self.after_run(None)
        if invocation.state.has_delta:
            delta = invocation.state.take_delta()
            yield await self.on_event(Event.state_update(ctx.invocation_id, ctx.agent.name, delta))

    def _answer(self, content: Message | str, by: str) -> Event:
        message = Message.assistant(content) if isinstance(content, str) else content
        choice = Choice(message=message, finish_reason="stop")
        event = Event.new(self.ctx.invocation_id, self.ctx.agent.name, choices=[choice], done=True)
        event.decisions = (Halted(by, self._target),)
        return event

    async def on_event(self, event: Event) -> Event:
        """`event` with the pending state changes (if complete), through the on_event chain."""
        state = self.ctx.state
        if not event.is_partial and state.has_delta:
            event.actions.state_delta.update(state.take_delta())
        if not self._event:
            return event
        by: list[object] = []
        out: Event = await run_chain(self._event, ON_EVENT, event, self.ctx, deciders=by)
        if by:
            out.decisions += tuple(Replaced(decided_by(o, "on_event"), self._target) for o in by)
        return out

    async def after_run(self, error: Exception | None) -> None:
        """Run after_run once, with the error that ended the run (None: it completed)."""
        if self._after and not self._after_ran:
            self._after_ran = True
            ctx = self.ctx if error is None else dataclasses.replace(self.ctx, error=error)
            await run_chain(self._after, AFTER_RUN, ctx)

    async def stopped(self, stopped: GeneratorExit | asyncio.CancelledError) -> None:
        """after_run for a run that did not end by itself; a failing hook is logged (nothing can
        be yielded any more)."""
        how = "its consumer stopped iterating" if type(stopped) is GeneratorExit else "its task was cancelled"
        error = RunStopped(f"the run was stopped: {how}")
        error.__cause__ = stopped
        try:
            await self.after_run(error)
        except Exception:
            log.warning("after_run failed after the run was stopped", exc_info=True)

    async def failed(self, event: Event, error: Exception) -> Event:
        """The error event that ends the run, after after_run and through on_event.

        A failing after_run is logged (the run's own error stands); a failing on_event gives the
        error event of its own failure, which does not pass on_event again.
        """
        try:
            await self.after_run(error)
        except CallbackError:
            log.warning("after_run failed after the run failed", exc_info=True)
        try:
            return await self.on_event(event)
        except CallbackError as failure:
            own = Event.from_error(event.invocation_id, event.author, failure, where=where(failure) or "")
            own.actions.state_delta = event.actions.state_delta
            return own
