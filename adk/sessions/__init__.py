"""Session stores: in-memory, and SQLite (the embedded default that survives a restart)."""

import typing

from adk.sessions.base import Session, SessionService
from adk.sessions.memory import InMemorySessionService

if typing.TYPE_CHECKING:
    from adk.sessions.sqlite import SqliteSessionService

__all__ = ["InMemorySessionService", "Session", "SessionService", "SqliteSessionService"]

if not typing.TYPE_CHECKING:  # mypy would otherwise accept any name imported from adk.sessions

    def __getattr__(name: str) -> object:
        # sqlite3 and the SQLite store load on first use: not every program keeps sessions there.
        if name == "SqliteSessionService":
            from adk.sessions.sqlite import SqliteSessionService

            globals()[name] = SqliteSessionService
            return SqliteSessionService
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
