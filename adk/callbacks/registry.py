"""Hooks and their families, and resolving callbacks into per-hook lists, once, at registration.

A hook is declared by the module that owns it, as a `Hook` (hook.py): its name, the chain that runs it
(`before`, `after`, `on_error` or `replace`) and what the values it hands back may be. The agent,
model and tool hooks are declared here; adk.agui declares its translate hooks itself.

A callback may be an instance, a class (instantiated once, without arguments) or a module. Its
hooks are looked up here and never again on the hot path; a mistake (no hook at all, a misspelt
hook name, a hook that cannot take its arguments, a class that cannot be built) is reported here,
where it was made. The errors that name a callback failing at run time are built here too.
"""

from __future__ import annotations

import difflib
import functools
import reprlib
from collections.abc import Callable, Iterable, Mapping
from types import MethodType, ModuleType, NoneType
from typing import Any, Final, Literal, TypeAlias, get_args

from adk.callbacks.base import Callback
from adk.callbacks.hook import AFTER, BEFORE, ON_ERROR, REPLACE, Hook
from adk.callbacks.results import Cont, Defer, Fallback, Halt, Raise, Retry
from adk.callbacks.signatures import cannot_take, is_async
from adk.errors import CallbackError, CallbackRegistrationError
from adk.events import LlmResponse, Message

__all__ = [
    "AFTER",
    "AFTER_AGENT",
    "AFTER_MODEL",
    "AFTER_TOOL",
    "BEFORE",
    "BEFORE_AGENT",
    "BEFORE_MODEL",
    "BEFORE_TOOL",
    "CORE",
    "DECLARED",
    "HOOKS",
    "ON_AGENT_ERROR",
    "ON_ERROR",
    "ON_MODEL_ERROR",
    "ON_TOOL_ERROR",
    "REPLACE",
    "Callbacks",
    "Hook",
    "HookImpl",
    "HookName",
    "callback_name",
    "decided_by",
    "declare_hooks",
    "hook_impls",
    "hook_raised",
    "is_async",
    "short_repr",
    "unknown_hook",
]

_declared: dict[str, Hook] = {}
DECLARED: Final[Mapping[str, Hook]] = _declared
"""Every declared hook by name, in the order declared (read it; declare with `declare_hooks`)."""

_PLANS: dict[type, dict[str, tuple[Callable[..., Any], bool]]] = {}
"""Per class of callback instance seen in a plain list: its hooks' functions and whether each is
async, as `_resolve` found and checked them; binding them to another instance is all that is left.
Keyed by class, never by an object: a cache of what a class declares, not a run's state."""


def declare_hooks(*hooks: Hook) -> tuple[Hook, ...]:
    """Make `hooks` known: callbacks may implement them, and misspellings of them are caught.

    The module that owns a family of hooks declares it once, at import. Declaring a hook again
    as it was (name, chain, description) is allowed (a reloaded module); otherwise a ValueError.
    """
    for hook in hooks:
        known = _declared.get(hook.name)
        if known is not None and known != hook:
            raise ValueError(f"hook {hook.name!r} is already declared as {known!r}")
    for hook in hooks:
        _declared[hook.name] = hook
    _misspelt.cache_clear()
    _PLANS.clear()
    return hooks


HookName: TypeAlias = Literal[
    "before_agent",
    "after_agent",
    "before_model",
    "after_model",
    "on_model_error",
    "before_tool",
    "after_tool",
    "on_tool_error",
    "on_agent_error",
]
"""The name of an agent, model or tool hook: what the chain helpers take."""


def callback_name(obj: object) -> str:
    """How errors name a callback: a module's name, a class's qualified name."""
    if isinstance(obj, ModuleType):
        return obj.__name__
    if isinstance(obj, type):
        return obj.__qualname__
    return type(obj).__qualname__


def decided_by(callback: object, hook: str) -> str:
    """How a decision names a callback's hook: `callback:<Name>.<hook>`, as an error's `where` does."""
    return f"callback:{callback_name(callback)}.{hook}"


HookImpl: TypeAlias = tuple[Callable[..., Any], bool, object]
"""One callback's implementation of one hook: `(fn, is_async, owner)`, where `owner` is the
registered callback (a class's instance), for naming it in errors and for `without`.

A plain tuple, not a dataclass or named tuple: the chains unpack it on every hook call, and
unpacking an exact tuple is the cheapest way to get at the fields.
"""


def unknown_hook(hook: str) -> ValueError:
    """The error for a hook name that is not declared (no callback could implement it)."""
    close = difflib.get_close_matches(hook, _declared, n=1, cutoff=0.8)
    hint = f"; did you mean {close[0]!r}?" if close else f"; the hooks are {', '.join(_declared)}"
    return ValueError(f"unknown hook {hook!r}{hint}")


