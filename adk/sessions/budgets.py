"""The budget capability of a session store (adk.limits.Budget with scope `session`, `user`, `app`).

A `Ledger` holds, per limit name (`total_tokens`, `input_tokens`, `output_tokens`, `usd`,
`model_calls`, `tool_calls`, `tool:<name>`), what was spent plus what calls in flight reserved.
Its methods are synchronous: under asyncio no other task runs between the check and the update,
so concurrent reservations are exact. Stores implement `BudgetStore`: the in-memory store with
ledgers of its own (`MemoryBudgets`), PostgreSQL and SQLite with a table of their own.

The same stores keep the state that a `CircuitBreaker` or a `RateLimit` shares across worker
processes (`SharedLimits`): a small JSON object per key, in the same table, changed by a pure
function in one atomic read-modify-write (`update_shared`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar, runtime_checkable

__all__ = ["BudgetStore", "Ledger", "MemoryBudgets", "SharedLimits", "crossed"]

R = TypeVar("R")


def crossed(
    used: Mapping[str, float], amounts: Mapping[str, float], limits: Mapping[str, float]
) -> str | None:
    """The first limit that `amounts` added to `used` would cross, or None."""
    for name, amount in amounts.items():
        cap = limits.get(name)
        if cap is not None and used.get(name, 0.0) + amount > cap:
            return name
    return None


class Ledger:
    """A scope's use: spent plus reserved, per limit name; and the reservations made once."""

    __slots__ = ("once", "used")

    def __init__(self) -> None:
        self.used: dict[str, float] = {}
        self.once: set[str] = set()

    def reserve(
        self, amounts: Mapping[str, float], limits: Mapping[str, float], once: str | None = None
    ) -> str | None:
        """Add `amounts` unless one would cross its limit; return that limit's name (nothing added).
        With `once`, a reservation already made under that id is not made again (None)."""
        if once is not None and once in self.once:
            return None
        over = crossed(self.used, amounts, limits)
        if over is None:
            self.adjust(amounts)
            if once is not None:
                self.once.add(once)
        return over

    def adjust(self, amounts: Mapping[str, float]) -> None:
        """Add `amounts` (negative ones release), without a check: a settlement."""
        used = self.used
        for name, amount in amounts.items():
            used[name] = used.get(name, 0.0) + amount


@runtime_checkable
class BudgetStore(Protocol):
    """A session store that keeps budgets for the `session`, `user` and `app` scopes, so that
    they hold across runs and worker processes: `reserve_budget` is atomic in the store."""

    async def reserve_budget(
        self, key: str, amounts: Mapping[str, float], limits: Mapping[str, float], once: str | None = None
    ) -> str | None:
        """Add `amounts` to `key`'s use unless one crosses its limit: then return that limit's name.

        `once` names what is reserved (a tool call's idempotency key): a reservation already made
        under it for `key`, by any worker, is not made again, and None is returned. A call that a
        resumed run makes again on another worker is so counted once."""
        ...

    async def adjust_budget(self, key: str, amounts: Mapping[str, float]) -> None:
        """Add `amounts` (negative ones release) to `key`'s use."""
        ...

    async def budget_used(self, key: str) -> dict[str, float]:
        """`key`'s use so far: spent plus reserved, per limit name."""
        ...


@runtime_checkable
class SharedLimits(Protocol):
    """A session store that keeps the state of limits shared by worker processes (a
    `CircuitBreaker` or `RateLimit` given `store=`)."""

    async def update_shared(self, key: str, change: Callable[[dict[str, Any]], R]) -> R:
        """Apply `change` to `key`'s state (a JSON object, `{}` at first), which it changes in
        place, atomically: no other worker reads or writes the key in between. Its result."""
        ...

    async def read_shared(self, key: str) -> dict[str, Any]:
        """`key`'s state as last written (`{}` at first), read without taking its lock: for a
        check that changes nothing (is a circuit open?), which then writes nothing."""
        ...


class MemoryBudgets:
    """`BudgetStore` for a store in this process: one `Ledger` per key."""

    _budget_ledgers: dict[str, Ledger] | None = None
    _shared_limits: dict[str, dict[str, Any]] | None = None

    def _ledger(self, key: str) -> Ledger:
        ledgers = self._budget_ledgers
        if ledgers is None:
            ledgers = self._budget_ledgers = {}
        ledger = ledgers.get(key)
        if ledger is None:
            ledger = ledgers[key] = Ledger()
        return ledger

    async def reserve_budget(
        self, key: str, amounts: Mapping[str, float], limits: Mapping[str, float], once: str | None = None
    ) -> str | None:
        return self._ledger(key).reserve(amounts, limits, once)

    async def adjust_budget(self, key: str, amounts: Mapping[str, float]) -> None:
        self._ledger(key).adjust(amounts)

    async def budget_used(self, key: str) -> dict[str, float]:
        return dict(self._ledger(key).used)

    async def update_shared(self, key: str, change: Callable[[dict[str, Any]], R]) -> R:
        states = self._shared_limits
        if states is None:
            states = self._shared_limits = {}
        return change(states.setdefault(key, {}))

    async def read_shared(self, key: str) -> dict[str, Any]:
        states = self._shared_limits
        return {} if states is None else dict(states.get(key, {}))
