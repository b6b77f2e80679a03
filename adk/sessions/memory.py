"""An in-memory session store: fast, and gone with the process."""

from __future__ import annotations

import math
import time
from typing import Any

from adk.events import Event, actions_of
from adk.sessions.base import (
    Session,
    apply_event,
    apply_state_delta,
    busy,
    merge_scopes,
    missing_session,
    split_delta,
    stale,
)
from adk.sessions.budgets import MemoryBudgets

__all__ = ["InMemorySessionService"]


class InMemorySessionService(MemoryBudgets):
    """Sessions kept in a dict, keyed by (user id, session id); leases hold within this process.

    `get` returns the stored session itself, not a copy: change it only through `append_event`.
    Leases do not expire unless `lease_ttl` is given: no other process can be left waiting for
    a dead one, so runs need not renew them.

    Its coroutines await nothing: each does its work in its first step, so a run's calls to it
    cost a coroutine each and never a turn of the event loop (docs/decisions.md).
    """

    def __init__(self, *, lease_ttl: float = math.inf) -> None:
        self.lease_ttl = lease_ttl
        self._sessions: dict[tuple[str, str], Session] = {}
        self._leases: dict[tuple[str, str], tuple[str, float]] = {}
        """(user id, session id) -> (owner, monotonic expiry)."""
        self._users: dict[str, dict[str, Any]] = {}
        """User id -> its `user:` state."""
        self._app: dict[str, Any] = {}
        """The `app:` state."""
        self._scoped = False
        """Whether any scoped key was ever stored: until then sessions need no refresh."""

    def _fresh(self, session: Session) -> Session:
        """`session` with the current `user:` and `app:` keys in its state."""
        if self._scoped:
            merge_scopes(session.state, self._users.get(session.user_id, {}), self._app)
        return session

    async def get_or_create(self, user_id: str, session_id: str) -> Session:
        return self._get_or_create(user_id, session_id)

    def _get_or_create(self, user_id: str, session_id: str) -> Session:
        key = (user_id, session_id)
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = Session._empty(session_id, user_id)
        return self._fresh(session)

    async def get(self, user_id: str, session_id: str) -> Session | None:
        session = self._sessions.get((user_id, session_id))
        return None if session is None else self._fresh(session)

    async def get_from_horizon(self, user_id: str, session_id: str) -> Session | None:
        session = self._sessions.get((user_id, session_id))  # every event is at hand: none skipped
        return None if session is None else self._fresh(session)

    async def append_event(self, session: Session, event: Event) -> None:
        if event.is_partial:
            return
        key = (session.user_id, session.id)
        stored = self._sessions.get(key)
        if stored is None:
            raise missing_session("the in-memory store", session)
        if stored is not session and stored.last_seq != session.last_seq:
            raise stale(session, stored.last_seq)
        held = self._leases.get(key)
        if held is not None and held[0] != session.lease and held[1] > time.monotonic():
            raise busy(*key)
        actions = actions_of(event)
        if actions is not None and (delta := actions.state_delta):
            scoped = split_delta(delta)
            if scoped.user or scoped.app:
                self._scoped = True
                apply_state_delta(self._users.setdefault(session.user_id, {}), scoped.user)
                apply_state_delta(self._app, scoped.app)
            apply_state_delta(session.state, delta)
        # apply_event(session, event), inlined: three times a turn
        session.events.append(event)
        session.updated_at = event.timestamp
        if stored is not session:
            apply_event(stored, event)

    async def delete(self, user_id: str, session_id: str) -> None:
        self._sessions.pop((user_id, session_id), None)
        self._leases.pop((user_id, session_id), None)

    async def list_sessions(self, user_id: str) -> list[str]:
        return [sid for (uid, sid) in self._sessions if uid == user_id]

    async def user_state(self, user_id: str) -> dict[str, Any]:
        return dict(self._users.get(user_id, {}))

    async def app_state(self) -> dict[str, Any]:
        return dict(self._app)

    async def acquire(
        self, user_id: str, session_id: str, owner: str, *, takeover: str | None = None
    ) -> Session:
        key = (user_id, session_id)
        held = self._leases.get(key)
        if held is not None and held[0] != takeover and self._held_by_other(key, owner):
            raise busy(user_id, session_id)
        self._leases[key] = (owner, time.monotonic() + self.lease_ttl)
        stored = self._get_or_create(user_id, session_id)
        if held is None or held[0] == owner:
            stored.lease = owner
            return stored
        # Taken from an owner that did not release it: a copy of its own, so that the old
        # holder's session object keeps the old lease and is fenced out.
        return Session(
            id=session_id,
            user_id=user_id,
            state=dict(stored.state),
            events=list(stored.events),
            updated_at=stored.updated_at,
            lease=owner,
        )

    async def renew(self, session: Session) -> None:
        key = (session.user_id, session.id)
        if session.lease is None or self._held_by_other(key, session.lease):
            raise busy(*key)
        self._leases[key] = (session.lease, time.monotonic() + self.lease_ttl)

    async def release(self, session: Session) -> None:
        key = (session.user_id, session.id)
        held = self._leases.get(key)
        if held is not None and held[0] == session.lease:
            del self._leases[key]
        session.lease = None

    def _held_by_other(self, key: tuple[str, str], owner: str | None) -> bool:
        held = self._leases.get(key)
        return held is not None and held[0] != owner and held[1] > time.monotonic()
