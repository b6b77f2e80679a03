"""Real components for the durable tests: a PostgreSQL database of the test's own (DBOS's
system database and the sessions), and `adk worker` processes whose stderr lines are read."""

from __future__ import annotations

import asyncio
import os
import queue
import socket
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from adk.events import Message, new_id
from tests import postgres

ROOT = Path(__file__).resolve().parents[2]
AGENT = Path(__file__).with_name("crash_agent.py")
WAIT = float(os.environ.get("ADK_TEST_WAIT", "90"))
"""Seconds a line from a worker may take before the test fails (a worker that hangs)."""


def _admin(sql: str) -> None:
    import asyncpg

    async def go() -> None:
        conn = await asyncpg.connect(postgres.URL, timeout=10)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(go())


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on now (for an `adk serve` process)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def database() -> Iterator[str]:
    """A new database `adk_dbos_<random>` on the test server, dropped afterwards: its URL."""
    postgres.require()
    name = f"adk_dbos_{new_id()[:12]}"
    _admin(f'CREATE DATABASE "{name}"')
    parts = urllib.parse.urlsplit(postgres.URL)
    try:
        yield urllib.parse.urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def enqueue(url: str, runs: list[tuple[str, str, str]], agent: str = "crash") -> None:
    """Enqueue runs `(session, invocation, what the user says)` of user `u` in one transaction
    (a worker sees them all at once), from a process without the agent."""
    import sqlalchemy as sa
    from dbos import DBOSClient

    from adk.durable.runner import enqueue_options

    client = DBOSClient(system_database_url=url)
    engine = sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.begin() as conn:
            for session, inv, note in runs:
                options = enqueue_options(agent, "u", session, inv)
                client.enqueue_in_transaction(conn, options, agent, "u", session, Message.user(note), inv)
    finally:
        engine.dispose()
        client.destroy()


class Adk:
    """An `adk` process (`adk <arguments>`); its stderr lines come through `until`."""

    def __init__(self, arguments: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "adk", *arguments],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", **env},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.put(line.rstrip("\n"))
        self.lines.put("")  # the end

    def until(self, start: str, count: int = 1) -> list[str]:
        """Read lines until `count` of them start with `start`; fail naming what came instead."""
        found: list[str] = []
        while len(found) < count:
            try:
                line = self.lines.get(timeout=WAIT)
            except queue.Empty:
                raise AssertionError(f"no {start!r} from the worker; it said: {self.seen}") from None
            if line == "" and self.process.poll() is not None:
                raise AssertionError(f"the worker ended before {start!r}; it said: {self.seen}")
            self.seen.append(line)
            if line.startswith(start):
                found.append(line)
        return found

    def kill(self) -> None:
        """SIGKILL: nothing of the worker runs after this."""
        self.process.kill()
        self.process.wait()
        self._close()

    def _close(self) -> None:
        self.reader.join(WAIT)
        if self.process.stderr is not None:
            self.process.stderr.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=WAIT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._close()


class Served(Adk):
    """An `adk serve crash_agent.py --durable` process (or `adk web`), listening once made."""

    def __init__(self, url: str, env: dict[str, str], command: str = "serve") -> None:
        self.port = free_port()
        arguments = [command, str(AGENT), "--durable", "--sessions", url, "--system-database", url]
        super().__init__([*arguments, "--port", str(self.port)], env)
        self.until("INFO:     Uvicorn running")  # listening now

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"


class Worker(Adk):
    """An `adk worker` process for `crash_agent.py`."""

    def __init__(self, url: str, executor: str, env: dict[str, str], *extra: str) -> None:
        arguments = ["worker", str(AGENT), "--sessions", url, "--system-database", url]
        super().__init__([*arguments, "--executor-id", executor, *extra], env)
