"""What only the SQLite store promises: persistence, clear open errors, and surviving a kill."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from adk.events import Event
from adk.sessions.base import apply_state_delta
from adk.sessions.sqlite import SqliteSessionService
from tests.sessions.helpers import delta_event, rich_events

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"


async def test_a_new_instance_on_the_same_file_sees_everything(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    events = rich_events()
    async with SqliteSessionService(path) as first:
        session = await first.get_or_create("u", "s")
        for event in events:
            await first.append_event(session, event)
        await first.append_event(await first.get_or_create("u", "doomed"), delta_event(1, x=1))
        await first.get_or_create("u2", "t")
        await first.delete("u", "doomed")

    async with SqliteSessionService(str(path)) as second:
        stored = await second.get("u", "s")
        assert stored is not None
        assert stored.events == events
        assert stored.state == session.state
        assert stored.updated_at == events[-1].timestamp
        assert await second.list_sessions("u") == ["s"]
        assert await second.list_sessions("u2") == ["t"]
        assert await second.get("u", "doomed") is None

        await second.append_event(stored, delta_event(99, more=True))

    async with SqliteSessionService(path) as third:
        again = await third.get("u", "s")
        assert again is not None
        assert [e.id for e in again.events][-1] == "e99"
        assert again.state["more"] is True


async def test_a_store_written_by_schema_1_is_migrated_and_its_events_load(tmp_path: Path) -> None:
    # Written by adk before sequence-checked appends and leases, with the events in v1_events.json.
    path = tmp_path / "v1.sqlite3"
    shutil.copy(FIXTURES / "v1.sqlite3", path)
    written = [Event.model_validate(e) for e in json.loads((FIXTURES / "v1_events.json").read_text())]

    async with SqliteSessionService(path) as store:
        session = await store.acquire("alice", "s1", "run-1")
        assert session.events == written
        assert session.state == {"prefs": {"units": "si", "nested": [1, 2.5, None, {"x": True}]}}
        assert await store.list_sessions("alice") == ["s1", "empty"]
        await store.append_event(session, delta_event(7, more=True))

    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone() == (4,)
    finally:
        conn.close()
    async with SqliteSessionService(path) as again:
        stored = await again.get("alice", "s1")
        assert stored is not None
        assert [e.id for e in stored.events] == [e.id for e in written] + ["e7"]


async def test_memory_databases_are_private_to_their_instance() -> None:
    async with SqliteSessionService(":memory:") as one, SqliteSessionService(":memory:") as two:
        await one.get_or_create("u", "s")
        assert await two.list_sessions("u") == []


async def test_the_default_path_is_a_file_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    async with SqliteSessionService() as store:
        await store.get_or_create("u", "s")
    assert (tmp_path / "adk_sessions.sqlite3").is_file()


async def test_the_database_is_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    SqliteSessionService(path).close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        conn.close()


async def test_leaving_the_context_closes_the_connection(tmp_path: Path) -> None:
    async with SqliteSessionService(tmp_path / "s.sqlite3") as store:
        pass
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        await store.get("u", "s")
    store.close()  # closing again is harmless


def test_a_path_that_cannot_be_opened_is_named(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "dir" / "s.sqlite3"
    message = f"cannot open session store '{path}': unable to open database file"
    with pytest.raises(sqlite3.OperationalError, match=re.escape(message)):
        SqliteSessionService(path)


def test_a_file_that_is_not_a_database_is_named(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a database, just some notes\n" * 100)
    message = f"cannot open session store '{path}': file is not a database"
    with pytest.raises(sqlite3.DatabaseError, match=re.escape(message)):
        SqliteSessionService(path)


def test_a_database_with_foreign_tables_of_the_same_names_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE sessions (token TEXT)")
    conn.commit()
    conn.close()
    message = f"cannot open session store '{path}': it already has tables not made by adk: sessions"
    with pytest.raises(sqlite3.DatabaseError, match=re.escape(message)):
        SqliteSessionService(path)


def test_a_database_of_another_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 7")
    conn.close()
    message = f"'{path}': its schema version is 7, and this adk reads versions up to 4"
    with pytest.raises(sqlite3.DatabaseError, match=re.escape(message)):
        SqliteSessionService(path)


async def test_a_state_value_json_cannot_hold_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    async with SqliteSessionService(tmp_path / "s.sqlite3") as store:
        session = await store.get_or_create("u", "s")
        await store.append_event(session, delta_event(1, ok=1))
        bad = delta_event(2, fine="yes", handle=object())

        message = r"cannot store event e2: state_delta\['handle'\] holds a object, which JSON cannot"
        with pytest.raises(TypeError, match=message):
            await store.append_event(session, bad)

        assert session.state == {"ok": 1}
        stored = await store.get("u", "s")
        assert stored is not None
        assert (stored.state, [e.id for e in stored.events]) == ({"ok": 1}, ["e1"])


async def test_state_is_stored_as_json(tmp_path: Path) -> None:
    async with SqliteSessionService(tmp_path / "s.sqlite3") as store:
        await store.append_event(await store.get_or_create("u", "s"), delta_event(1, pair=(1, 2)))
        stored = await store.get("u", "s")
    assert stored is not None
    assert stored.state == {"pair": [1, 2]}


_CHILD = """
import asyncio, sys
from adk.events import Choice, Event, EventActions, Message
from adk.sessions.sqlite import SqliteSessionService

path, kill_at, stage = sys.argv[1], int(sys.argv[2]), sys.argv[3]
current = 0

