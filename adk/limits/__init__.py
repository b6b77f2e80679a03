"""Limits as callbacks: budgets, timeouts, response rejection, idempotency keys, pacing.

Names load on first use (PEP 562): the lower floors (tools, recovery, agents) import
`adk.limits.timeouts` and must not pull the callbacks of this package in with it.
docs/limits.md states the rules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from adk.callbacks.decisions import BudgetExceeded, BudgetWarning
    from adk.errors import BudgetExceededError
    from adk.limits.budget import Budget
    from adk.limits.pacing import RateLimit
    from adk.sessions.budgets import BudgetStore

__all__ = [
    "Budget",
    "BudgetExceeded",
    "BudgetExceededError",
    "BudgetStore",
    "BudgetWarning",
    "RateLimit",
]

_WHERE = {
    "Budget": "adk.limits.budget",
    "BudgetExceeded": "adk.callbacks.decisions",
    "BudgetExceededError": "adk.errors",
    "BudgetStore": "adk.sessions.budgets",
    "BudgetWarning": "adk.callbacks.decisions",
    "RateLimit": "adk.limits.pacing",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'adk.limits' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
