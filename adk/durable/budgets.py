"""A stored `Budget`'s reads and writes as DBOS steps, so that a recovered run spends nothing twice.

The model call meters each attempt around the model's step (adk.agents.metering): the budget
reserves before it and settles after it. On recovery the run starts over and a replayed attempt
reserves and settles again; for a budget kept in a store (scope `session`, `user`, `app`), each
of the store's operations is therefore a step of its own (`adk.budget.<operation>:<name>`): a
replayed one hands back what it answered the first time, without touching the store, while the
budget's own arithmetic (the run's ledger on the invocation, its warnings) is done again, as for
a run-scoped budget. The core keeps its one path; only the store the budget writes to changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from adk.durable.checkpoint import step
from adk.limits.budget import Budget
from adk.sessions.budgets import BudgetStore

__all__ = ["DurableBudgetStore", "durable_budgets"]


class DurableBudgetStore:
    """A `BudgetStore` whose every call is a DBOS step (outside a workflow, simply made)."""

    def __init__(self, store: BudgetStore, name: str) -> None:
        self.store = store
        self.name = name
        """The budget's name, in each step's name."""

    def __repr__(self) -> str:
        return f"DurableBudgetStore({self.store!r})"

    async def reserve_budget(
        self, key: str, amounts: Mapping[str, float], limits: Mapping[str, float], once: str | None = None
    ) -> str | None:
        reserve, name = self.store.reserve_budget, f"adk.budget.reserve:{self.name}"
        over: str | None = await step(name, reserve, key, dict(amounts), dict(limits), once)
        return over

    async def adjust_budget(self, key: str, amounts: Mapping[str, float]) -> None:
        await step(f"adk.budget.adjust:{self.name}", self.store.adjust_budget, key, dict(amounts))

    async def budget_used(self, key: str) -> dict[str, float]:
        used: dict[str, float] = await step(f"adk.budget.used:{self.name}", self.store.budget_used, key)
        return used


def durable_budgets(objects: Iterable[object]) -> None:
    """Make, in place, the store of each stored `Budget` among `objects` a `DurableBudgetStore`;
    doing it twice does nothing more."""
    for owner in objects:
        if not isinstance(owner, Budget) or isinstance(owner.store, DurableBudgetStore | None):
            continue
        owner.store = DurableBudgetStore(owner.store, owner.name)
