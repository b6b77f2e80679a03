"""Lease renewals of the PostgreSQL store, on a connection of their own.

A renewal that waited for one of the pool's connections would wait behind every append and
every lease taken (a pool of 2 under 2,000 runs): leases expired while their runs went on, and
another worker could take a session over. Renewals go on one connection that nothing else
uses, one statement each (each holds one session's row, never two, so none can deadlock with
the appends); they wait only for each other, and for an append of their own session that is
being written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncpg

__all__ = ["Renewals"]


class Renewals:
    """Renews leases one after another on a connection of its own, opened on first use and again
    after it is lost."""

    def __init__(self, connect: Callable[[], Awaitable[asyncpg.Connection]], statement: str) -> None:
        self._connect = connect
        self._statement = statement
        self._conn: asyncpg.Connection | None = None
        self._lock = asyncio.Lock()

    async def renew(self, user_id: str, session_id: str, owner: str, ttl: float) -> bool:
        """Extend `owner`'s lease of the session by `ttl` seconds; False if it no longer held it."""
        async with self._lock:
            conn = self._conn
            if conn is None or conn.is_closed():
                conn = self._conn = await self._connect()
            try:
                status = await conn.execute(self._statement, user_id, session_id, owner, ttl)
            except BaseException:
                self._conn = None  # in an unknown state: the next renewal opens another
                conn.terminate()
                raise
        return bool(status == "UPDATE 1")

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()
