"""Budgets in SQLite (`BudgetStore`): one row per scope key in a table of their own; the shared
state of breakers and rate limits (`SharedLimits`) in rows of the same table.

A reservation reads, checks and writes in one `BEGIN IMMEDIATE` transaction, which holds the
database's write lock: processes sharing the file reserve one after another, never both the last
of a budget. The table is created on first use.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from sqlite3 import Connection
from typing import TYPE_CHECKING, Any, TypeVar

from adk.sessions.budgets import crossed

__all__ = ["SqliteBudgets"]

T = TypeVar("T")
_TABLE = "CREATE TABLE IF NOT EXISTS budgets (scope_key TEXT PRIMARY KEY, used TEXT NOT NULL) WITHOUT ROWID"
_ONCE = (
    "CREATE TABLE IF NOT EXISTS budgets_once (scope_key TEXT, once TEXT, PRIMARY KEY (scope_key, once))"
    " WITHOUT ROWID"
)


class SqliteBudgets:
    """The `BudgetStore` methods of `SqliteSessionService` (which gives `_call` and `_transaction`)."""

    if TYPE_CHECKING:

        async def _call(self, fn: Callable[..., T], *args: Any) -> T: ...

        def _transaction(self, begin: str = "BEGIN IMMEDIATE") -> AbstractContextManager[Connection]: ...

    def _budget_change(
        self,
        key: str,
        amounts: Mapping[str, float],
        limits: Mapping[str, float] | None,
        once: str | None = None,
    ) -> str | None:
        with self._transaction() as conn:
            conn.execute(_TABLE)
            if once is not None:
                conn.execute(_ONCE)
                made = "SELECT 1 FROM budgets_once WHERE scope_key = ? AND once = ?"
                if conn.execute(made, (key, once)).fetchone() is not None:
                    return None  # made before, by this worker or another
            row = conn.execute("SELECT used FROM budgets WHERE scope_key = ?", (key,)).fetchone()
            used: dict[str, float] = {} if row is None else json.loads(row[0])
            over = None if limits is None else crossed(used, amounts, limits)
            if over is None:
                for name, amount in amounts.items():
                    used[name] = used.get(name, 0.0) + amount
                conn.execute(
                    "INSERT INTO budgets (scope_key, used) VALUES (?, ?)"
                    " ON CONFLICT (scope_key) DO UPDATE SET used = excluded.used",
                    (key, json.dumps(used)),
                )
                if once is not None:
                    conn.execute("INSERT INTO budgets_once (scope_key, once) VALUES (?, ?)", (key, once))
            return over

    def _shared_change(self, key: str, change: Callable[[dict[str, Any]], T]) -> T:
        with self._transaction() as conn:
            conn.execute(_TABLE)
            row = conn.execute("SELECT used FROM budgets WHERE scope_key = ?", (key,)).fetchone()
            before = "{}" if row is None else row[0]
            state: dict[str, Any] = json.loads(before)
            result = change(state)
            if state != json.loads(before):  # a change that changed nothing writes nothing
                conn.execute(
                    "INSERT INTO budgets (scope_key, used) VALUES (?, ?)"
                    " ON CONFLICT (scope_key) DO UPDATE SET used = excluded.used",
                    (key, json.dumps(state)),
                )
            return result

    def _budget_read(self, key: str) -> dict[str, float]:
        with self._transaction("BEGIN") as conn:
            conn.execute(_TABLE)
            row = conn.execute("SELECT used FROM budgets WHERE scope_key = ?", (key,)).fetchone()
        return {} if row is None else dict(json.loads(row[0]))

    async def reserve_budget(
        self, key: str, amounts: Mapping[str, float], limits: Mapping[str, float], once: str | None = None
    ) -> str | None:
        return await self._call(self._budget_change, key, amounts, limits, once)

    async def adjust_budget(self, key: str, amounts: Mapping[str, float]) -> None:
        await self._call(self._budget_change, key, amounts, None)

    async def budget_used(self, key: str) -> dict[str, float]:
        return await self._call(self._budget_read, key)

    async def update_shared(self, key: str, change: Callable[[dict[str, Any]], T]) -> T:
        return await self._call(self._shared_change, key, change)

    async def read_shared(self, key: str) -> dict[str, Any]:
        return await self._call(self._budget_read, key)
