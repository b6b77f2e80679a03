"""What a function can be called with: whether it is async, and whether it takes a hook's arguments.

Both are asked of every hook when callbacks are registered, and the answers are cached per
function: callbacks passed per run are registered on every run, and `inspect` is slow.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["cannot_take", "is_async"]


def is_async(fn: Callable[..., Any]) -> bool:
    """Whether calling `fn` gives a coroutine: an `async def`, or an object whose `__call__` is one."""
    func = getattr(fn, "__func__", None)  # a bound method: the answer is its function's
    return _is_async(fn) if func is None else _function_is_async(func)


@functools.lru_cache(maxsize=4096)  # callbacks given per run repeat their methods: inspect is slow
def _function_is_async(func: Callable[..., Any]) -> bool:
    return _is_async(func)


def _is_async(fn: Callable[..., Any]) -> bool:
    # Unwrapped too: a sync decorator (functools.wraps) around an `async def` still returns a coroutine.
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(inspect.unwrap(fn)):
        return True
    # An object with an `async def __call__` is awaited too.
    return not inspect.isroutine(fn) and inspect.iscoroutinefunction(type(fn).__call__)


def cannot_take(fn: Callable[..., Any], arity: int) -> tuple[str, str] | None:
    """`fn`'s signature and why it cannot take `arity` positional arguments, or None if it can."""
    func = getattr(fn, "__func__", None)  # a bound method: its function, which also takes `self`
    if func is not None:
        return _function_cannot_take(func, arity + 1)
    if inspect.isfunction(fn):
        return _function_cannot_take(fn, arity)
    return _signature_problem(fn, arity)


@functools.lru_cache(maxsize=4096)  # callbacks given per run repeat their methods: inspect is slow
def _function_cannot_take(func: Callable[..., Any], arity: int) -> tuple[str, str] | None:
    return _signature_problem(func, arity)


def _signature_problem(fn: Callable[..., Any], arity: int) -> tuple[str, str] | None:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None  # some builtins have no signature to check: they are called as they are
    try:
        signature.bind(*range(arity))
    except TypeError as e:
        # Shown without annotations: the names and kinds of the parameters are what is wrong.
        bare = [p.replace(annotation=inspect.Parameter.empty) for p in signature.parameters.values()]
        return str(inspect.Signature(bare)), str(e)
    return None
