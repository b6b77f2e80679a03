"""Tagged results that hooks return, after Elixir's `{:cont, ctx}` / `{:halt, value}` tuples.

Each hook's return type is a union of exactly the results it may give, so `match` with
`assert_never` over a hook's result is exhaustive and mypy rejects a result the hook may not
return.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import FrozenInstanceError, dataclass
from typing import Generic, TypeAlias, TypeVar

C = TypeVar("C")
V = TypeVar("V")
C_co = TypeVar("C_co", covariant=True)
V_co = TypeVar("V_co", covariant=True)

__all__ = [
    "BeforeResult",
    "Cont",
    "Defer",
    "ErrorResult",
    "Fallback",
    "Halt",
    "Raise",
    "Retry",
]


@dataclass(frozen=True, slots=True)
class Cont(Generic[C_co]):
    """Go on with `ctx`: the next callback receives it, and the guarded call uses it."""

    ctx: C_co

    def __init__(self, ctx: C_co) -> None:
        # Nearly every hook call builds a Cont: setting the slot through its descriptor costs
        # a quarter less than the generated frozen __init__, which goes through object.__setattr__.
        _set_cont_ctx(self, ctx)


_set_cont_ctx: Callable[[Cont[object], object], None] = Cont.__dict__["ctx"].__set__


@dataclass(frozen=True, slots=True)
class Halt(Generic[V_co]):
    """Stop the chain; `value` stands in for the guarded call's output."""

    value: V_co


@dataclass(frozen=True, slots=True)
class Defer:
    """`before_tool` only: the call waits for a person's approval; the run pauses until it is answered.

    A `Halt` beats a `Defer` (the call does not run, so nobody need be asked); on a call already
    approved, a `Defer` goes on as `Cont(ctx)`: the approval answers it.
    """

    reason: str


@dataclass(frozen=True, slots=True)
class Retry(Generic[C_co]):
    """Try the failed call again with `ctx` (a changed request, arguments or model).

    `delay` (seconds) overrides the retry policy's wait for this attempt.
    """

    ctx: C_co
    delay: float | None = None


@dataclass(frozen=True, slots=True)
class Fallback(Generic[V_co]):
    """Use `value` in place of the failed call's output."""

    value: V_co


@dataclass(frozen=True, slots=True)
class Raise:
    """Pass `error` (possibly a replacement) on to the next callback; the last one propagates."""

    error: Exception


def _refuse(self: object, name: str, value: object = None) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


# Before Python 3.13 the `__setattr__` and `__delattr__` that `frozen=True, slots=True` generates
# raise TypeError for a name that is not a field, which breaks `Cont[int](1)`: typing sets
# `__orig_class__` on the new instance and expects an AttributeError. (mypy forbids assigning
# methods, hence the ignores.)
for _result in (Cont, Halt, Defer, Retry, Fallback, Raise):
    _result.__setattr__ = _refuse  # type: ignore[method-assign]
    _result.__delattr__ = _refuse  # type: ignore[method-assign]

BeforeResult: TypeAlias = Cont[C] | Halt[V]
"""What a `before_*` hook may return: go on with a context, or halt with a value."""

ErrorResult: TypeAlias = Retry[C] | Fallback[V] | Raise
"""What an `on_*_error` hook may return: retry, fall back, or pass the error on."""
