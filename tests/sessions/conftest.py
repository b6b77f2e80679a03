"""`cluster`: a PostgreSQL server of the tests' own, for the tests that stop or restart one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import postgres


@pytest.fixture(scope="session")
def _cluster() -> Iterator[postgres.Cluster]:
    yield from postgres.private_cluster()


@pytest.fixture
def cluster(_cluster: postgres.Cluster) -> postgres.Cluster:
    """The private server, running (a test before may have stopped it)."""
    if not _cluster.running():
        _cluster.start()
    return _cluster
