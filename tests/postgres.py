"""The test PostgreSQL server: its URL, whether it answers, and a private schema per test.

Tests that need it are skipped when it does not answer, except where ADK_POSTGRES_REQUIRED is
set (CI sets it), where they fail instead.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from adk.events import new_id

URL = os.environ.get("ADK_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


@cache
def _answers() -> str | None:
    """None if the server answers, else why not."""
    try:
        import asyncpg
    except ImportError as e:
        return f"asyncpg is not installed ({e})"

    async def ping() -> None:
        conn = await asyncpg.connect(URL, timeout=5)
        await conn.close()

    try:  # on a thread of its own: the caller may be inside an event loop
        with ThreadPoolExecutor(1) as thread:
            thread.submit(asyncio.run, ping()).result()
    except Exception as e:
        return f"no PostgreSQL at {URL}: {e}"
    return None


def require() -> None:
    """Skip the calling test when the server does not answer, unless it is required."""
    why = _answers()
    if why is not None:
        if os.environ.get("ADK_POSTGRES_REQUIRED"):
            pytest.fail(f"PostgreSQL is required here (ADK_POSTGRES_REQUIRED): {why}")
        pytest.skip(why)


def missing(what: str) -> None:
    """Skip the calling test for want of a server setting, unless PostgreSQL is required."""
    if os.environ.get("ADK_POSTGRES_REQUIRED"):
        pytest.fail(f"PostgreSQL is required here (ADK_POSTGRES_REQUIRED), and this test needs {what}")
    pytest.skip(f"needs {what}")


async def fetch(query: str, *args: object, url: str = URL) -> list[Any]:
    """Rows of one query, on a connection of its own (to the server at `url`)."""
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        return list(await conn.fetch(query, *args))
    finally:
        await conn.close()


async def execute(*statements: str) -> None:
    """Statements run in one transaction, on a connection of its own."""
    import asyncpg

    conn = await asyncpg.connect(URL)
    try:
        async with conn.transaction():
            for statement in statements:
                await conn.execute(statement)
    finally:
        await conn.close()


def schema_name() -> str:
    return f"adk_test_{new_id()[:12]}"


async def drop(schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(URL)
    try:
        await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    finally:
        await conn.close()


@asynccontextmanager
async def fresh_schema() -> AsyncIterator[str]:
    """A schema name no other test uses, dropped afterwards."""
    schema = schema_name()
    try:
        yield schema
    finally:
        await drop(schema)


class Cluster:
    """A PostgreSQL server of the tests' own: a throw-away data directory, on a free port of 127.0.0.1.

    For the tests that stop or restart a server: the suite never stops, restarts or reconfigures
    a server it did not start. As root (initdb refuses root), the server runs as the `postgres`
    user. `initdb` and `pg_ctl` are looked for in ADK_TEST_PG_BINDIR, on PATH, then in
    /usr/lib/postgresql/<newest>/bin.
    """

    def __init__(self, bindir: Path, user: str | None) -> None:
        self.bindir = bindir
        self.user = user
        self.home = Path(tempfile.mkdtemp(prefix="adk-test-pg-"))
        self.data = self.home / "data"
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port: int = probe.getsockname()[1]
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _do(self, tool: str, *args: str) -> None:
        done = subprocess.run(
            [str(self.bindir / tool), *args], user=self.user, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"{tool} {' '.join(args)}: {(done.stderr or done.stdout).strip()}")

    def init(self) -> None:
        if self.user is not None:
            shutil.chown(self.home, self.user)
        self._do("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")

    def start(self) -> None:
        options = f"-p {self.port} -k {self.home} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._do("pg_ctl", "-D", str(self.data), "-l", str(self.home / "log"), "-w", "-o", options, "start")

    def stop(self) -> None:
        self._do("pg_ctl", "-D", str(self.data), "-w", "-m", "fast", "stop")

    def require_password(self, role: str, password: str) -> None:
        """Make `role` log in with `password` (scram), ahead of the trust lines, and reload."""
        hba = self.data / "pg_hba.conf"
        hba.write_text(f"host all {role} 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
        self._do("pg_ctl", "-D", str(self.data), "reload")

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def remove(self) -> None:
        if self.running():
            self.stop()
        shutil.rmtree(self.home, ignore_errors=True)


def _bindir() -> Path | str:
    """Where initdb and pg_ctl are, or why they cannot be found."""
    named = os.environ.get("ADK_TEST_PG_BINDIR")
    found = shutil.which("initdb")
    installed = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=_version)
    places = ([Path(named)] if named else []) + ([Path(found).parent] if found else []) + installed[::-1]
    for where in places:
        if (where / "initdb").exists() and (where / "pg_ctl").exists():
            return where
    return (
        "initdb and pg_ctl (PostgreSQL's server programs), found neither in ADK_TEST_PG_BINDIR,"
        " on PATH nor in /usr/lib/postgresql"
    )


def _version(bindir: Path) -> list[int]:
    return [int(n) for n in bindir.parent.name.split(".") if n.isdigit()]


def private_cluster() -> Iterator[Cluster]:
    """A running cluster of the tests' own, removed afterwards (the body of a session fixture)."""
    bindir = _bindir()
    if isinstance(bindir, str):
        missing(bindir)
        return
    user = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            missing("a `postgres` user to run a private server as (initdb refuses root)")
            return
        user = "postgres"
    cluster = Cluster(bindir, user)
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        cluster.remove()
