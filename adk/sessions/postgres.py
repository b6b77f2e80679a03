"""A PostgreSQL session store, for many runner processes on one database (the `postgres` extra).

Through asyncpg and its connection pool. The schema (in its own PostgreSQL schema, `adk` by
default) is created on first use and stamped with a version, so later versions can migrate it.
Each call is one statement, so one round trip: an append stores the event, merges its state
delta and checks order and lease together; taking a lease creates the session and reads it.
"""

from __future__ import annotations

import asyncio
import re
import time
import urllib.parse
from typing import TYPE_CHECKING, Any, Self

import pydantic_core
from pydantic import TypeAdapter

from adk.events import Event
from adk.sessions.base import (
    DEFAULT_LEASE_TTL,
    ScopedDelta,
    Session,
    apply_event,
    busy,
    event_json,
    missing_session,
    split_delta,
    stale,
    unconfirmed,
)
from adk.sessions.horizon import horizon_after
from adk.sessions.postgres_budgets import PostgresBudgets
from adk.sessions.postgres_lease import Renewals
from adk.sessions.postgres_sql import Statements, prepare

if TYPE_CHECKING:
    import asyncpg

__all__ = ["PostgresSessionService"]

_EVENTS: TypeAdapter[list[Event]] = TypeAdapter(list[Event])
_BATCH = 500
_Append = tuple[str, str, int, float, str | None, str | None, str | None, str, int | None]
"""One append's values: user id, session id, seq it follows, time, changes, deleted keys, lease,
event, and the session's new horizon (None: unchanged)."""
_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


