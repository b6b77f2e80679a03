"""Sessions: a conversation's events and state, and the small interface every store implements."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from adk.events import Event

__all__ = ["Session", "SessionService", "apply_event", "apply_state_delta", "missing_session"]


class Session(BaseModel):
    """One conversation: its stored events and its current state."""

    model_config = ConfigDict(defer_build=True)

    id: str
    user_id: str
    state: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    updated_at: float = Field(default_factory=time.time)


def apply_state_delta(state: dict[str, Any], delta: Mapping[str, Any]) -> None:
    """Apply `delta` to `state` in place: a key set to None is deleted, any other value replaces."""
    for key, value in delta.items():
        if value is None:
            state.pop(key, None)
        else:
            state[key] = value


def apply_event(session: Session, event: Event) -> None:
    """Apply `event` to the in-memory `session`: its state delta, then the event itself.

    The state dict is changed in place, since contexts hold a reference to it.
    """
    apply_state_delta(session.state, event.actions.state_delta)
    session.events.append(event)
    session.updated_at = event.timestamp


class SessionService(Protocol):
    """Where sessions live. Partial (streaming) events are never stored."""

    async def get_or_create(self, user_id: str, session_id: str) -> Session:
        """The session, created empty if it does not exist."""
        ...

    async def get(self, user_id: str, session_id: str) -> Session | None:
        """The session, or None if it does not exist."""
        ...

    async def append_event(self, session: Session, event: Event) -> None:
        """Store `event` and apply its state delta to `session`; a partial event is ignored.

        Raises LookupError if the session is not in the store (never created, or deleted).
        """
        ...

    async def delete(self, user_id: str, session_id: str) -> None:
        """Delete the session and its events; deleting a missing session does nothing."""
        ...

    async def list_sessions(self, user_id: str) -> list[str]:
        """The ids of `user_id`'s sessions, oldest first."""
        ...


def missing_session(store: str, session: Session) -> LookupError:
    """The error for an append to a session that is not in `store`."""
    return LookupError(
        f"cannot append to session {session.id!r} of user {session.user_id!r}: it is not in {store}"
        " (never created there, or deleted)"
    )
