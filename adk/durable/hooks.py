"""Hook answers as DBOS steps: in a durable run, each callback's answer to a hook that decides
is checkpointed, and on recovery it comes back from the record; the hook is not asked again.

So a hook that would answer otherwise the second time (it reads the clock, a breaker's state, a
flag) does not change a recovered run. An answer is recorded as data: a `Halt`, `Fallback` or
`Defer` as it is, a replaced value as it is, a `Cont` or `Retry` as the fields of the context it
changed; a model or tool it switched to by its name, found again on recovery among the run's
agent's and the callback's own (docs/durable.md). `on_event` and `after_run` decide nothing the
record does not hold (the events are adopted from the store): they run again.
"""

from __future__ import annotations

import dataclasses
import pickle
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, get_args

from adk.callbacks.registry import DECLARED, Callbacks, HookImpl, HookName, callback_name
from adk.callbacks.results import Cont, Raise, Retry
from adk.durable.budgets import durable_budgets
from adk.durable.checkpoint import step
from adk.errors import WorkflowMismatchError
from adk.models.base import Model
from adk.tools import BaseTool

__all__ = ["DECIDING", "durable_callbacks"]

DECIDING: Final = frozenset(get_args(HookName)) | {"on_user_message", "before_run"}
"""The hooks whose answers are recorded: those whose answer steers the run."""


@dataclass(frozen=True, slots=True)
class _Same:
    """The hook handed back the value it was given (an `after` hook that kept it)."""


@dataclass(frozen=True, slots=True)
class _Ref:
    """A model or tool in a changed context, by name: the object itself is not recorded."""

    kind: str
    name: str


@dataclass(frozen=True, slots=True)
class _Cont:
    changed: dict[str, Any] | None
    """The fields of the context the hook changed (None: it passed the one it was given on)."""


@dataclass(frozen=True, slots=True)
class _Retry:
    changed: dict[str, Any] | None
    delay: float | None


@dataclass(frozen=True, slots=True)
class _Raise:
    error: Exception | None
    """The error passed on; None: the one the hook was given."""


class _DurableHook:
    """One callback's hook, whose every answer is a step named `adk.hook:<Callback>.<hook>`."""

    __slots__ = ("fn", "is_async", "owner", "step")

    def __init__(self, impl: HookImpl, hook: str) -> None:
        self.fn, self.is_async, self.owner = impl
        self.step = f"adk.hook:{callback_name(self.owner)}.{hook}"

    async def __call__(self, *args: Any) -> Any:
        asked: list[Any] = []

        async def ask() -> Any:
            out = self.fn(*args)
            if self.is_async:
                out = await out
            asked.append(out)
            return _recordable(self.step, _encode(out, args))

        recorded = await step(self.step, ask)
        return asked[0] if asked else await _decode(recorded, args, self)

    async def again(self, args: tuple[Any, ...]) -> Any:
        """The context the hook answers with now (None if it answers otherwise): asked only to
        find a model or tool object again (a `FallbackModels` that moved on)."""
        try:
            out = self.fn(*args)
            if self.is_async:
                out = await out
        except Exception:
            return None
        return getattr(out, "ctx", None)


def durable_callbacks(callbacks: Callbacks) -> Callbacks:
    """`callbacks` with each deciding hook's answers recorded as steps, and each stored
    `Budget`'s store calls (budgets.py); the same if done already."""
    durable_budgets(callbacks.objects)
    hooks: dict[str, tuple[HookImpl, ...]] = {}
    for name, declared in DECLARED.items():
        impls = callbacks.get(declared)
        if name in DECIDING:
            impls = tuple(_wrapped(impl, name) for impl in impls)
        hooks[name] = impls
    return Callbacks(callbacks.objects, hooks)


def _wrapped(impl: HookImpl, hook: str) -> HookImpl:
    if isinstance(impl[0], _DurableHook):
        return impl
    return (_DurableHook(impl, hook), True, impl[2])


