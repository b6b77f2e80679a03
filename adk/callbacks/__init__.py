"""The callback core: tagged results, registration, the chains, and the decisions they record.

The per-hook protocols and result aliases, for annotations, are in `adk.types`.
"""

from adk.callbacks.base import Callback
from adk.callbacks.chain import run_after, run_before, run_chain, run_on_error
from adk.callbacks.decisions import (
    Approved,
    BudgetExceeded,
    BudgetWarning,
    Compacted,
    Decision,
    Deferred,
    FellBack,
    Halted,
    Paced,
    Refused,
    Rejected,
    Replaced,
    Retried,
)
from adk.callbacks.registry import HOOKS, Callbacks, Hook, HookName, declare_hooks
from adk.callbacks.results import Cont, Defer, Fallback, Halt, Raise, Retry

__all__ = [
    "Approved",
    "BudgetExceeded",
    "BudgetWarning",
    "Callback",
    "Callbacks",
    "Compacted",
    "Cont",
    "Decision",
    "Defer",
    "Deferred",
    "Fallback",
    "FellBack",
    "HOOKS",
    "Halt",
    "Halted",
    "Hook",
    "HookName",
    "Raise",
    "Paced",
    "Refused",
    "Rejected",
    "Replaced",
    "Retried",
    "Retry",
    "declare_hooks",
    "run_after",
    "run_before",
    "run_chain",
    "run_on_error",
]
