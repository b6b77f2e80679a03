"""`cluster`: a PostgreSQL server of the tests' own, for the tests that stop or restart one;
`worker`: opens a store on one database (SQLite, PostgreSQL), as a new worker would."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from adk.sessions import SessionService
from adk.sessions.postgres import PostgresSessionService
from adk.sessions.sqlite import SqliteSessionService
from tests import postgres

Opener = Callable[[], SessionService]


@pytest.fixture(scope="session")
def _cluster() -> Iterator[postgres.Cluster]:
    yield from postgres.private_cluster()


@pytest.fixture
def cluster(_cluster: postgres.Cluster) -> postgres.Cluster:
    """The private server, running (a test before may have stopped it)."""
    if not _cluster.running():
        _cluster.start()
    return _cluster


@pytest.fixture(params=["sqlite", "postgres"])
async def worker(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Opener]:
    """Opens a store on one database: each a new worker, which has read no session yet."""
    async with AsyncExitStack() as stack:
        if request.param == "sqlite":

            def sqlite() -> SessionService:
                store = SqliteSessionService(tmp_path / "s.sqlite3")
                stack.callback(store.close)
                return store

            yield sqlite
            return
        postgres.require()
        schema = await stack.enter_async_context(postgres.fresh_schema())

        def pg() -> SessionService:
            store = PostgresSessionService(postgres.URL, schema=schema)
            stack.push_async_callback(store.close)
            return store

        yield pg