def hook_raised(owner: object, hook: str, error: Exception) -> CallbackError:
    """The error for a callback whose `hook` raised `error` (kept as its `__cause__`)."""
    err = CallbackError(callback_name(owner), hook, f"raised {type(error).__name__}: {error}")
    err.__cause__ = error
    return err


class _ShortRepr(reprlib.Repr):
    """Builtin values cut short; results with their fields; any other object by its type only.

    A wrong answer may hold a whole context or conversation: its repr must not be built.
    """

    def repr_instance(self, x: Any, level: int) -> str:
        cls = type(x)
        if cls in _RESULTS:
            if level <= 0:
                return f"{cls.__name__}(...)"
            fields = ", ".join(f"{f}={self.repr1(getattr(x, f), level - 1)}" for f in cls.__slots__)
            return f"{cls.__name__}({fields})"
        if cls.__module__ == "builtins":
            return super().repr_instance(x, level)
        return f"<{cls.__qualname__}>"


_RESULTS: Final = frozenset((Cont, Halt, Defer, Retry, Fallback, Raise))
_short = _ShortRepr()
_short.maxlevel = 3
_short.maxstring = _short.maxother = 60
_short.maxlist = _short.maxtuple = _short.maxdict = _short.maxset = 4


def short_repr(value: object) -> str:
    """A repr of `value` short enough for an error message."""
    return _short.repr(value)


@functools.lru_cache(maxsize=4096)  # callbacks given per run repeat their names: difflib is slow
def _misspelt(name: str) -> str | None:
    if name.startswith("_") or name in _declared:
        return None
    close = difflib.get_close_matches(name, _declared, n=1, cutoff=0.8)
    return close[0] if close else None


(
    BEFORE_AGENT,
    AFTER_AGENT,
    BEFORE_MODEL,
    AFTER_MODEL,
    ON_MODEL_ERROR,
    BEFORE_TOOL,
    AFTER_TOOL,
    ON_TOOL_ERROR,
    ON_AGENT_ERROR,
) = CORE = declare_hooks(
    Hook("before_agent", BEFORE, (Message, str), "a Message or str"),
    Hook("after_agent", AFTER, (Message, NoneType), "a Message or None"),
    Hook("before_model", BEFORE, LlmResponse, "an LlmResponse"),
    Hook("after_model", AFTER, LlmResponse, "an LlmResponse"),
    Hook("on_model_error", ON_ERROR, LlmResponse, "an LlmResponse"),
    Hook("before_tool", BEFORE, defer=True),
    Hook("after_tool", AFTER),
    Hook("on_tool_error", ON_ERROR),
    Hook("on_agent_error", ON_ERROR, (Message, str), "a Message or str", retry=False),
)
"""The agent, model and tool hooks, with what each may hand back (docs/callbacks.md). The agents
run their chains with `run_chain(callbacks.impls[name], HOOK, ...)`: the implementations they looked
up to know whether a hook has any, and no door to look them up again."""

HOOKS: Final[tuple[HookName, ...]] = get_args(HookName)


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
    for hook in _declared.values():
        fn = getattr(obj, hook.name, None)
        if fn is None:
            continue
        if not callable(fn):
            raise CallbackRegistrationError(f"callback {name}: {hook.name} is not callable")
        noop = base.get(hook.name)
        if noop is not None and getattr(fn, "__func__", None) is noop:
            continue  # Callback's own no-op: skip it, it would only cost time
        problem = cannot_take(fn, hook.arity)
        if problem is not None:
            raise CallbackRegistrationError(
                f"callback {name}: hook {hook.name}{problem[0]} cannot be called as "
                f"{hook.name}{hook.parameters}: {problem[1]}"
            )
        hooks[hook.name] = (fn, is_async(fn), obj)
    if not hooks:
        overrides = " (a Callback subclass must override at least one)" if isinstance(obj, Callback) else ""
        raise CallbackRegistrationError(
            f"callback {name} implements no hook{overrides}; expected at least one of {', '.join(_declared)}"
        )
    return obj, hooks


def hook_impls(callbacks: Callbacks | Iterable[object], hook: str) -> tuple[HookImpl, ...]:
    """The implementations of a declared `hook`, in order: a `Callbacks`' own, or a plain list's.

    A plain list is resolved on every call, as `Callbacks.of` resolves at registration, so what
    the objects are now is what runs. Resolving an instance of a class seen before costs a dict
    lookup and a look at the instance's own attributes: its class's hooks were found and checked
    the first time (`_PLANS`, kept per class), and are bound to it. An instance with an attribute
    of its own that is a hook (or looks like one), a class (instantiated on every call), a module,
    or an object whose class looks attributes up its own way is resolved in full each time.
    """
    if type(callbacks) is Callbacks or isinstance(callbacks, Callbacks):
        return callbacks.impls.get(hook, ())  # none: made before the hook was declared
    impls: list[HookImpl] = []
    for obj in callbacks:
        plan = _PLANS.get(type(obj))
        own = getattr(obj, "__dict__", None)
        if plan is None or (own and not _plain(own)):
            impl = _resolve_hook(obj, hook)
            if impl is not None:
                impls.append(impl)
        elif (entry := plan.get(hook)) is not None:
            impls.append((entry[0].__get__(obj), entry[1], obj))
    return tuple(impls)


