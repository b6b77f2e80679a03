"""A `Budget`'s arguments, checked where it is made: one `ValueError` naming the wrong one."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias, get_args

from adk.sessions.budgets import BudgetStore

__all__ = ["LIMITS", "Scope", "UnknownModel", "check_limits", "check_options", "check_prices"]

Scope: TypeAlias = Literal["run", "session", "user", "app"]
UnknownModel: TypeAlias = Literal["refuse", "tokens_only"]
LIMITS = ("total_tokens", "input_tokens", "output_tokens", "usd", "model_calls", "tool_calls")
"""The limits a `Budget` takes by keyword; per tool, `tool:<name>`."""


def _number(value: object) -> bool:
    """A finite int or float: a bool is no number, and NaN or infinity would compare as no limit."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_limits(given: Mapping[str, Any], per_tool: Mapping[str, Any] | None) -> dict[str, float]:
    """The limits that are set, by name; a limit that is not a positive number is refused."""
    limits: dict[str, float] = {}
    for name, value in given.items():
        if value is None:
            continue
        if not _number(value) or value <= 0:
            raise ValueError(f"Budget: {name} must be a positive number, not {value!r}")
        limits[name] = float(value)
    if per_tool is not None:
        if not isinstance(per_tool, Mapping):
            raise ValueError(f"Budget: per_tool must be a mapping of tool name to a count, not {per_tool!r}")
        for tool, value in per_tool.items():
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"Budget: per_tool[{tool!r}] must be a positive whole number, not {value!r}")
            limits[f"tool:{tool}"] = float(value)
    return limits


def check_prices(prices: Mapping[str, Any] | None) -> dict[str, tuple[float, float]]:
    """Each model's (USD per 1M input tokens, per 1M output tokens): two numbers, not negative."""
    if prices is None:
        return {}
    if not isinstance(prices, Mapping):
        raise ValueError(
            f"Budget: prices must be a mapping of model name to a pair of numbers, not {prices!r}"
        )
    checked: dict[str, tuple[float, float]] = {}
    for model, pair in prices.items():
        if (
            not isinstance(pair, (tuple, list))
            or len(pair) != 2
            or not all(_number(p) and p >= 0 for p in pair)
        ):
            raise ValueError(
                f"Budget: prices[{model!r}] must be (usd_per_1M_input, usd_per_1M_output), two numbers "
                f"not below 0, not {pair!r}"
            )
        checked[str(model)] = (float(pair[0]) / 1e6, float(pair[1]) / 1e6)
    return checked


def check_options(scope: object, unknown_model: object, warn_at: object, store: object) -> None:
    """The scope, the unknown-model rule, `warn_at` in (0, 1], and a store for a stored scope."""
    if scope not in get_args(Scope):
        raise ValueError(f"Budget: scope must be one of 'run', 'session', 'user', 'app', not {scope!r}")
    if unknown_model not in get_args(UnknownModel):
        raise ValueError(f"Budget: unknown_model must be 'refuse' or 'tokens_only', not {unknown_model!r}")
    if not _number(warn_at) or not 0 < warn_at <= 1:  # type: ignore[operator]  # a number, checked
        raise ValueError(f"Budget: warn_at must be a number in (0, 1], not {warn_at!r}")
    if scope != "run" and not isinstance(store, BudgetStore):
        raise ValueError(
            f"Budget: scope={scope!r} needs store=, a session store that keeps budgets "
            f"(InMemorySessionService, SqliteSessionService, PostgresSessionService), not {store!r}"
        )
