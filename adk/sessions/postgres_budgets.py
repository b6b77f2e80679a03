"""Budgets in PostgreSQL (`BudgetStore`): one row per scope key in a table of their own; the shared
state of breakers and rate limits (`SharedLimits`) in rows of the same table.

A reservation locks its row (`SELECT ... FOR UPDATE` in a transaction), checks the limits and
writes the new use before it commits, so two workers can never both take the last of a budget.
The table is created on first use beside the store's own tables, in its schema.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from adk.sessions.budgets import crossed

if TYPE_CHECKING:
    import asyncpg

__all__ = ["PostgresBudgets"]

T = TypeVar("T")


class PostgresBudgets:
    """The `BudgetStore` methods of `PostgresSessionService` (which gives `schema` and `_connect`)."""

    _budgets_table: str | None = None
    if TYPE_CHECKING:
        schema: str

        async def _connect(self) -> asyncpg.Pool: ...

    async def _budgets(self) -> tuple[asyncpg.Pool, str]:
        pool = await self._connect()
        table = f"{self.schema}.budgets"
        if self._budgets_table is None:
            async with pool.acquire() as conn, conn.transaction():
                # IF NOT EXISTS is not safe against a concurrent CREATE: workers take turns here.
                await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", f"adk:{self.schema}")
                await conn.execute(f"CREATE SCHEMA IF NOT EXISTS {self.schema}")
                await conn.execute(
                    f"CREATE TABLE IF NOT EXISTS {table} (scope_key TEXT PRIMARY KEY, used JSONB NOT NULL)"
                )
                await conn.execute(
                    f"CREATE TABLE IF NOT EXISTS {table}_once"
                    " (scope_key TEXT, once TEXT, PRIMARY KEY (scope_key, once))"
                )
            self._budgets_table = table
        return pool, table

    async def _change(
        self,
        key: str,
        amounts: Mapping[str, float],
        limits: Mapping[str, float] | None,
        once: str | None = None,
    ) -> str | None:
        pool, table = await self._budgets()
        async with pool.acquire() as conn, conn.transaction():
            await conn.execute(
                f"INSERT INTO {table} (scope_key, used) VALUES ($1, '{{}}') ON CONFLICT DO NOTHING", key
            )
            used: dict[str, Any] = json.loads(
                await conn.fetchval(f"SELECT used FROM {table} WHERE scope_key = $1 FOR UPDATE", key)
            )  # the row's lock orders this key's reservations, those made once included
            made = f"SELECT 1 FROM {table}_once WHERE scope_key = $1 AND once = $2"
            if once is not None and await conn.fetchval(made, key, once) is not None:
                return None  # made before, by this worker or another
            over = None if limits is None else crossed(used, amounts, limits)
            if over is None:
                for name, amount in amounts.items():
                    used[name] = used.get(name, 0.0) + amount
                await conn.execute(
                    f"UPDATE {table} SET used = $2 WHERE scope_key = $1", key, json.dumps(used)
                )
                if once is not None:
                    await conn.execute(
                        f"INSERT INTO {table}_once (scope_key, once) VALUES ($1, $2)", key, once
                    )
            return over

    async def update_shared(self, key: str, change: Callable[[dict[str, Any]], T]) -> T:
        pool, table = await self._budgets()
        async with pool.acquire() as conn, conn.transaction():
            await conn.execute(
                f"INSERT INTO {table} (scope_key, used) VALUES ($1, '{{}}') ON CONFLICT DO NOTHING", key
            )
            before = await conn.fetchval(f"SELECT used FROM {table} WHERE scope_key = $1 FOR UPDATE", key)
            state: dict[str, Any] = json.loads(before)
            result = change(state)
            if state != json.loads(before):  # a change that changed nothing writes nothing
                await conn.execute(
                    f"UPDATE {table} SET used = $2 WHERE scope_key = $1", key, json.dumps(state)
                )
            return result

    async def read_shared(self, key: str) -> dict[str, Any]:
        return await self.budget_used(key)

    async def reserve_budget(
        self, key: str, amounts: Mapping[str, float], limits: Mapping[str, float], once: str | None = None
    ) -> str | None:
        return await self._change(key, amounts, limits, once)

    async def adjust_budget(self, key: str, amounts: Mapping[str, float]) -> None:
        await self._change(key, amounts, None)

    async def budget_used(self, key: str) -> dict[str, float]:
        pool, table = await self._budgets()
        async with pool.acquire() as conn:
            text = await conn.fetchval(f"SELECT used FROM {table} WHERE scope_key = $1", key)
        return {} if text is None else dict(json.loads(text))
