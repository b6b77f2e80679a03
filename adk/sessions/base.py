"""Sessions: a conversation's events and state, and the small contract every store implements.

The contract, tested once for every store in tests/contract/:
- **Ordered appends.** An event's sequence number is its position in the session (from 1). An
  append follows the last event the caller's session has seen; if the store has more, another
  writer appended in between and the append is refused (`StaleSessionError`), so nothing
  interleaves silently.
- **A run lease.** `acquire` takes the session for one run (creating it if needed); while the
  lease lasts, `acquire` by any other owner, in any process sharing the store, raises
  `SessionBusyError`, and so does an append through another owner's copy. A lease not renewed
  within `lease_ttl` seconds expires, so a worker that died frees its sessions.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from adk.errors import SessionBusyError, StaleSessionError
from adk.events import Event

__all__ = [
    "DEFAULT_LEASE_TTL",
    "Session",
    "SessionService",
    "apply_event",
    "apply_state_delta",
    "busy",
    "missing_session",
    "stale",
]

DEFAULT_LEASE_TTL = 10.0
"""Seconds a run's lease lasts unless renewed: how long a dead worker's session stays taken."""


class Session(BaseModel):
    """One conversation: its stored events and its current state."""

    model_config = ConfigDict(defer_build=True)

    id: str
    user_id: str
    state: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    updated_at: float = Field(default_factory=time.time)
    lease: str | None = Field(default=None, exclude=True)
    """The owner token of the run lease this copy holds (set by `acquire`), or None."""

    @property
    def last_seq(self) -> int:
        """The sequence number of the last event this copy has seen (0 when it has none)."""
        return len(self.events)


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

    lease_ttl: float
    """Seconds a lease lasts unless renewed; the runner renews it every third of that."""

    async def get_or_create(self, user_id: str, session_id: str) -> Session:
        """The session, created empty if it does not exist."""
        ...

    async def get(self, user_id: str, session_id: str) -> Session | None:
        """The session, or None if it does not exist."""
        ...

    async def append_event(self, session: Session, event: Event) -> None:
        """Store `event` as number `session.last_seq + 1` and apply its state delta to `session`.

        A partial event is ignored. Raises LookupError if the session is not in the store,
        `StaleSessionError` if the store has events `session` has not seen, and
        `SessionBusyError` if another owner holds the session's lease.
        """
        ...

    async def delete(self, user_id: str, session_id: str) -> None:
        """Delete the session and its events; deleting a missing session does nothing."""
        ...

    async def list_sessions(self, user_id: str) -> list[str]:
        """The ids of `user_id`'s sessions, oldest first."""
        ...

    async def acquire(
        self, user_id: str, session_id: str, owner: str, *, takeover: str | None = None
    ) -> Session:
        """Take the session's run lease for `owner` (creating the session if needed) and return it.

        Raises `SessionBusyError` while another owner's lease lasts, unless that owner is
        `takeover` (a run of the same runner that is known to be gone).
        """
        ...

    async def renew(self, session: Session) -> None:
        """Extend the lease `session` holds by `lease_ttl`; `SessionBusyError` if it was lost."""
        ...

    async def release(self, session: Session) -> None:
        """Give up the lease `session` holds, if it still holds it; `session.lease` becomes None."""
        ...


def missing_session(store: str, session: Session) -> LookupError:
    """The error for an append to a session that is not in `store`."""
    return LookupError(
        f"cannot append to session {session.id!r} of user {session.user_id!r}: it is not in {store}"
        " (never created there, or deleted)"
    )


def stale(session: Session, stored: int) -> StaleSessionError:
    """The error for an append whose session copy has not seen every stored event."""
    return StaleSessionError(
        f"cannot append to session {session.id!r} of user {session.user_id!r}: the store has"
        f" {stored} event(s) and this copy has seen {session.last_seq}; another writer appended"
        " in between (read the session again)"
    )


def busy(user_id: str, session_id: str) -> SessionBusyError:
    """The error for a session whose lease another run holds."""
    return SessionBusyError(f"session {session_id!r} of user {user_id!r} is already running")
