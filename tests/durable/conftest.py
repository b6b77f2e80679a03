"""The durable tests' DBOS in this process: `started(runner)` launches it with `runner` on a SQLite
system database of the test's own; it is shut down after the test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
async def started(tmp_path: Path) -> AsyncIterator[Callable[[Any], Coroutine[Any, Any, None]]]:
    from adk.durable import launch, shutdown

    async def start(runner: Any) -> None:
        await launch(f"sqlite:///{tmp_path / 'dbos.sqlite'}", runners=[runner], executor_id="test")

    yield start
    shutdown()
