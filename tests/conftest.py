"""Fixtures shared by every test module."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from adk.recovery import Testing
from adk.testing import set_testing


@pytest.fixture
def testing() -> Iterator[Testing]:
    """Retry waits off (and recorded in `.waits`) for the test; `usefixtures("testing")` for a module."""
    with set_testing(True) as switch:
        yield switch


@pytest.fixture(params=["sqlite", "postgres"])
async def shared_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[str, str]]:
    """A store location processes share: (a SQLite file, "") or (PostgreSQL's URL, a fresh schema)."""
    if request.param == "sqlite":
        yield str(tmp_path / "shared.sqlite3"), ""
        return
    from tests import postgres

    postgres.require()
    async with postgres.fresh_schema() as schema:
        yield postgres.URL, schema
