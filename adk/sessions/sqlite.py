"""A SQLite session store: the embedded default for sessions that must survive a restart.

Each `append_event` is one transaction that stores the event and the session's new state
together, so a crash never separates an event from its state delta. The database runs in WAL
mode with `synchronous=NORMAL`: a killed process loses nothing that was committed; a power
failure may lose the last few commits but never corrupts the file.

Every call runs on the store's own thread, so a write lock held by another process (SQLite
allows one writer at a time) holds up that call only, never the event loop.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, Self, TypeVar

import pydantic_core

from adk.events import Event
from adk.sessions.base import (
    DEFAULT_LEASE_TTL,
    Session,
    apply_event,
    apply_state_delta,
    busy,
    event_json,
    merge_scopes,
    missing_session,
    split_delta,
    stale,
)
from adk.sessions.horizon import horizon_after
from adk.sessions.sqlite_budgets import SqliteBudgets

__all__ = ["SqliteSessionService"]

T = TypeVar("T")

_SCHEMA_VERSION = 4
# The `user:` state of each user (scope 'user', owner: the user id) and the `app:` state (scope
# 'app', owner ''), as JSON objects.
_SCOPED_STATE = """CREATE TABLE scoped_state (
    scope TEXT NOT NULL,
    owner TEXT NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (scope, owner)
) WITHOUT ROWID"""
_SCHEMA = (
    # state: the session state as a JSON object; last_seq: the seq of its last event;
    # lease_owner / lease_expires: the run lease (expiry in time.time() seconds); horizon: how
    # many of its first events a run skips (adk.sessions.horizon).
    """CREATE TABLE sessions (
        pk INTEGER PRIMARY KEY,
        user_id TEXT NOT NULL,
        id TEXT NOT NULL,
        state TEXT NOT NULL,
        updated_at REAL NOT NULL,
        last_seq INTEGER NOT NULL DEFAULT 0,
        lease_owner TEXT,
        lease_expires REAL NOT NULL DEFAULT 0,
        horizon INTEGER NOT NULL DEFAULT 0,
        UNIQUE (user_id, id)
    )""",
    # event: Event.model_dump_json(), read back with Event.model_validate_json.
    """CREATE TABLE events (
        session INTEGER NOT NULL REFERENCES sessions (pk),
        seq INTEGER NOT NULL,
        event TEXT NOT NULL,
        PRIMARY KEY (session, seq)
    ) WITHOUT ROWID""",
    _SCOPED_STATE,
)
_MIGRATIONS = {
    1: (
        "ALTER TABLE sessions ADD COLUMN lease_owner TEXT",
        "ALTER TABLE sessions ADD COLUMN lease_expires REAL NOT NULL DEFAULT 0",
    ),
    2: (_SCOPED_STATE,),
    3: ("ALTER TABLE sessions ADD COLUMN horizon INTEGER NOT NULL DEFAULT 0",),
}
"""The statements that take a database from a version to the next."""


class SqliteSessionService(SqliteBudgets):
    """Sessions in a SQLite file (or `":memory:"`), through one connection on one thread.

    Another instance or process opening the same file sees every committed event and state,
    and respects its leases. A call waits up to `timeout` seconds for another writer's lock,
    then fails with `sqlite3.OperationalError`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = "adk_sessions.sqlite3",
        *,
        lease_ttl: float = DEFAULT_LEASE_TTL,
        timeout: float = 5.0,
    ) -> None:
        self.path = os.fspath(path)
        self.lease_ttl = lease_ttl
        self.timeout = timeout
        self._conn = self._open()
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="adk-sqlite")
        self._runs: dict[tuple[str, str], tuple[int, Session]] = {}
        """(user id, session id) -> (pk, the session the last run took): the next run reads only
        the events stored since, so that a turn does not cost more as the session grows."""

    def _open(self) -> sqlite3.Connection:
        where = f"session store {self.path!r}"
        try:
            conn = sqlite3.connect(
                self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
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
            elif version > _SCHEMA_VERSION:
                raise sqlite3.DatabaseError(
                    f"its schema version is {version}, and this adk reads versions up to {_SCHEMA_VERSION}"
                )
            else:
                for old in range(version, _SCHEMA_VERSION):
                    for statement in _MIGRATIONS[old]:
                        conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except sqlite3.Error as e:
            conn.close()
            raise type(e)(f"cannot open {where}: {e}") from e
        return conn

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run `fn(*args)` on the store's thread."""
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)

    @contextmanager
    def _transaction(self, begin: str = "BEGIN IMMEDIATE") -> Iterator[sqlite3.Connection]:
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
        return await self._call(self._get_or_create, user_id, session_id, None, None)

    def _get_or_create(
        self, user_id: str, session_id: str, owner: str | None, takeover: str | None
    ) -> Session:
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO sessions (user_id, id, state, updated_at) VALUES (?, ?, '{}', ?)"
                " ON CONFLICT DO NOTHING",
                (user_id, session_id, time.time()),
            )
            if owner is not None:
                now = time.time()
                taken = conn.execute(
                    "UPDATE sessions SET lease_owner = ?, lease_expires = ? WHERE user_id = ? AND id = ?"
                    " AND (lease_owner IS NULL OR lease_owner IN (?, ?) OR lease_expires <= ?)",
                    (owner, now + self.lease_ttl, user_id, session_id, owner, takeover, now),
                )
                if not taken.rowcount:
                    raise busy(user_id, session_id)
                session = self._refresh(conn, user_id, session_id)
            else:
                session = self._load(conn, user_id, session_id, full=True)
        if session is None:  # pragma: no cover  # created above, in the same transaction
            raise missing_session(f"session store {self.path!r}", Session(id=session_id, user_id=user_id))
        session.lease = owner
        return session

    async def get(self, user_id: str, session_id: str) -> Session | None:
        return await self._call(self._get, user_id, session_id)

    def _get(self, user_id: str, session_id: str, full: bool = True) -> Session | None:
        with self._transaction("BEGIN") as conn:
            return self._load(conn, user_id, session_id, full=full)

    async def get_from_horizon(self, user_id: str, session_id: str) -> Session | None:
        return await self._call(self._get, user_id, session_id, False)

    @staticmethod
    def _load(conn: sqlite3.Connection, user_id: str, session_id: str, *, full: bool) -> Session | None:
        """The session: every event (`full`), or those after its horizon (a run's)."""
        row = conn.execute(
            "SELECT pk, state, updated_at, horizon FROM sessions WHERE user_id = ? AND id = ?",
            (user_id, session_id),
        ).fetchone()
        if row is None:
            return None
        pk, state, updated_at, horizon = row
        skipped = 0 if full else horizon
        query = "SELECT event FROM events WHERE session = ? AND seq > ? ORDER BY seq"
        events = conn.execute(query, (pk, skipped))
        session = Session(
            id=session_id,
            user_id=user_id,
            state=pydantic_core.from_json(state),
            events=[Event.model_validate_json(text) for (text,) in events],
            updated_at=updated_at,
            skipped=skipped,
        )
        merge_scopes(session.state, _scoped(conn, "user", user_id), _scoped(conn, "app", ""))
        return session

    def _refresh(self, conn: sqlite3.Connection, user_id: str, session_id: str) -> Session | None:
        """The session for a run: the one the last run took, with the events stored since, if that
        run let it go and it is still a prefix of what is stored (same row, same last event); else
        read in full (a copy a lease was taken from stays with its old lease, and is fenced out)."""
        key = (user_id, session_id)
        kept = self._runs.pop(key, None)
        row = conn.execute(
            "SELECT pk, last_seq, state, updated_at FROM sessions WHERE user_id = ? AND id = ?", key
        ).fetchone()
        session: Session | None = None
        if (
            kept is not None
            and kept[1].lease is None
            and row is not None
            and kept[0] == row[0]
            and kept[1].last_seq <= row[1]
        ):
            pk, stored, state, updated_at = row
            session, seen = kept[1], kept[1].last_seq
            if seen:
                last = conn.execute(
                    "SELECT json_extract(event, '$.id') FROM events WHERE session = ? AND seq = ?", (pk, seen)
                ).fetchone()
                if last is None or not session.events or last[0] != session.events[-1].id:
                    session = None
            if session is not None:
                if stored > seen:
                    rows = conn.execute(
                        "SELECT event FROM events WHERE session = ? AND seq > ? ORDER BY seq", (pk, seen)
                    )
                    session.events.extend(Event.model_validate_json(text) for (text,) in rows)
                session.state.clear()
                session.state.update(pydantic_core.from_json(state))
                merge_scopes(session.state, _scoped(conn, "user", user_id), _scoped(conn, "app", ""))
                session.updated_at = updated_at
        if session is None:
            session = self._load(conn, user_id, session_id, full=False)
        if session is not None and row is not None:
            if len(self._runs) >= 1024:  # a bound: the oldest are read in full again
                del self._runs[next(iter(self._runs))]
            self._runs[key] = (row[0], session)
        return session

    async def append_event(self, session: Session, event: Event) -> None:
        if event.is_partial:
            return
        await self._call(self._append, session, event, event_json(event), horizon_after(session, event))
        apply_event(session, event)

    def _append(self, session: Session, event: Event, text: str, horizon: int | None) -> None:
        scoped = split_delta(event.actions.state_delta)
        delta = scoped.session
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT pk, last_seq, lease_owner, lease_expires, state FROM sessions"
                " WHERE user_id = ? AND id = ?",
                (session.user_id, session.id),
            ).fetchone()
            if row is None:
                raise missing_session(f"session store {self.path!r}", session)
            pk, seq, owner, expires, state = row
            if seq != session.last_seq:
                raise stale(session, seq)
            if owner is not None and owner != session.lease and expires > time.time():
                raise busy(session.user_id, session.id)
            seq += 1
            conn.execute("INSERT INTO events (session, seq, event) VALUES (?, ?, ?)", (pk, seq, text))
            if not delta:
                update = (seq, event.timestamp, pk)
                conn.execute("UPDATE sessions SET last_seq = ?, updated_at = ? WHERE pk = ?", update)
            else:
                # Applied to the stored state, which is the state `session` has seen.
                stored: dict[str, Any] = pydantic_core.from_json(state)
                apply_state_delta(stored, delta)
                conn.execute(
                    "UPDATE sessions SET last_seq = ?, state = ?, updated_at = ? WHERE pk = ?",
                    (seq, pydantic_core.to_json(stored).decode(), event.timestamp, pk),
                )
            if horizon is not None:
                conn.execute("UPDATE sessions SET horizon = ? WHERE pk = ?", (horizon, pk))
            for scope, owner, part in (("user", session.user_id, scoped.user), ("app", "", scoped.app)):
                if part:
                    merged = _scoped(conn, scope, owner)
                    apply_state_delta(merged, part)
                    conn.execute(
                        "INSERT INTO scoped_state (scope, owner, state) VALUES (?, ?, ?)"
                        " ON CONFLICT DO UPDATE SET state = excluded.state",
                        (scope, owner, pydantic_core.to_json(merged).decode()),
                    )

    async def delete(self, user_id: str, session_id: str) -> None:
        await self._call(self._delete, user_id, session_id)

    def _delete(self, user_id: str, session_id: str) -> None:
        with self._transaction() as conn:
            row = conn.execute(
                "SELECT pk FROM sessions WHERE user_id = ? AND id = ?", (user_id, session_id)
            ).fetchone()
            if row is not None:
                conn.execute("DELETE FROM events WHERE session = ?", row)
                conn.execute("DELETE FROM sessions WHERE pk = ?", row)

    async def list_sessions(self, user_id: str) -> list[str]:
        return await self._call(self._list, user_id)

    def _list(self, user_id: str) -> list[str]:
        rows = self._conn.execute("SELECT id FROM sessions WHERE user_id = ? ORDER BY pk", (user_id,))
        return [sid for (sid,) in rows]

    async def user_state(self, user_id: str) -> dict[str, Any]:
        return await self._call(_scoped, self._conn, "user", user_id)

    async def app_state(self) -> dict[str, Any]:
        return await self._call(_scoped, self._conn, "app", "")

    async def acquire(
        self, user_id: str, session_id: str, owner: str, *, takeover: str | None = None
    ) -> Session:
        return await self._call(self._get_or_create, user_id, session_id, owner, takeover)

    async def renew(self, session: Session) -> None:
        await self._call(self._renew, session)

    def _renew(self, session: Session) -> None:
        renewed = self._conn.execute(
            "UPDATE sessions SET lease_expires = ? WHERE user_id = ? AND id = ? AND lease_owner = ?",
            (time.time() + self.lease_ttl, session.user_id, session.id, session.lease),
        )
        if session.lease is None or not renewed.rowcount:
            raise busy(session.user_id, session.id)

    async def release(self, session: Session) -> None:
        owner, session.lease = session.lease, None
        if owner is not None:
            await self._call(self._release, session, owner)

    def _release(self, session: Session, owner: str) -> None:
        self._conn.execute(
            "UPDATE sessions SET lease_owner = NULL, lease_expires = 0"
            " WHERE user_id = ? AND id = ? AND lease_owner = ?",
            (session.user_id, session.id, owner),
        )

    def close(self) -> None:
        """Close the connection; the service is unusable afterwards. Closing twice is harmless."""
        self._thread.submit(self._conn.close).result()  # after the calls already queued

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SqliteSessionService({self.path!r})"


def _scoped(conn: sqlite3.Connection, scope: str, owner: str) -> dict[str, Any]:
    """The stored `user:` state of user `owner` (scope 'user'), or the `app:` state (scope 'app')."""
    query = "SELECT state FROM scoped_state WHERE scope = ? AND owner = ?"
    row = conn.execute(query, (scope, owner)).fetchone()
    state: dict[str, Any] = {} if row is None else pydantic_core.from_json(row[0])
    return state