def _encode(out: Any, args: tuple[Any, ...]) -> Any:
    """What is recorded of the answer `out` to a hook called with `args` (value first, ctx last)."""
    value, ctx = args[0], args[-1]
    kind = type(out)
    if out is value:
        return _Same()
    if kind is Cont:
        return _Cont(_delta(value, out.ctx))
    if kind is Retry:
        return _Retry(_delta(ctx, out.ctx), out.delay)
    if kind is Raise:
        return _Raise(None if out.error is value else out.error)
    return out  # a Halt, Fallback or Defer, a replacement: data already


def _delta(old: Any, new: Any) -> dict[str, Any] | None:
    """The fields of the context `new` that are not `old`'s (models and tools by name)."""
    if new is old:
        return None
    if type(new) is not type(old) or not dataclasses.is_dataclass(old):
        return {"": new}  # not a context of the kind given: the chain refuses it, as recorded
    changed: dict[str, Any] = {}
    for field in dataclasses.fields(old):
        was, now = getattr(old, field.name), getattr(new, field.name)
        if now is was:
            continue
        if isinstance(now, BaseTool):
            now = _Ref("tool", now.name)
        elif isinstance(now, Model):
            now = _Ref("model", now.name)
        changed[field.name] = now
    return changed


def _recordable(step_name: str, recorded: Any) -> Any:
    """`recorded`, checked to pickle (DBOS's checkpoints do): else one line naming the hook."""
    try:
        pickle.dumps(recorded)
    except Exception as error:
        raise TypeError(
            f"{step_name}: its answer cannot be recorded for a durable run (it must pickle): {error}"
        ) from None
    return recorded


async def _decode(recorded: Any, args: tuple[Any, ...], hook: _DurableHook) -> Any:
    """The answer `recorded` stands for, given the hook's arguments now."""
    value, ctx = args[0], args[-1]
    kind = type(recorded)
    if kind is _Same:
        return value
    if kind is _Cont:
        return Cont(await _applied(value, recorded.changed, hook, args))
    if kind is _Retry:
        return Retry(await _applied(ctx, recorded.changed, hook, args), recorded.delay)
    if kind is _Raise:
        return Raise(value if recorded.error is None else recorded.error)
    return recorded


async def _applied(
    ctx: Any, changed: dict[str, Any] | None, hook: _DurableHook, args: tuple[Any, ...]
) -> Any:
    """`ctx` with the recorded changes (models and tools found again by name)."""
    if changed is None:
        return ctx
    if "" in changed:
        return changed[""]
    now = await hook.again(args) if any(type(v) is _Ref for v in changed.values()) else None
    fields = {name: _found(ctx, v, hook, now) if type(v) is _Ref else v for name, v in changed.items()}
    return dataclasses.replace(ctx, **fields)


def _found(ctx: Any, ref: _Ref, hook: _DurableHook, now: Any) -> Any:
    """The model or tool `ref` names: the one the hook answers with now, if it is that one; else
    the context's, its agent's, or one the callback holds."""
    agent = ctx.agent
    kind: type = BaseTool if ref.kind == "tool" else Model
    near: list[object] = [
        getattr(now, ref.kind, None),
        getattr(ctx, ref.kind, None),
        getattr(agent, ref.kind, None),
    ]
    near += list(getattr(agent, "tools", {}).values())
    for candidate in [*near, *_held(hook.owner)]:
        if isinstance(candidate, kind) and getattr(candidate, "name", None) == ref.name:
            return candidate
    from dbos import DBOS

    raise WorkflowMismatchError(
        f"workflow {DBOS.workflow_id!r} no longer matches its record: {hook.step} had switched to"
        f" {ref.kind} {ref.name!r}, which neither agent {agent.name!r} nor the callback holds now"
        " (was the agent changed?); nothing was run again"
    )


def _held(owner: object) -> Iterable[object]:
    """The objects a callback holds in its attributes, and in the lists and tuples among them."""
    names = getattr(owner, "__dict__", None) or {
        name: getattr(owner, name, None) for name in getattr(type(owner), "__slots__", ())
    }
    for value in dict(names).values():
        if isinstance(value, list | tuple):
            yield from value
        else:
            yield value
