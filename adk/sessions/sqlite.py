"""A SQLite session store: the embedded default for sessions that must survive a restart.

Each `append_event` is one transaction that stores the event and the session's new state
together, so a crash never separates an event from its state delta. The database runs in WAL
mode with `synchronous=NORMAL`: a killed process loses nothing that was committed; a power
failure may lose the last few commits but never corrupts the file.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Self

import pydantic_core

from adk.events import Event
from adk.sessions.base import Session, apply_event, apply_state_delta, missing_session

__all__ = ["SqliteSessionService"]

_SCHEMA_VERSION = 1
_SCHEMA = (
    # state: the session state as a JSON object; last_seq: the seq of its last event.
    """CREATE TABLE sessions (
        pk INTEGER PRIMARY KEY,
        user_id TEXT NOT NULL,
        id TEXT NOT NULL,
        state TEXT NOT NULL,
        updated_at REAL NOT NULL,
        last_seq INTEGER NOT NULL DEFAULT 0,
        UNIQUE (user_id, id)
    )""",
    # event: Event.model_dump_json(), read back with Event.model_validate_json.
    """CREATE TABLE events (
        session INTEGER NOT NULL REFERENCES sessions (pk),
        seq INTEGER NOT NULL,
        event TEXT NOT NULL,
        PRIMARY KEY (session, seq)
    ) WITHOUT ROWID""",
)


class SqliteSessionService:
    """Sessions in a SQLite file (or `":memory:"`), through one connection.

    Calls are short local I/O done directly on the event loop. Another instance or process
    opening the same file sees every committed event and state.
    """

    def __init__(self, path: str | os.PathLike[str] = "adk_sessions.sqlite3") -> None:
        self.path = os.fspath(path)
        # One connection, used under a lock, so a service may also be shared across threads.
        self._lock = threading.Lock()
        self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        where = f"session store {self.path!r}"
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as e:
            raise type(e)(f"cannot open {where}: {e}") from e
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("BEGIN IMMEDIATE")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                taken = conn.execute(
                    "SELECT name FROM sqlite_master WHERE name IN ('sessions', 'events') ORDER BY name"
                ).fetchall()
                if taken:
                    names = ", ".join(name for (name,) in taken)
                    raise sqlite3.DatabaseError(f"it already has tables not made by adk: {names}")
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            elif version != _SCHEMA_VERSION:
                raise sqlite3.DatabaseError(
                    f"its schema version is {version}, and this adk reads version {_SCHEMA_VERSION}"
                )
            conn.execute("COMMIT")
        except sqlite3.Error as e:
            conn.close()
            raise type(e)(f"cannot open {where}: {e}") from e
        return conn

    @contextmanager
    def _transaction(self, begin: str = "BEGIN IMMEDIATE") -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._conn
            conn.execute(begin)
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    async def get_or_create(self, user_id: str, session_id: str) -> Session:
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO sessions (user_id, id, state, updated_at) VALUES (?, ?, '{}', ?)"
                " ON CONFLICT DO NOTHING",
                (user_id, session_id, time.time()),
            )
            session = self._load(conn, user_id, session_id)
        if session is None:  # inserted just above, in the same transaction
            raise RuntimeError(f"session {session_id!r} of user {user_id!r} vanished as it was created")
        return session

    async def get(self, user_id: str, session_id: str) -> Session | None:
        with self._transaction("BEGIN") as conn:
            return self._load(conn, user_id, session_id)

    @staticmethod
    def _load(conn: sqlite3.Connection, user_id: str, session_id: str) -> Session | None:
        row = conn.execute(
            "SELECT pk, state, updated_at FROM sessions WHERE user_id = ? AND id = ?", (user_id, session_id)
        ).fetchone()
        if row is None:
            return None
        pk, state, updated_at = row
        events = conn.execute("SELECT event FROM events WHERE session = ? ORDER BY seq", (pk,))
        return Session(
            id=session_id,
            user_id=user_id,
            state=pydantic_core.from_json(state),
            events=[Event.model_validate_json(text) for (text,) in events],
            updated_at=updated_at,
        )

    async def append_event(self, session: Session, event: Event) -> None:
        if event.is_partial:
            return
        text = _event_json(event)
        delta = event.actions.state_delta
        with self._transaction() as conn:
            query = "SELECT pk, last_seq FROM sessions WHERE user_id = ? AND id = ?"
            row = conn.execute(query, (session.user_id, session.id)).fetchone()
            if row is None:
                raise missing_session(f"session store {self.path!r}", session)
            pk, seq = row
            seq += 1
            conn.execute("INSERT INTO events (session, seq, event) VALUES (?, ?, ?)", (pk, seq, text))
            if not delta:
                update = (seq, event.timestamp, pk)
                conn.execute("UPDATE sessions SET last_seq = ?, updated_at = ? WHERE pk = ?", update)
            else:
                # Applied to the stored state, not to `session.state`, which may be stale.
                (state,) = conn.execute("SELECT state FROM sessions WHERE pk = ?", (pk,)).fetchone()
                stored: dict[str, Any] = pydantic_core.from_json(state)
                apply_state_delta(stored, delta)
                conn.execute(
                    "UPDATE sessions SET last_seq = ?, state = ?, updated_at = ? WHERE pk = ?",
                    (seq, pydantic_core.to_json(stored).decode(), event.timestamp, pk),
                )
        apply_event(session, event)

    async def delete(self, user_id: str, session_id: str) -> None:
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT pk FROM sessions WHERE user_id = ? AND id = ?", (user_id, session_id)
            ).fetchone()
            if row is not None:
                conn.execute("DELETE FROM events WHERE session = ?", row)
                conn.execute("DELETE FROM sessions WHERE pk = ?", row)

    async def list_sessions(self, user_id: str) -> list[str]:
        with self._lock:
            rows = self._conn.execute("SELECT id FROM sessions WHERE user_id = ? ORDER BY pk", (user_id,))
            return [sid for (sid,) in rows]

    def close(self) -> None:
        """Close the connection; the service is unusable afterwards. Closing twice is harmless."""
        with self._lock:
            self._conn.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SqliteSessionService({self.path!r})"


def _event_json(event: Event) -> str:
    """The event as JSON; a state value that JSON cannot hold is a TypeError naming its key."""
    try:
        return event.model_dump_json()
    except pydantic_core.PydanticSerializationError as e:
        for key, value in event.actions.state_delta.items():
            try:
                pydantic_core.to_json(value)
            except pydantic_core.PydanticSerializationError:
                raise TypeError(
                    f"cannot store event {event.id}: state_delta[{key!r}] holds a {type(value).__name__},"
                    " which JSON cannot represent"
                ) from e
        raise
