"""`RunUse`: what one run has used of a `Budget`, kept on the run's invocation.

Every model attempt under a budget adds its reservation to the run's use and settles it, so the
model calls' quantities are plain attributes (a dict's keys cost twice as much to read and write);
the tool calls' counts (`tool_calls`, `tool:<name>`) are in a dict, as their names are the tools'.
A stored scope's use (session, user, app) is the store's; the run keeps its own share here too.
"""

from __future__ import annotations

from collections.abc import Mapping

from adk.sessions.budgets import crossed

__all__ = ["RunUse"]

_MODEL = frozenset(("model_calls", "input_tokens", "output_tokens", "usd"))
"""The limits a model call adds to that are `RunUse`'s attributes; `total_tokens` is derived."""


class RunUse:
    """Spent plus reserved, per limit: the model calls' as attributes, the tool calls' in `tools`;
    `usd` is shown (`as_dict`) only when the budget has prices; `total_tokens` is always input
    plus output (every amount a budget adds keeps it so), one addition less per update.
    `warned`: the limits whose warning this run gave."""

    __slots__ = (
        "input_tokens",
        "model_calls",
        "output_tokens",
        "priced",
        "tools",
        "usd",
        "warned",
    )

    def __init__(self, priced: bool, used: Mapping[str, float] | None = None) -> None:
        self.model_calls = self.input_tokens = self.output_tokens = self.usd = 0.0
        self.priced = priced
        self.tools: dict[str, float] | None = None
        """The tool calls' counts, once there is one."""
        self.warned: tuple[str, ...] = ()
        if used:
            self.add(used)

    @property
    def total_tokens(self) -> float:
        """The input tokens plus the output tokens."""
        return self.input_tokens + self.output_tokens

    def get(self, name: str) -> float:
        """The use of the limit `name`."""
        if name in _MODEL or name == "total_tokens":
            value: float = getattr(self, name)
            return value
        return 0.0 if self.tools is None else self.tools.get(name, 0.0)

    def as_dict(self) -> dict[str, float]:
        """The use by limit name: the model calls' four, `usd` with prices, the tools' counted so far."""
        used = {
            "model_calls": self.model_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
        }
        if self.priced:
            used["usd"] = self.usd
        if self.tools is not None:
            used.update(self.tools)
        return used

    def add(self, amounts: Mapping[str, float]) -> None:
        """Add `amounts` (negative ones release), without a check: a settlement or a release."""
        for name, amount in amounts.items():
            if name in _MODEL:
                setattr(self, name, getattr(self, name) + amount)
            elif name != "total_tokens":  # derived: its amount is the input's plus the output's
                tools = self.tools = self.tools or {}
                tools[name] = tools.get(name, 0.0) + amount

    def reserve(self, amounts: Mapping[str, float], limits: Mapping[str, float]) -> str | None:
        """Add `amounts` unless one would cross its limit; return that limit's name (nothing added)."""
        over = crossed(self.as_dict(), amounts, limits)
        if over is None:
            self.add(amounts)
        return over
