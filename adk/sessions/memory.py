"""An in-memory session store: fast, and gone with the process."""

from __future__ import annotations

from adk.events import Event
from adk.sessions.base import Session, apply_event, missing_session

__all__ = ["InMemorySessionService"]


class InMemorySessionService:
    """Sessions kept in a dict, keyed by (user id, session id).

    `get` returns the stored session itself, not a copy: change it only through `append_event`.
    """

    def __init__(self) -> None:
        self._sessions: dict[tuple[str, str], Session] = {}

    async def get_or_create(self, user_id: str, session_id: str) -> Session:
        key = (user_id, session_id)
        session = self._sessions.get(key)
        if session is None:
            session = self._sessions[key] = Session(id=session_id, user_id=user_id)
        return session

    async def get(self, user_id: str, session_id: str) -> Session | None:
        return self._sessions.get((user_id, session_id))

    async def append_event(self, session: Session, event: Event) -> None:
        if event.is_partial:
            return
        stored = self._sessions.get((session.user_id, session.id))
        if stored is None:
            raise missing_session("the in-memory store", session)
        apply_event(session, event)
        if stored is not session:
            apply_event(stored, event)

    async def delete(self, user_id: str, session_id: str) -> None:
        self._sessions.pop((user_id, session_id), None)

    async def list_sessions(self, user_id: str) -> list[str]:
        return [sid for (uid, sid) in self._sessions if uid == user_id]
