"""A store that fails mid-run: the event loop keeps turning, and the run ends with an error event."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from adk.agents import LlmAgent
from adk.context import ToolContext
from adk.runner import Runner
from adk.sessions.sqlite import SqliteSessionService
from adk.testing import ScriptedModel
from tests._runtime import Tool, call, calls, summary

ROOT = Path(__file__).resolve().parents[2]

# Holds SQLite's write lock on a file from another process, from "lock" on stdin until "release".
_LOCKER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
sys.stdin.readline()
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


async def test_a_write_lock_held_by_another_process_neither_freezes_the_loop_nor_escapes_the_run(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.sqlite3"
    store = SqliteSessionService(path, timeout=0.3)
    locker = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _LOCKER,
        str(path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert locker.stdin is not None and locker.stdout is not None
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    async def lock_now(args: dict[str, Any], ctx: ToolContext) -> str:
        locker.stdin.write(b"lock\n")  # type: ignore[union-attr]
        assert await locker.stdout.readline() == b"locked\n"  # type: ignore[union-attr]
        return "locked"

    model = ScriptedModel([calls(call("lock_now", "c1")), "never stored"])
    runner = Runner(LlmAgent("root", model=model, tools=[Tool("lock_now", lock_now)]), session_service=store)
    tick = asyncio.create_task(ticker())
    try:
        async with asyncio.timeout(10):
            events = [e async for e in runner.run("u", "s", "hi")]
        while_locked = ticks
    finally:
        tick.cancel()
        locker.stdin.write(b"release\n")
        await locker.wait()

    assert [summary(e) for e in events] == [
        ("model", "user", "hi"),
        ("model", "root", "", [("lock_now", "{}")]),
        ("error", "root", "OperationalError", "store"),
    ]
    assert events[-1].error is not None and events[-1].error.message == "database is locked"
    # Each of the waits (the tool result, then the error event) let the loop turn all along.
    assert while_locked > 1000
    stored = await store.get("u", "s")
    assert stored is not None
    assert [e.id for e in stored.events] == [e.id for e in events[:2]]  # the error event could not be stored
    # The lock gone, the session runs again at once: the failed run's lease is taken over.
    assert [summary(e)[0] for e in [e async for e in runner.run("u", "s", "again")]][-1] == "done"
    store.close()
