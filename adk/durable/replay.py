"""The session store a durable run writes through: on recovery, the events its invocation had
already stored are not stored again but adopted (docs/durable.md).

A recovered workflow runs its invocation again from its start; its model and tool steps return
their checkpointed outputs, so it makes the same events again, in the same order. The k-th of
them takes the stored k-th event's id, timestamp and contents (the event the first execution
stored), so what the run yields is exactly what the store holds, and nothing is stored twice.
An event that does not match the record (another object or author: the agent changed since)
stops the run with `WorkflowMismatchError`, naming the workflow, rather than going on.

Concurrent lanes (a `ParallelAgent`'s children, agent tools called at once) hand their events on
in whatever order they come (adk.agents.checkpoints). In a recovery each lane waits (`handing`)
until its event is the next the record holds, so the run makes them again in the stored order.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from adk.durable.checkpoint import step
from adk.errors import WorkflowMismatchError
from adk.events import Event
from adk.sessions.base import Session, SessionService, apply_event

__all__ = ["ReplayStore", "WorkflowMismatchError"]


class ReplayStore:
    """`store`, as seen by the workflow `workflow_id` running invocation `invocation_id`.

    The lease owner of the workflow's first execution is checkpointed: the recovered run takes
    its predecessor's lease over at once rather than waiting for it to expire.
    """

    def __init__(
        self, store: SessionService, workflow_id: str, invocation_id: str, since: str | None
    ) -> None:
        self.store = store
        self.since = since
        """For a workflow that answers a paused run: the id of the event it paused with."""
        self.workflow_id = workflow_id
        self.invocation_id = invocation_id
        self.lease_ttl = store.lease_ttl
        self.recorded: list[Event] = []
        """The invocation's stored events, not yet adopted, oldest first."""
        self.claimed = 0
        """How many of `recorded`, from the first, a lane is handing on (`handing`)."""
        self.handed: set[str] = set()
        """The ids of the events claimed so (an event goes through a gate per lane it crosses)."""
        self.turns = asyncio.Condition()

    async def acquire(
        self, user_id: str, session_id: str, owner: str, *, takeover: str | None = None
    ) -> Session:
        first = await step("adk.lease", _same, owner)
        session = await self.store.acquire(
            user_id, session_id, owner, takeover=first if first != owner else takeover
        )
        kept = self._first(session.events)
        if kept == len(session.events):
            return session
        # A recovery: the run goes on from before those events, adopting them as it makes them
        # again, on a copy (a store may hand out its own object, which must keep them).
        self.recorded = session.events[kept:]
        return Session(
            id=session.id,
            user_id=session.user_id,
            state=dict(session.state),
            events=session.events[:kept],
            updated_at=session.updated_at,
            lease=session.lease,
            skipped=session.skipped,
        )

    def _first(self, events: list[Event]) -> int:
        """Where the events this workflow stored begin: its invocation's first, or for an answer
        the one after the pause (the session's lease kept other runs out since)."""
        if self.since is None:
            mine = (i for i, e in enumerate(events) if e.invocation_id == self.invocation_id)
            return next(mine, len(events))
        ids = [e.id for e in events]
        return ids.index(self.since) + 1 if self.since in ids else len(events)

    async def append_event(self, session: Session, event: Event) -> None:
        if event.is_partial or not self.recorded:
            await self.store.append_event(session, event)
            return
        stored = self.recorded[0]
        if (stored.object, stored.author) != (event.object, event.author):
            raise WorkflowMismatchError(
                f"workflow {self.workflow_id!r} no longer matches its record: event {session.last_seq + 1}"
                f" of session {session.id!r} was {stored.object} by {stored.author!r}, the run now makes"
                f" {event.object} by {event.author!r} (was the agent changed?); nothing was run again"
            )
        del self.recorded[0]
        for field in dataclasses.fields(Event):
            setattr(event, field.name, getattr(stored, field.name))
        apply_event(session, event)
        async with self.turns:  # the next recorded event is another now: the lanes look again
            self.claimed = max(self.claimed - 1, 0)
            self.turns.notify_all()

    async def handing(self, event: Event) -> None:
        """Return once `event` (complete, made on a concurrent lane) is the next the record
        holds, or is past it; at once in a first execution."""
        if self.claimed >= len(self.recorded) or event.id in self.handed:
            return
        async with self.turns:
            await self.turns.wait_for(lambda: self._due(event))
            if self.claimed < len(self.recorded):
                self.claimed += 1
                self.handed.add(event.id)
                self.turns.notify_all()

    def _due(self, event: Event) -> bool:
        """Whether `event` stands for the next recorded one: of its branch, kind, author and tool
        calls, and of its text, unless no later one has that text (an `on_event` that edited it
        before it was stored); so of two calls of one agent tool, each takes its own."""
        if self.claimed >= len(self.recorded):
            return True
        stored, key, text = self.recorded[self.claimed], _key(event), event.content
        if _key(stored) != key:
            return False
        later = self.recorded[self.claimed + 1 :]
        return stored.content == text or not any(_key(e) == key and e.content == text for e in later)

    async def renew(self, session: Session) -> None:
        await self.store.renew(session)

    async def release(self, session: Session) -> None:
        await self.store.release(session)

    async def get_or_create(self, user_id: str, session_id: str) -> Session:
        return await self.store.get_or_create(user_id, session_id)

    async def get(self, user_id: str, session_id: str) -> Session | None:
        return await self.store.get(user_id, session_id)

    async def delete(self, user_id: str, session_id: str) -> None:
        await self.store.delete(user_id, session_id)

    async def list_sessions(self, user_id: str) -> list[str]:
        return await self.store.list_sessions(user_id)

    async def user_state(self, user_id: str) -> dict[str, Any]:
        return await self.store.user_state(user_id)

    async def app_state(self) -> dict[str, Any]:
        return await self.store.app_state()


async def _same(owner: str) -> str:
    return owner


def _key(event: Event) -> tuple[Any, ...]:
    """What an event made again shares with the stored one it stands for: where, what and by
    whom, and its tool calls (made again from the record)."""
    return (event.branch, event.object, event.author, tuple(c.id for c in event.tool_calls))
