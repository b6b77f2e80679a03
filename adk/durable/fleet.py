"""The `DurableRunner`s of this process by name, and the two workflows every process registers.

A run's workflow names its agent among its arguments; every worker of a system database polls the
one queue (`adk.runs`) and finds the runner by that name. A worker without it stores an error
event naming the agent in the run's session, rather than leaving the run on a queue nobody polls.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from adk.errors import UnknownAgentError
from adk.events import Event, Message, ObjectType

if TYPE_CHECKING:
    from adk.durable.runner import DurableRunner

__all__ = ["FLEET", "Fleet"]

Workflow = Callable[..., Coroutine[Any, Any, str]]


class Fleet:
    """The runners this process can run, by name, like DBOS's own registry of workflow functions
    (a run's state is not kept here: it lives in its workflow and the session)."""

    def __init__(self) -> None:
        self.runners: dict[str, DurableRunner] = {}
        self.workflows: tuple[Workflow, Workflow] | None = None

    def add(self, runner: DurableRunner) -> tuple[Workflow, Workflow]:
        """Make `runner` the one for its name; the run and answer workflows (registered once)."""
        from dbos import DBOS

        self.runners[runner.name] = runner
        if self.workflows is None:
            self.workflows = (DBOS.workflow(name="adk.run")(_run), DBOS.workflow(name="adk.answer")(_answer))
        return self.workflows

    async def unknown(self, name: str, user_id: str, session_id: str, invocation_id: str) -> str:
        """Store, once, an error event naming the agent `name` this worker does not have."""
        known = ", ".join(repr(n) for n in sorted(self.runners))
        error = UnknownAgentError(
            f"a durable run of session {session_id!r} names the agent {name!r}, which this worker "
            f"does not have (it has {known}): start workers with that agent, or submit to one of these"
        )
        store = next(iter(self.runners.values())).session_service  # a worker has one runner at least
        session = await store.get_or_create(user_id, session_id)
        stored = [e for e in session.events if e.invocation_id == invocation_id]
        if not any(e.object == ObjectType.ERROR for e in stored):  # a recovered run stores it once
            await store.append_event(session, Event.from_error(invocation_id, name, error, where="durable"))
        return str(ObjectType.ERROR)


FLEET = Fleet()


async def _run(
    name: str,
    user_id: str,
    session_id: str,
    message: Message,
    invocation_id: str,
    state_delta: dict[str, Any] | None = None,
    stream: bool = False,
) -> str:
    runner = FLEET.runners.get(name)
    if runner is None:
        return await FLEET.unknown(name, user_id, session_id, invocation_id)
    return await runner.execute(user_id, session_id, message, invocation_id, None, state_delta, stream)


async def _answer(
    name: str,
    user_id: str,
    session_id: str,
    message: Message,
    invocation_id: str,
    answers: Any,
    stream: bool = False,
) -> str:
    runner = FLEET.runners.get(name)
    if runner is None:
        return await FLEET.unknown(name, user_id, session_id, invocation_id)
    return await runner.execute(user_id, session_id, message, invocation_id, answers, stream=stream)
