"""The test PostgreSQL server: its URL, whether it answers, and a private schema per test.

Tests that need it are skipped when it does not answer, except where ADK_POSTGRES_REQUIRED is
set (CI sets it), where they fail instead.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from functools import cache
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


async def fetch(query: str, *args: object) -> list[Any]:
    """Rows of one query, on a connection of its own."""
    import asyncpg

    conn = await asyncpg.connect(URL)
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