class PostgresSessionService(PostgresBudgets):
    """Sessions in PostgreSQL at `url` (`postgresql://user:password@host:port/database`).

    Connects on first use. `schema` names the PostgreSQL schema that holds adk's tables (a
    `?schema=NAME` in the URL says the same); `timeout` bounds each statement, in seconds.
    Close with `await close()` or `async with`.
    """

    def __init__(
        self,
        url: str,
        *,
        schema: str | None = None,
        lease_ttl: float = DEFAULT_LEASE_TTL,
        min_size: int = 1,
        max_size: int = 10,
        timeout: float = 30.0,
    ) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("postgresql", "postgres") or not parts.hostname:
            raise ValueError(
                f"session store URL {_redacted(url)!r} is not a PostgreSQL URL:"
                " expected postgresql://user[:password]@host[:port]/database"
            )
        query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        named = [value for key, value in query if key == "schema"]
        if named:
            url = urllib.parse.urlunsplit(
                parts._replace(query=urllib.parse.urlencode([(k, v) for k, v in query if k != "schema"]))
            )
        schema = schema or (named[-1] if named else "adk")
        if not _NAME.fullmatch(schema):
            raise ValueError(f"schema name {schema!r}: use lower-case letters, digits and underscores")
        self.url = url
        self.schema = schema
        self.lease_ttl = lease_ttl
        self.timeout = timeout
        self._sizes = (min_size, max_size)
        self._pool: asyncpg.Pool | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._opening = asyncio.Lock()
        self._sql = Statements.of(schema)
        self._renewals = Renewals(self._connect_alone, self._sql.renew)
        self._runs: dict[tuple[str, str], tuple[int, Session]] = {}
        """(user id, session id) -> (row, the session the last run took): the next run reads only
        the events stored since, so that a turn does not cost more as the session grows."""
        self._waiting: list[tuple[_Append, asyncio.Future[bool]]] = []
        self._flushing = 0
        self._alone = 0
        """How many of the next appends go one at a time: those of a batch that failed."""

    async def _connect(self) -> asyncpg.Pool:
        """The pool, opened on first use; it serves the event loop that opened it, and no other."""
        pool = self._pool
        if pool is not None:
            if self._loop is not asyncio.get_running_loop():
                raise RuntimeError(
                    f"{self!r} serves the event loop that opened its pool: use one store per event"
                    " loop, or close it (in its loop) before another uses it"
                )
            return pool
        async with self._opening:
            if self._pool is None:
                self._pool = await self._open()
                self._loop = asyncio.get_running_loop()
            return self._pool

    async def _open(self) -> asyncpg.Pool:
        import asyncpg

        where = f"cannot open session store {_redacted(self.url)}"
        try:
            pool = await asyncpg.create_pool(
                self.url, min_size=self._sizes[0], max_size=self._sizes[1], command_timeout=self.timeout
            )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, ValueError) as e:
            raise ConnectionError(f"{where}: {_reason(e)}") from e
        try:
            async with pool.acquire() as conn:
                await prepare(conn, self.schema, where)
        except BaseException:
            await pool.close()
            raise
        return pool

    async def get_or_create(self, user_id: str, session_id: str) -> Session:
        s = self.schema
        pool = await self._connect()
        await pool.execute(
            f"INSERT INTO {s}.sessions (user_id, id, updated_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
            user_id,
            session_id,
            time.time(),
        )
        session = await self.get(user_id, session_id)
        if session is None:  # deleted between the two statements
            raise missing_session(
                f"session store {_redacted(self.url)}", Session(id=session_id, user_id=user_id)
            )
        return session

    async def get(self, user_id: str, session_id: str) -> Session | None:
        pool = await self._connect()
        row = await pool.fetchrow(f"{self._sql.session} WHERE user_id = $1 AND id = $2", user_id, session_id)
        return None if row is None else _session(user_id, session_id, row)

    async def get_from_horizon(self, user_id: str, session_id: str) -> Session | None:
        pool = await self._connect()
        row = await pool.fetchrow(
            f"{self._sql.from_horizon} WHERE user_id = $1 AND id = $2", user_id, session_id
        )
        return None if row is None else _session(user_id, session_id, row[:3], row[3])

    async def append_event(self, session: Session, event: Event) -> None:
        if event.is_partial:
            return
        text = event_json(event)
        scoped = split_delta(event.actions.state_delta)
        changes = deleted = None
        if scoped.session:
            changes, deleted = _changes(scoped.session)
        row = (
            session.user_id,
            session.id,
            session.last_seq,
            event.timestamp,
            changes,
            deleted,
            session.lease,
            text,
            horizon_after(session, event),
        )
        pool = await self._connect()
        try:
            if scoped.user or scoped.app:
                stored = await self._append_scoped(pool, row, scoped)
            else:
                done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
                self._waiting.append((row, done))
                if self._flushing < self._sizes[1]:
                    self._flushing += 1
                    asyncio.get_running_loop().create_task(self._flush(pool))
                stored = await done
        except Exception as error:
            await self._confirm(pool, session, event, error)
        else:
            if not stored:
                await self._refused(pool, session, event)
        apply_event(session, event)

    async def _append_scoped(self, pool: asyncpg.Pool, row: _Append, scoped: ScopedDelta) -> bool:
        """An append that changes `user:` or `app:` state: alone, in one transaction with those changes."""
        async with pool.acquire() as conn, conn.transaction():
            if not await conn.fetch(self._sql.append, *([value] for value in row), [0]):
                return False
            for scope, owner, part in (("user", row[0], scoped.user), ("app", "", scoped.app)):
                if part:
                    changes = _changes(part)[0]
                    await conn.execute(
                        f"INSERT INTO {self.schema}.scoped_state AS t (scope, owner, state)"
                        " VALUES ($1, $2, $3::jsonb - $4::text[]) ON CONFLICT (scope, owner)"
                        " DO UPDATE SET state = (t.state || $3::jsonb) - $4::text[]",
                        scope,
                        owner,
                        changes,
                        [key for key, value in part.items() if value is None],
                    )
        return True

    async def user_state(self, user_id: str) -> dict[str, Any]:
        return await self._scoped("user", user_id)

    async def app_state(self) -> dict[str, Any]:
        return await self._scoped("app", "")

    async def _scoped(self, scope: str, owner: str) -> dict[str, Any]:
        pool = await self._connect()
        query = f"SELECT state::text FROM {self.schema}.scoped_state WHERE scope = $1 AND owner = $2"
        text = await pool.fetchval(query, scope, owner)
        state: dict[str, Any] = {} if text is None else pydantic_core.from_json(text)
        return state

    async def _flush(self, pool: asyncpg.Pool) -> None:
        """Send the appends waiting, in batches, until none is left."""
        try:
            while self._waiting:
                size = _BATCH
                if self._alone:
                    size, self._alone = 1, self._alone - 1
                batch, self._waiting = self._waiting[:size], self._waiting[size:]
                try:
                    columns = [list(c) for c in zip(*(row for row, _ in batch), strict=True)]
                    stored = {
                        n for (n,) in await pool.fetch(self._sql.append, *columns, list(range(len(batch))))
                    }
                except Exception as error:
                    if len(batch) == 1:
                        _settle(batch[0][1], error=error)
                    else:  # one bad append (or a lost connection) fails them all: each goes alone
                        self._waiting[:0] = batch
                        self._alone += len(batch)
                    continue
                for n, (_, done) in enumerate(batch):
                    _settle(done, n in stored)
        finally:
            self._flushing -= 1

    async def _refused(self, pool: asyncpg.Pool, session: Session, event: Event) -> None:
        """Raise why an append changed nothing: a missing session, a stale copy, or another's lease;
        unless the event is found at its place, stored by an earlier try whose answer was lost."""
        row = await pool.fetchrow(
            self._sql.check, session.user_id, session.id, session.lease, session.last_seq + 1
        )
        if row is None:
            raise missing_session(f"session store {_redacted(self.url)}", session)
        last_seq, _, found = row
        if found == event.id:
            return
        if last_seq != session.last_seq:
            raise stale(session, last_seq)
        raise busy(session.user_id, session.id)

    async def _confirm(self, pool: asyncpg.Pool, session: Session, event: Event, error: Exception) -> None:
        """After an append failed: return if the event is stored nonetheless (its answer was lost
        after the commit), raise `error` if it is not, and `UnconfirmedAppendError` if the server
        cannot be asked. A server that refused the statement rolled it back: nothing to ask."""
        import asyncpg

        if isinstance(error, asyncpg.PostgresError) and not str(error.sqlstate).startswith(_CUT):
            raise error
        args = (session.user_id, session.id)
        try:
            async with pool.acquire() as conn:
                await conn.execute(self._sql.wait, *args)
                found = await conn.fetchval(
                    self._sql.check, *args, session.lease, session.last_seq + 1, column=2
                )
        except Exception as asking:
            raise unconfirmed(session, event, error, asking) from error
        if found != event.id:
            raise error

    async def delete(self, user_id: str, session_id: str) -> None:
        pool = await self._connect()
        await pool.execute(
            f"DELETE FROM {self.schema}.sessions WHERE user_id = $1 AND id = $2", user_id, session_id
        )

    async def list_sessions(self, user_id: str) -> list[str]:
        pool = await self._connect()
        rows = await pool.fetch(
            f"SELECT id FROM {self.schema}.sessions WHERE user_id = $1 ORDER BY pk", user_id
        )
        return [row[0] for row in rows]

    async def acquire(
        self, user_id: str, session_id: str, owner: str, *, takeover: str | None = None
    ) -> Session:
        pool = await self._connect()
        key = (user_id, session_id)
        row_id, kept = self._runs.pop(key, (0, None))
        if kept is not None and (kept.lease is not None or not kept.events):
            kept = None  # still held (its release failed), or nothing to save by reading from it
        seen, last = (kept.last_seq, kept.events[-1].id) if kept is not None else (0, None)
        args = (time.time(), owner, self.lease_ttl, takeover, row_id, seen, last)
        row = await pool.fetchrow(self._sql.acquire, user_id, session_id, *args)
        if row is None:
            raise busy(user_id, session_id)
        state, updated_at, events, after, row_id, horizon = row
        if kept is not None and after == seen:  # the events since the last run
            session = kept
            session.events.extend(_EVENTS.validate_json(events))
            session.state.clear()
            session.state.update(pydantic_core.from_json(state))
            session.updated_at = updated_at
        else:  # the events after its horizon
            session = _session(user_id, session_id, (state, updated_at, events), horizon)
        session.lease = owner
        if len(self._runs) >= 1024:  # a bound: the oldest are read in full again
            del self._runs[next(iter(self._runs))]
        self._runs[key] = (row_id, session)
        return session

    async def renew(self, session: Session) -> None:
        await self._connect()  # the event loop's check, and the schema made
        owner = session.lease
        if owner is None or not await self._renewals.renew(
            session.user_id, session.id, owner, self.lease_ttl
        ):
            raise busy(session.user_id, session.id)

    async def _connect_alone(self) -> asyncpg.Connection:
        """A connection outside the pool (the renewals')."""
        import asyncpg

        conn: asyncpg.Connection = await asyncpg.connect(self.url, command_timeout=self.timeout)
        return conn

    async def release(self, session: Session) -> None:
        owner, session.lease = session.lease, None
        if owner is None:
            return
        pool = await self._connect()
        await pool.execute(
            f"UPDATE {self.schema}.sessions SET lease_owner = NULL, lease_expires = '-infinity'"
            " WHERE user_id = $1 AND id = $2 AND lease_owner = $3",
            session.user_id,
            session.id,
            owner,
        )

    async def close(self) -> None:
        """Close the pool's connections; a later call opens a new pool."""
        pool, self._pool, self._loop = self._pool, None, None
        self._runs.clear()
        await self._renewals.close()
        if pool is not None:
            await pool.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"PostgresSessionService({_redacted(self.url)!r}, schema={self.schema!r})"


_CUT = ("08", "57", "58", "XX")
"""Classes of server errors that cut a connection (or stop the server) rather than refuse a
statement: one may come after the commit."""


def _changes(delta: dict[str, Any]) -> tuple[str, str]:
    """A delta as the JSON the append statement takes: the values set, and the keys deleted."""
    changes = pydantic_core.to_json({k: v for k, v in delta.items() if v is not None}).decode()
    deleted = pydantic_core.to_json([k for k, v in delta.items() if v is None]).decode()
    return changes, deleted


def _settle(done: asyncio.Future[bool], stored: bool = False, *, error: Exception | None = None) -> None:
    if done.done():  # its append was cancelled
        return
    if error is not None:
        done.set_exception(error)
    else:
        done.set_result(stored)


def _session(user_id: str, session_id: str, row: Any, skipped: int = 0) -> Session:
    state, updated_at, events = row
    return Session(
        id=session_id,
        user_id=user_id,
        state=pydantic_core.from_json(state),
        events=_EVENTS.validate_json(events),
        updated_at=updated_at,
        skipped=skipped,
    )


def _redacted(url: str) -> str:
    """`url` without its password."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def _reason(error: BaseException) -> str:
    """The first line of what went wrong, without the exception's class when it says nothing more."""
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
