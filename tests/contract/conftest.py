"""`store` runs the contract suite against every session store; `twin` opens another on its data."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from adk.sessions import InMemorySessionService, SessionService
from adk.sessions.postgres import PostgresSessionService
from adk.sessions.sqlite import SqliteSessionService
from tests import postgres

Opener = Callable[[], SessionService]


@pytest.fixture(params=["memory", "sqlite-file", "sqlite-memory", "postgres"])
async def opener(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Opener]:
    """Opens stores on one database: another process's view of it, where the store has one."""
    async with AsyncExitStack() as stack:
        opened: list[SessionService] = []

        def keep(store: SessionService) -> SessionService:
            opened.append(store)
            return store

        match request.param:
            case "memory":
                memory = InMemorySessionService()
                yield lambda: memory  # one process: its stores are one store
            case "sqlite-memory":
                private = SqliteSessionService(":memory:")
                stack.callback(private.close)
                yield lambda: private  # each instance has its own database
            case "sqlite-file":

                def sqlite() -> SessionService:
                    store = SqliteSessionService(tmp_path / "sessions.sqlite3")
                    stack.callback(store.close)
                    return keep(store)

                yield sqlite
            case _:
                postgres.require()
                schema = await stack.enter_async_context(postgres.fresh_schema())

                def pg() -> SessionService:
                    store = PostgresSessionService(postgres.URL, schema=schema)
                    stack.push_async_callback(store.close)
                    return keep(store)

                yield pg


@pytest.fixture
def store(opener: Opener) -> SessionService:
    return opener()


@pytest.fixture
def twin(opener: Opener, store: SessionService) -> SessionService:
    """Another store on `store`'s database (the same object where the store has no other view)."""
    return opener()
