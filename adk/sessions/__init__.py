"""Session stores: in-memory, SQLite (the embedded default) and PostgreSQL (for many workers)."""

import typing

from adk.sessions.base import Session, SessionService
from adk.sessions.memory import InMemorySessionService

if typing.TYPE_CHECKING:
    from adk.sessions.postgres import PostgresSessionService
    from adk.sessions.sqlite import SqliteSessionService

__all__ = [
    "InMemorySessionService",
    "PostgresSessionService",
    "Session",
    "SessionService",
    "SqliteSessionService",
    "open_store",
]

_LAZY = {"SqliteSessionService": "adk.sessions.sqlite", "PostgresSessionService": "adk.sessions.postgres"}

if not typing.TYPE_CHECKING:  # mypy would otherwise accept any name imported from adk.sessions

    def __getattr__(name: str) -> object:
        # sqlite3, asyncpg and their stores load on first use: not every program keeps sessions there.
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value


def open_store(where: str) -> SessionService:
    """The store that `where` names: a `postgresql://` URL, or else a SQLite file path."""
    if where.startswith(("postgresql:", "postgres:")):
        from adk.sessions.postgres import PostgresSessionService

        return PostgresSessionService(where)
    from adk.sessions.sqlite import SqliteSessionService

    return SqliteSessionService(where)
