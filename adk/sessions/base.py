"""Sessions: a conversation's events and state, and the small interface every store implements."""

from __future__ import annotations

import time
from typing import Any, Protocol

from pydantic import BaseModel, Field

from adk.events import Event

__all__ = ["Session", "SessionService", "apply_event"]


class Session(BaseModel):
    """One conversation: its stored events and its current state."""

    id: str
    user_id: str
    state: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    updated_at: float = Field(default_factory=time.time)


def apply_event(session: Session, event: Event) -> None:
    """Apply `event` to the in-memory `session`: its state delta, then the event itself."""
    for key, value in event.actions.state_delta.items():
        if value is None:
            session.state.pop(key, None)
        else:
            session.state[key] = value
    session.events.append(event)
    session.updated_at = event.timestamp


class SessionService(Protocol):
    """Where sessions live. Partial (streaming) events are never stored."""

    async def get_or_create(self, user_id: str, session_id: str) -> Session:
        """The session, created empty if it does not exist."""
        ...

    async def get(self, user_id: str, session_id: str) -> Session | None: ...

    async def append_event(self, session: Session, event: Event) -> None:
        """Store `event` and apply its state delta to `session`; a partial event is ignored."""
        ...

    async def delete(self, user_id: str, session_id: str) -> None: ...

    async def list_sessions(self, user_id: str) -> list[str]:
        """The ids of `user_id`'s sessions."""
        ...