def event(i: int) -> Event:
    delta = {"count": i, f"k{i}": "x" * (i % 97), f"k{i - 50}": None}
    return Event.new(
        "inv", "child", id=f"e{i}",
        choices=[Choice(message=Message.assistant("y" * 3000))],
        actions=EventActions(state_delta=delta),
    )

def trace(sql: str) -> None:
    if current == kill_at and sql.startswith(stage):
        print("stopped", current, flush=True)
        sys.stdin.readline()  # hold still, about to run `stage`, until killed

async def main() -> None:
    global current
    store = SqliteSessionService(path)
    store._conn.set_trace_callback(trace)  # private, but the only way to stop at a statement
    session = await store.get_or_create("u", "s")
    events = [event(i) for i in range(1, 5001)]  # built beforehand: the loop is all appending
    for current, e in enumerate(events, 1):
        print("begin", current, flush=True)
        await store.append_event(session, e)
        print("done", current, flush=True)

asyncio.run(main())
"""


def _kill_writer(path: Path, kill_at: int, stage: str) -> int:
    """Run `_CHILD` on `path` and SIGKILL it while it appends event `kill_at`; the commits it reported.

    With a `stage` (the start of an SQL statement) the writer is killed just before running it;
    with `anywhere`, as soon as it says it begins the append.
    """
    with subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path), str(kill_at), stage],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as child:
        assert child.stdout is not None
        committed = 0
        for line in child.stdout:
            said, n = line.split()
            if said == "done":
                committed = int(n)
            elif said == "stopped" or (stage == "anywhere" and int(n) == kill_at):
                break
        child.kill()  # SIGKILL on POSIX: no cleanup of any kind
        _, err = child.communicate()
    assert committed == kill_at - 1, f"the writer stopped early: {err}"
    return committed


@pytest.mark.parametrize(
    ("stage", "kill_at"),
    [
        ("INSERT INTO events", 1),
        ("UPDATE sessions", 1),
        ("COMMIT", 1),
        ("INSERT INTO events", 300),
        ("UPDATE sessions", 300),
        ("COMMIT", 300),
        ("anywhere", 150),
        ("anywhere", 600),
    ],
)
async def test_a_killed_writer_leaves_a_committed_prefix_with_matching_state(
    tmp_path: Path, stage: str, kill_at: int
) -> None:
    path = tmp_path / "s.sqlite3"
    committed = _kill_writer(path, kill_at, stage)

    async with SqliteSessionService(path) as store:
        stored = await store.get("u", "s")
        assert stored is not None
        ids = [e.id for e in stored.events]
        assert len(ids) >= committed  # nothing that was committed is lost
        assert ids == [f"e{i}" for i in range(1, len(ids) + 1)]  # a prefix, nothing half-written
        replayed: dict[str, object] = {}
        for event in stored.events:
            apply_state_delta(replayed, event.actions.state_delta)
        assert stored.state == replayed
        assert stored.state.get("count", 0) == len(ids)
        if stage != "anywhere":
            assert len(ids) == committed  # killed inside the transaction: it left no trace

        # The store opens cleanly and takes writes where the writer stopped.
        await store.append_event(stored, Event.new("inv", "after", id="next"))
        again = await store.get("u", "s")
        assert again is not None
        assert [e.id for e in again.events][-1] == "next"

    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        conn.close()


async def test_a_store_written_before_events_became_dataclasses_loads_unchanged(tmp_path: Path) -> None:
    # Written by adk when events were pydantic models (schema 2, with decisions); the JSON lines are
    # each event's `model_dump_json()` then, which today's events must reproduce byte for byte.
    path = tmp_path / "v2.sqlite3"
    shutil.copy(FIXTURES / "v2.sqlite3", path)
    lines = (FIXTURES / "v2_events.jsonl").read_text(encoding="utf-8").splitlines()
    written = [Event.model_validate_json(line) for line in lines]

    assert [e.model_dump_json() for e in written] == lines
    assert written[-1].decisions and written[1].tool_calls
    async with SqliteSessionService(path) as store:
        session = await store.acquire("alice", "s1", "run-1")
        assert session.events == written
        assert session.state == {"prefs": {"units": "si", "nested": [1, 2.5, None, {"x": True}]}}
        assert await store.list_sessions("alice") == ["s1", "empty"]
        await store.append_event(session, delta_event(7, more=True))
    async with SqliteSessionService(path) as again:
        stored = await again.get("alice", "s1")
        assert stored is not None
        assert stored.events[:-1] == written
        assert (stored.events[-1].id, stored.state["more"]) == ("e7", True)


async def test_a_run_reads_what_others_stored_since_the_last_run_took_the_session(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    async with SqliteSessionService(path) as store, SqliteSessionService(path) as other:
        first = await store.acquire("u", "s", "run-1")
        await store.append_event(first, delta_event(1, a=1))
        await store.release(first)
        theirs = await other.acquire("u", "s", "run-x")
        await other.append_event(theirs, delta_event(2, b=2))
        await other.release(theirs)

        second = await store.acquire("u", "s", "run-2")
        assert [e.id for e in second.events] == ["e1", "e2"]
        assert second.state == {"a": 1, "b": 2}
        await store.append_event(second, delta_event(3, a=None))
        await store.release(second)

        await other.delete("u", "s")  # and made again by another writer: read in full
        again = await other.acquire("u", "s", "run-y")
        await other.append_event(again, delta_event(9, c=3))
        await other.release(again)
        third = await store.acquire("u", "s", "run-3")
        assert ([e.id for e in third.events], third.state) == (["e9"], {"c": 3})
        assert third.events == (await other.get("u", "s")).events  # type: ignore[union-attr]
