"""What a hook is: its name, the chain that runs it, and what it may hand back (`Hook`).

The registry (registry.py) declares hooks and resolves callbacks' implementations of them; the
chain loop (chain.py) reads a hook's `plan` before it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Literal, TypeAlias

__all__ = ["AFTER", "BEFORE", "ON_ERROR", "REPLACE", "Hook"]

BEFORE: Final = 0
"""A `before` chain threads the context through `Cont`; a `Halt` answers."""
AFTER: Final = 1
"""An `after` chain folds a value: each hook gets the previous one's output."""
ON_ERROR: Final = 2
"""An `on_error` chain threads the error through `Raise`; a `Retry` or `Fallback` answers."""
REPLACE: Final = 3
"""A `replace` chain offers one value to each hook: None keeps it, anything else answers."""

_CHAINS: Final = ("before", "after", "on_error", "replace")
_PARAMETERS: Final = ("(ctx)", "(value, ctx)", "(error, ctx)", "(value, ctx)")

_Types: TypeAlias = "type | tuple[type, ...]"


class Hook:
    """One hook: its name, the chain that runs it, and what the values it hands back may be.

    `values` is what a `Halt` or `Fallback` may carry, or what an `after` or `replace` hook may
    return: a type, a tuple of types, None for anything, or a function giving the types when they
    live in an optional package that is imported only when the hook first answers. `allowed` says
    the same in words, for error messages ("an LlmResponse").

    `defer=True` lets a `before` hook answer `Defer(reason)` (`before_tool`: wait for approval).
    Three options shape the run-level and agent-error hooks: `unary` calls the hook with one
    argument (`after_run(ctx)`: a `replace` chain offered the context); `halt` lets an `after`
    hook stop its fold with a `Halt` carrying one of these types, described in words
    (`on_user_message`); `retry=False` refuses a `Retry` from an `on_error` hook (`on_agent_error`).
    """

    __slots__ = (
        "_load",
        "_types",
        "allowed",
        "anything",
        "chain",
        "defer",
        "halt",
        "name",
        "plan",
        "retry",
        "unary",
    )

    def __init__(
        self,
        name: str,
        chain: Literal[0, 1, 2, 3],
        values: _Types | Callable[[], _Types] | None = None,
        allowed: str = "anything",
        *,
        unary: bool = False,
        halt: tuple[_Types, str] | None = None,
        retry: bool = True,
        defer: bool = False,
    ) -> None:
        self.name = name
        self.chain = chain
        self.allowed = allowed
        self.unary = unary or chain == BEFORE
        """Whether the hook is called with one argument, `(ctx)`."""
        self.halt = halt
        """For an `after` hook that may stop its fold: what the `Halt` may carry, and in words."""
        self.retry = retry
        """For an `on_error` hook: whether it may answer `Retry`."""
        self.defer = defer
        """For a `before` hook: whether it may answer `Defer` (wait for a person's approval)."""
        self._load: Callable[[], _Types] | None = None
        self._types: tuple[type, ...] | None = None
        if isinstance(values, type):
            self._types = (values,)
        elif isinstance(values, tuple):
            self._types = values
        elif values is not None:
            self._load = values
        self.anything = values is None
        """Whether any value may be handed back."""
        self.plan: tuple[bool, bool, bool, bool, type | None, bool, bool] = self._plan()
        """What the chain loop reads before it starts: `(before, after, on_error, replace, exact,
        anything, unary)`, where `exact` is the type most values have, tested with `type(x) is exact`."""

    def _plan(self) -> tuple[bool, bool, bool, bool, type | None, bool, bool]:
        chain, exact = self.chain, self._types[0] if self._types else None
        return (
            chain == BEFORE,
            chain == AFTER,
            chain == ON_ERROR,
            chain == REPLACE,
            exact,
            self.anything,
            self.unary,
        )

    @property
    def parameters(self) -> str:
        """What the hook is called with, in words: `(ctx)` or `(value, ctx)`."""
        return "(ctx)" if self.unary else _PARAMETERS[self.chain]

    @property
    def arity(self) -> int:
        """How many positional arguments the hook is called with."""
        return 1 if self.unary else 2

    @property
    def answers(self) -> str:
        """The results a `before` or `on_error` hook may return, in words."""
        if self.chain == BEFORE:
            return "Cont, Halt or Defer" if self.defer else "Cont or Halt"
        return "Retry, Fallback or Raise" if self.retry else "Fallback or Raise"

    def fits(self, value: object) -> bool:
        """Whether `value` may be handed back as this hook's value."""
        if self._load is not None:
            loaded = self._load()
            self._types = loaded if isinstance(loaded, tuple) else (loaded,)
            self._load = None
            self.plan = self._plan()
        return self._types is None or isinstance(value, self._types)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hook) and (other.name, other.chain, other.allowed) == (
            self.name,
            self.chain,
            self.allowed,
        )

    def __hash__(self) -> int:
        return hash((self.name, self.chain))

    def __repr__(self) -> str:
        return f"Hook({self.name!r}, {_CHAINS[self.chain]}, {self.allowed!r})"
