"""Session stores: in-memory, and SQLite (the embedded default that survives a restart)."""

from adk.sessions.base import Session, SessionService
from adk.sessions.memory import InMemorySessionService
from adk.sessions.sqlite import SqliteSessionService

__all__ = ["InMemorySessionService", "Session", "SessionService", "SqliteSessionService"]