def _resolve_hook(obj: object, hook: str) -> HookImpl | None:
    """`obj`'s implementation of `hook`, resolved in full; its class's hooks learnt if they can be."""
    instance, hooks = _resolve(obj)
    if instance is obj and type(obj) not in _PLANS:
        _learn(obj, hooks)
    return hooks.get(hook)


def _plain(own: Mapping[str, object]) -> bool:
    """Whether an instance's own attributes `own` can neither be a hook nor look like one."""
    return not any(name in _declared or _misspelt(name) for name in own)


def _learn(obj: object, hooks: dict[str, HookImpl]) -> None:
    """Remember the hooks of `obj`'s class, if they are its plain methods (and `obj` has no own)."""
    kind = type(obj)
    if (
        isinstance(obj, ModuleType)
        or kind.__getattribute__ is not object.__getattribute__
        or hasattr(kind, "__getattr__")
        or not _plain(getattr(obj, "__dict__", {}))
    ):
        return
    plan: dict[str, tuple[Callable[..., Any], bool]] = {}
    for name, (fn, asynchronous, _) in hooks.items():
        if (
            not isinstance(fn, MethodType)
            or fn.__self__ is not obj
            or getattr(kind, name, None) is not fn.__func__
        ):
            return
        plan[name] = (fn.__func__, asynchronous)
    if len(_PLANS) >= 4096:  # classes made at run time must not pile up
        _PLANS.clear()
    _PLANS[kind] = plan


class Callbacks:
    """Callbacks resolved into one tuple of implementations per hook, in registration order."""

    __slots__ = ("agent_hooks", "decide", "impls", "objects")

    def __init__(self, objects: tuple[object, ...], hooks: dict[str, tuple[HookImpl, ...]]) -> None:
        self.objects = objects
        """The registered callbacks (classes replaced by their instances)."""
        self.impls: Mapping[str, tuple[HookImpl, ...]] = {hook: hooks.get(hook, ()) for hook in _declared}
        """The implementations of every hook declared when these were made (the agent, model and
        tool hooks always are), by name: what the agents read on every call, without a method
        call (`get` also says when a name is not a hook)."""
        self.agent_hooks = bool(
            hooks.get("before_agent") or hooks.get("after_agent") or hooks.get("on_agent_error")
        )
        """Whether any agent hook is implemented: an agent's run then goes through them."""
        self.decide = any(getattr(o, "adds_decisions", False) is True for o in objects)
        """Whether a callback's class says (`adds_decisions = True`: a `RateLimit`, a `Budget`) that
        its hooks add decisions to the call's `Attempts`: only then do the model and tool calls set
        `judging` (adk.recovery.attempts) around their `before_*` and `after_*` chains. The
        `on_*_error` chains always have it."""

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

    def get(self, hook: HookName | Hook) -> tuple[HookImpl, ...]:
        """The implementations of `hook`, in order; empty if none. An unknown hook is a ValueError."""
        name = hook if isinstance(hook, str) else hook.name
        impls = self.impls.get(name)
        if impls is not None:
            return impls
        if name in _declared:
            return ()
        raise unknown_hook(name)

    def __add__(self, other: Callbacks) -> Callbacks:
        """Concatenate: every hook of `self` runs before those of `other`."""
        if not other.objects:
            return self
        if not self.objects:
            return other
        mine, theirs = self.impls, other.impls
        hooks = {h: mine.get(h, ()) + theirs.get(h, ()) for h in _declared}
        return Callbacks(self.objects + other.objects, hooks)

    def without(self, predicate: Callable[[object], bool]) -> Callbacks:
        """These callbacks minus those for which `predicate` is true (to remove a default)."""
        dropped = {id(o) for o in self.objects if predicate(o)}
        hooks = {h: tuple(i for i in impls if id(i[2]) not in dropped) for h, impls in self.impls.items()}
        return Callbacks(tuple(o for o in self.objects if id(o) not in dropped), hooks)

    def __len__(self) -> int:
        return len(self.objects)

    def __bool__(self) -> bool:
        return bool(self.objects)

    def __repr__(self) -> str:
        return f"Callbacks({', '.join(callback_name(o) for o in self.objects)})"
