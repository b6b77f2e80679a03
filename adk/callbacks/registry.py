"""Resolving callbacks into per-hook lists, once, when they are registered.

A callback may be an instance, a class (instantiated once, without arguments) or a module. Its
hooks are looked up here and never again on the hot path; a mistake (no hook at all, a misspelt
hook name, a class that cannot be built) is reported here, where it was made. The errors that
name a callback failing at run time (`hook_raised`, `bad_result`) are built here too, for every
chain that runs hooks.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any, Final, Literal, TypeAlias, get_args

from adk.callbacks.base import Callback
from adk.errors import CallbackError, CallbackRegistrationError

__all__ = [
    "HOOKS",
    "Callbacks",
    "HookImpl",
    "HookName",
    "bad_result",
    "callback_name",
    "hook_raised",
    "is_async",
    "unknown_hook",
]

HookName: TypeAlias = Literal[
    "before_agent",
    "after_agent",
    "before_model",
    "after_model",
    "on_model_error",
    "before_tool",
    "after_tool",
    "on_tool_error",
    # AG-UI translation hooks (adk.agui) follow the same rules.
    "before_translate",
    "after_translate",
]
"""The name of a hook: what the chain helpers take, and what a callback may implement."""

HOOKS: Final[tuple[HookName, ...]] = get_args(HookName)


def callback_name(obj: object) -> str:
    """How errors name a callback: a module's name, a class's qualified name."""
    if isinstance(obj, ModuleType):
        return obj.__name__
    if isinstance(obj, type):
        return obj.__qualname__
    return type(obj).__qualname__


HookImpl: TypeAlias = tuple[Callable[..., Any], bool, object]
"""One callback's implementation of one hook: `(fn, is_async, owner)`, where `owner` is the
registered callback (a class's instance), for naming it in errors and for `without`.

A plain tuple, not a dataclass or named tuple: the chains unpack it on every hook call, and
unpacking an exact tuple is the cheapest way to get at the fields.
"""


def unknown_hook(hook: str) -> ValueError:
    """The error for a hook name that is not one of HOOKS (no callback could implement it)."""
    close = difflib.get_close_matches(hook, HOOKS, n=1, cutoff=0.8)
    hint = f"; did you mean {close[0]!r}?" if close else f"; the hooks are {', '.join(HOOKS)}"
    return ValueError(f"unknown hook {hook!r}{hint}")


def hook_raised(owner: object, hook: str, error: Exception) -> CallbackError:
    """The error for a callback whose `hook` raised `error` (kept as its `__cause__`)."""
    err = CallbackError(callback_name(owner), hook, f"raised {type(error).__name__}: {error}")
    err.__cause__ = error
    return err


def bad_result(owner: object, hook: str, result: object, allowed: str) -> CallbackError:
    """The error for a callback whose `hook` returned `result`, which is not one of `allowed`."""
    if inspect.iscoroutine(result):
        result.close()  # never awaited: close it, or Python warns when it is collected
        problem = "returned a coroutine; a hook that returns one must be an `async def`"
    else:
        problem = f"returned {result!r}; {hook} may return only {allowed}"
    return CallbackError(callback_name(owner), hook, problem)


@functools.lru_cache(maxsize=4096)  # callbacks given per run repeat their names: difflib is slow
def _misspelt(name: str) -> str | None:
    if name.startswith("_") or name in HOOKS:
        return None
    close = difflib.get_close_matches(name, HOOKS, n=1, cutoff=0.8)
    return close[0] if close else None


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


def _resolve(obj: object) -> tuple[object, dict[str, HookImpl]]:
    name = callback_name(obj)
    if isinstance(obj, type):
        try:
            obj = obj()
        except Exception as e:
            raise CallbackRegistrationError(
                f"callback class {name} could not be instantiated without arguments: {e}"
            ) from e
    for attr in dir(obj):
        suggestion = _misspelt(attr)
        if suggestion is not None:
            raise CallbackRegistrationError(
                f"callback {name} has an attribute {attr!r} that looks like the hook "
                f"{suggestion!r}; rename it (or make it private with a leading underscore)"
            )
    base = Callback.__dict__
    hooks: dict[str, HookImpl] = {}
    for hook in HOOKS:
        fn = getattr(obj, hook, None)
        if fn is None:
            continue
        if not callable(fn):
            raise CallbackRegistrationError(f"callback {name}: {hook} is not callable")
        if getattr(fn, "__func__", None) is base.get(hook):
            continue  # Callback's own no-op: skip it, it would only cost time
        hooks[hook] = (fn, is_async(fn), obj)
    if not hooks:
        overrides = " (a Callback subclass must override at least one)" if isinstance(obj, Callback) else ""
        raise CallbackRegistrationError(
            f"callback {name} implements no hook{overrides}; expected at least one of {', '.join(HOOKS[:8])}"
        )
    return obj, hooks


class Callbacks:
    """Callbacks resolved into one tuple of implementations per hook, in registration order."""

    __slots__ = ("_hooks", "objects")
    # The chains read `_hooks[hook]` directly: `get` is a method call they need not pay for.
    # It holds every hook, so that a missing key always means an unknown hook name.

    def __init__(self, objects: tuple[object, ...], hooks: dict[str, tuple[HookImpl, ...]]) -> None:
        self.objects = objects
        """The registered callbacks (classes replaced by their instances)."""
        self._hooks: dict[str, tuple[HookImpl, ...]] = {hook: hooks.get(hook, ()) for hook in HOOKS}

    @classmethod
    def of(cls, callbacks: Iterable[object] | Callbacks | None = None) -> Callbacks:
        """Resolve `callbacks`; a `Callbacks` is returned as it is."""
        if isinstance(callbacks, Callbacks):
            return callbacks
        objects: list[object] = []
        lists: dict[str, list[HookImpl]] = {}
        for obj in callbacks or ():
            instance, hooks = _resolve(obj)
            objects.append(instance)
            for hook, impl in hooks.items():
                lists.setdefault(hook, []).append(impl)
        return cls(tuple(objects), {hook: tuple(impls) for hook, impls in lists.items()})

    def get(self, hook: HookName) -> tuple[HookImpl, ...]:
        """The implementations of `hook`, in order; empty if none. An unknown hook is a ValueError."""
        try:
            return self._hooks[hook]
        except KeyError:
            raise unknown_hook(hook) from None

    def __add__(self, other: Callbacks) -> Callbacks:
        """Concatenate: every hook of `self` runs before those of `other`."""
        if not other.objects:
            return self
        if not self.objects:
            return other
        hooks: dict[str, tuple[HookImpl, ...]] = {h: self._hooks[h] + other._hooks[h] for h in HOOKS}
        return Callbacks(self.objects + other.objects, hooks)

    def without(self, predicate: Callable[[object], bool]) -> Callbacks:
        """These callbacks minus those for which `predicate` is true (to remove a default)."""
        dropped = {id(o) for o in self.objects if predicate(o)}
        hooks = {h: tuple(i for i in impls if id(i[2]) not in dropped) for h, impls in self._hooks.items()}
        return Callbacks(tuple(o for o in self.objects if id(o) not in dropped), hooks)

    def __len__(self) -> int:
        return len(self.objects)

    def __bool__(self) -> bool:
        return bool(self.objects)

    def __repr__(self) -> str:
        return f"Callbacks({', '.join(callback_name(o) for o in self.objects)})"
