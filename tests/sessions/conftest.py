"""A `store` fixture that runs the shared behaviour suite against every session store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from adk.sessions import InMemorySessionService, SessionService
from adk.sessions.sqlite import SqliteSessionService


@pytest.fixture(params=["memory", "sqlite-file", "sqlite-memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionService]:
    if request.param == "memory":
        yield InMemorySessionService()
        return
    path = tmp_path / "sessions.sqlite3" if request.param == "sqlite-file" else ":memory:"
    sqlite = SqliteSessionService(path)
    yield sqlite
    sqlite.close()
