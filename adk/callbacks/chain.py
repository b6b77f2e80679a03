"""The chain helpers: thread a context (or a result, or an error) through a list of callbacks.

Every chain runs in one core loop (`run_chain`); `run_before`, `run_after` and `run_on_error`
are its typed doors for the agent, model and tool hooks, and adk.agui runs its translate hooks
through it too. `run_before` and `run_after` take the answers that go on (a `Cont` of the same
context type, an output of the usual type) in a loop of their own, the price of a chain being
close to its hooks', and hand any other answer, with the callbacks after it, to the core loop.

Rules (docs/callbacks.md), in list order, callbacks without the hook skipped:

- `before`: `Cont(ctx)` passes `ctx` on; the first `Halt` stops the chain and is returned; an
  empty chain returns `Cont(ctx)`.
- `after`: a left fold; each callback gets the previous one's output.
- `on_error`: `Raise(e)` passes `e` on; the first `Retry` or `Fallback` wins; if none recovers,
  `Raise(last_error)` is returned.
- `replace` (AG-UI translate hooks): None keeps the value; the first other answer replaces it.
  Every hook sees the original value.

Every answer is checked where it is given, against its hook's declaration (registry.py): the
result kind, the value in a `Halt` or `Fallback` or returned by an `after` or `replace` hook, the
context in a `Cont` or `Retry` (the type the hook received), the error in a `Raise`. A hook that
raises, or answers what its hook may not, fails: that is a `CallbackError` naming the callback,
the hook and the cause (what it raised is `__cause__`). Precedence:

1. By default the first failure stops the chain and is raised, even when a `Halt` was already
   kept under `continue_on_response`: an error beats a response.
2. With `continue_on_error`, a failing callback is passed over: its context, output or error is
   not threaded on, and the chain goes on.
3. With `continue_on_error`, a response (`Halt`, `Retry`, `Fallback`, a replacement) wins over
   the failures, which are logged as warnings.
4. With `continue_on_error` and no response, the first failure is raised when the chain ends
   (for an `after` chain, although the fold went on to the end).
5. With `continue_on_response` (`before` and `replace` chains), a response does not stop the
   chain: the `Cont`s after a `Halt` go on threading the context, and the last response wins.
6. `Defer(reason)` (`before_tool`) is a response like `Halt`, with two exceptions: under
   `continue_on_response` a `Halt` beats a `Defer` whatever their order (the call does not run,
   so nobody need be asked), and on a call already approved (`ctx.approved`) a `Defer` goes on
   as `Cont(ctx)`: the approval answers it, and the rest of the chain still has its say.

Who decided is data for events: given a list as `deciders`, a chain appends the callback whose
answer won (a `Halt`, `Retry`, `Fallback` or replacement), or, in an `after` chain, each one that
returned another object than it was given. It costs an identity check per `after` hook, nothing
more, when nobody decides.

`asyncio.CancelledError` is never caught. A hook name that is not declared, or a hook of
another chain (`run_before(..., "after_model", ...)`), is a `ValueError` (raised when awaited):
the chain would silently do nothing, or do the wrong thing.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Coroutine, Iterable
from itertools import chain
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar, overload

from adk.callbacks.registry import (
    _LISTS,
    AFTER,
    BEFORE,
    BY_CHAIN,
    DECLARED,
    ON_ERROR,
    REPLACE,
    Callbacks,
    Hook,
    HookImpl,
    HookName,
    callback_name,
    hook_impls,
    hook_raised,
    short_repr,
    unknown_hook,
)
from adk.callbacks.results import Cont, Defer, Fallback, Halt, Raise, Retry
from adk.errors import CallbackError

if TYPE_CHECKING:
    from adk.callbacks.protocols import AnyCallback, Content
    from adk.context import AgentContext, ModelContext, ToolContext
    from adk.events import LlmResponse, Message

__all__ = ["run_after", "run_before", "run_chain", "run_on_error"]

log = logging.getLogger(__name__)

C = TypeVar("C")
V = TypeVar("V")

_GO_ON: Final = 0
_ANSWER: Final = 1
_WRONG: Final = 2


def _log_dropped(error: CallbackError) -> None:
    log.warning("%s (ignored: continue_on_error and another callback answered)", error)


def run_chain(
    impls: tuple[HookImpl, ...],
    hook: Hook,
    value: Any,
    ctx: Any = None,
    *,
    continue_on_error: bool = False,
    continue_on_response: bool = False,
    deciders: list[object] | None = None,
) -> Coroutine[Any, Any, Any]:
    """Run `hook`'s chain over `impls`: the one core loop behind every chain (see the module docstring).

    `value` is what is threaded: the context of a `before` chain (whose `ctx` is unused), the
    value of an `after` or `replace` chain, the error of an `on_error` chain. Returns the
    answer that won, else what was threaded, as `Cont(ctx)`, the value, or `Raise(error)`.
    """
    return _run(impls, hook, value, ctx, continue_on_error, continue_on_response, deciders)


async def _run(
    impls: Iterable[HookImpl],
    hook: Hook,
    value: Any,
    ctx: Any,
    continue_on_error: bool,
    continue_on_response: bool,
    deciders: list[object] | None,
) -> Any:
    # read once: the loop tests them on every call
    before, after, on_error, exact, anything, unary = hook.plan
    received = type(value) if before else None  # the context type Conts must keep
    answer: Any = None  # an answer is never None: a result, or a replacement
    answered_by: object = None
    first_error: CallbackError | None = None
    for fn, is_async, owner in impls:
        try:
            out = fn(value) if unary else fn(value, ctx)
            if is_async:
                out = await out
        except Exception as e:
            error = hook_raised(owner, hook.name, e)
        else:
            # The answers that go on, checked by exact type; anything else is judged below.
            if before:
                if type(out) is Cont and type(out.ctx) is received:
                    value = out.ctx
                    continue
            elif after:
                if type(out) is exact or anything:
                    if out is not value and deciders is not None:
                        deciders.append(owner)
                    value = out
                    continue
            elif on_error:
                if type(out) is Raise and isinstance(out.error, Exception):
                    value = out.error
                    continue
            elif out is None:
                continue
            verdict, judged = _judge(hook, out, received or type(ctx))
            if verdict == _GO_ON:
                if after and judged is not value and deciders is not None:
                    deciders.append(owner)
                value = judged
                continue
            if verdict == _ANSWER:
                if type(out) is Defer and (getattr(value, "approved", False) or type(answer) is Halt):
                    continue  # answered by the approval, or beaten by a Halt kept (rule 6)
                if not continue_on_response:
                    if first_error is not None:
                        _log_dropped(first_error)
                    if deciders is not None:
                        deciders.append(owner)
                    return out
                answer, answered_by = out, owner
                continue
            error = CallbackError(callback_name(owner), hook.name, judged)
        if on_error:
            error.__context__ = value  # the error that was being handled
        if not continue_on_error:
            raise error
        first_error = first_error or error
    if answer is not None:
        if first_error is not None:
            _log_dropped(first_error)
        if deciders is not None:
            deciders.append(answered_by)
        return answer
    if first_error is not None:
        raise first_error
    if before:
        return Cont(value)
    if on_error:
        return Raise(value)
    return value


def _judge(hook: Hook, out: Any, received: type) -> tuple[int, Any]:
    """An answer the fast path did not take: `(_GO_ON, value)`, `(_ANSWER, out)` or `(_WRONG, problem)`."""
    chain = hook.chain
    cls = type(out)
    if chain == BEFORE:
        if cls is Cont:
            return _context(hook, out, out.ctx, received, _GO_ON)
        if cls is Halt:
            return _carried(hook, out, out.value)
        if cls is Defer and hook.defer:
            if isinstance(out.reason, str):
                return _ANSWER, out
            return _WRONG, _problem(hook, out, "the reason of a Defer", "a str", out.reason)
    elif chain == ON_ERROR:
        if cls is Raise:
            if isinstance(out.error, Exception):
                return _GO_ON, out.error
            return _WRONG, _problem(hook, out, "the error of a Raise", "an Exception", out.error)
        if cls is Retry and hook.retry:
            return _context(hook, out, out.ctx, received, _ANSWER)
        if cls is Fallback:
            return _carried(hook, out, out.value)
    elif hook.fits(out):
        return (_GO_ON if chain == AFTER else _ANSWER), out
    elif cls is Halt and hook.halt is not None:  # an `after` hook that may stop its fold
        types, allowed = hook.halt
        if isinstance(out.value, types):
            return _ANSWER, out
        return _WRONG, _problem(hook, out, "the value of a Halt", allowed, out.value)
    if inspect.iscoroutine(out):
        out.close()  # never awaited: close it, or Python warns when it is collected
        return _WRONG, "returned a coroutine; a hook that returns one must be an `async def`"
    if chain in (AFTER, REPLACE):
        return _WRONG, _problem(hook, out, hook.name, hook.allowed, out, "return")
    return _WRONG, f"returned {short_repr(out)}; {hook.name} may return only {hook.answers}"


def _context(hook: Hook, out: Any, new: object, received: type, verdict: int) -> tuple[int, Any]:
    if isinstance(new, received):
        return verdict, (new if verdict == _GO_ON else out)
    what = f"the ctx of a {type(out).__name__}"
    return _WRONG, _problem(hook, out, what, f"the {received.__name__} it received (or a copy)", new)


def _carried(hook: Hook, out: Any, value: object) -> tuple[int, Any]:
    if hook.fits(value):
        return _ANSWER, out
    return _WRONG, _problem(hook, out, f"the value of a {type(out).__name__}", hook.allowed, value)


def _problem(hook: Hook, out: object, what: str, allowed: str, wrong: object, verb: str = "be") -> str:
    """`returned <out>; <what> from <hook> must be <allowed>, not <type of wrong>`."""
    source = "" if what == hook.name else f" from {hook.name}"
    kind = "None" if wrong is None else type(wrong).__qualname__
    return f"returned {short_repr(out)}; {what}{source} must {verb} {allowed}, not {kind}"


@overload
async def run_before(
    callbacks: Callbacks | Iterable[AnyCallback],
    hook: Literal["before_agent"],
    ctx: AgentContext,
    *,
    continue_on_error: bool = False,
    continue_on_response: bool = False,
    deciders: list[object] | None = None,
) -> Cont[AgentContext] | Halt[Content]: ...
@overload
async def run_before(
    callbacks: Callbacks | Iterable[AnyCallback],
    hook: Literal["before_model"],
    ctx: ModelContext,
    *,
    continue_on_error: bool = False,
    continue_on_response: bool = False,
    deciders: list[object] | None = None,
) -> Cont[ModelContext] | Halt[LlmResponse]: ...
@overload
async def run_before(
    callbacks: Callbacks | Iterable[AnyCallback],
    hook: Literal["before_tool"],
    ctx: ToolContext,
    *,
    continue_on_error: bool = False,
    continue_on_response: bool = False,
    deciders: list[object] | None = None,
) -> Cont[ToolContext] | Halt[Any] | Defer: ...
@overload
async def run_before(
    callbacks: Callbacks | Iterable[object],
    hook: HookName,
    ctx: C,
    *,
    continue_on_error: bool = False,
    continue_on_response: bool = False,
    deciders: list[object] | None = None,
) -> Cont[C] | Halt[Any] | Defer: ...
async def run_before(
    callbacks: Callbacks | Iterable[object],
    hook: str,
    ctx: Any,
    *,
    continue_on_error: bool = False,
    continue_on_response: bool = False,
    deciders: list[object] | None = None,
) -> Cont[Any] | Halt[Any] | Defer:
    """Thread `ctx` through each callback's `hook`; return `Cont(ctx')` or the winning `Halt` (or `Defer`).

    The callback whose `Halt` won is appended to `deciders`, if given.
    """
    try:
        spec = _BEFORE[hook]
        # type() is, unlike isinstance(), no call: a subclass of Callbacks is found third
        if type(callbacks) is Callbacks:
            impls = callbacks._hooks[hook]
        elif type(callbacks) is list and len(callbacks) == 1:  # hook_impls' lookup, inlined
            impls = _LISTS[id(callbacks[0])][hook]
        elif isinstance(callbacks, Callbacks):
            impls = callbacks._hooks[hook]
        else:
            impls = hook_impls(callbacks, hook)
    except KeyError:
        if hook not in _BEFORE:
            raise _not_of(hook, "run_before", "before") from None
        spec, impls = _BEFORE[hook], _impls(callbacks, hook)
    # The Conts that keep the context's type, here; from any other answer on, the core loop.
    received = type(ctx)
    rest = iter(impls)
    for fn, is_async, owner in rest:
        try:
            out = fn(ctx)
            if is_async:
                out = await out
        except Exception as error:
            known = _Known(None, error)
        else:
            if type(out) is Cont and type(out.ctx) is received:
                ctx = out.ctx
                continue
            known = _Known(out, None)
        rest = chain(((known, False, owner),), rest)
        answer: Cont[Any] | Halt[Any] | Defer = await _run(
            rest, spec, ctx, None, continue_on_error, continue_on_response, deciders
        )
        return answer
    return Cont(ctx)


@overload
async def run_after(
    callbacks: Callbacks | Iterable[AnyCallback],
    hook: Literal["after_agent"],
    result: Message | None,
    ctx: AgentContext,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> Message | None: ...
@overload
async def run_after(
    callbacks: Callbacks | Iterable[AnyCallback],
    hook: Literal["after_model"],
    result: LlmResponse,
    ctx: ModelContext,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> LlmResponse: ...
@overload
async def run_after(
    callbacks: Callbacks | Iterable[AnyCallback],
    hook: Literal["after_tool"],
    result: Any,
    ctx: ToolContext,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> Any: ...
@overload
async def run_after(
    callbacks: Callbacks | Iterable[object],
    hook: HookName,
    result: V,
    ctx: Any,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> V: ...
async def run_after(
    callbacks: Callbacks | Iterable[object],
    hook: str,
    result: Any,
    ctx: Any,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> Any:
    """Fold `result` through each callback's `hook`, left to right; return the last output.

    With `continue_on_error`, a failing callback leaves the value as it was, the fold goes on,
    and the first error is raised at the end. Each callback that returned another object than it
    was given is appended to `deciders`, if given.
    """
    try:
        spec = _AFTER[hook]
        # type() is, unlike isinstance(), no call: a subclass of Callbacks is found third
        if type(callbacks) is Callbacks:
            impls = callbacks._hooks[hook]
        elif type(callbacks) is list and len(callbacks) == 1:  # hook_impls' lookup, inlined
            impls = _LISTS[id(callbacks[0])][hook]
        elif isinstance(callbacks, Callbacks):
            impls = callbacks._hooks[hook]
        else:
            impls = hook_impls(callbacks, hook)
    except KeyError:
        if hook not in _AFTER:
            raise _not_of(hook, "run_after", "after") from None
        spec, impls = _AFTER[hook], _impls(callbacks, hook)
    if spec.unary:  # declared to be called with one argument: the core loop calls it so
        return await _run(impls, spec, result, ctx, continue_on_error, False, deciders)
    # The outputs of the type most are, here; from any other answer on, the core loop.
    exact, anything = spec.plan[3], spec.anything
    rest = iter(impls)
    for fn, is_async, owner in rest:
        try:
            out = fn(result, ctx)
            if is_async:
                out = await out
        except Exception as error:
            known = _Known(None, error)
        else:
            if type(out) is exact or anything:
                if out is not result and deciders is not None:
                    deciders.append(owner)
                result = out
                continue
            known = _Known(out, None)
        rest = chain(((known, False, owner),), rest)
        return await _run(rest, spec, result, ctx, continue_on_error, False, deciders)
    return result


@overload
async def run_on_error(
    callbacks: Callbacks | Iterable[AnyCallback],
    hook: Literal["on_model_error"],
    error: Exception,
    ctx: ModelContext,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> Retry[ModelContext] | Fallback[LlmResponse] | Raise: ...
@overload
async def run_on_error(
    callbacks: Callbacks | Iterable[AnyCallback],
    hook: Literal["on_tool_error"],
    error: Exception,
    ctx: ToolContext,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> Retry[ToolContext] | Fallback[Any] | Raise: ...
@overload
async def run_on_error(
    callbacks: Callbacks | Iterable[AnyCallback],
    hook: Literal["on_agent_error"],
    error: Exception,
    ctx: AgentContext,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> Fallback[Content] | Raise: ...
@overload
async def run_on_error(
    callbacks: Callbacks | Iterable[object],
    hook: HookName,
    error: Exception,
    ctx: C,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> Retry[C] | Fallback[Any] | Raise: ...
async def run_on_error(
    callbacks: Callbacks | Iterable[object],
    hook: str,
    error: Exception,
    ctx: Any,
    *,
    continue_on_error: bool = False,
    deciders: list[object] | None = None,
) -> Retry[Any] | Fallback[Any] | Raise:
    """Offer `error` to each callback's `hook`: the first `Retry` or `Fallback` wins.

    `Raise(e)` passes `e` (possibly a new error) to the next callback; if nobody recovers,
    `Raise(last_error)` is returned for the caller to raise. The callback whose `Retry` or
    `Fallback` won is appended to `deciders`, if given.
    """
    try:
        spec = _ON_ERROR[hook]
        impls = callbacks._hooks[hook] if isinstance(callbacks, Callbacks) else hook_impls(callbacks, hook)
    except KeyError:
        if hook not in _ON_ERROR:
            raise _not_of(hook, "run_on_error", "on_error") from None
        spec, impls = _ON_ERROR[hook], _impls(callbacks, hook)
    recovered: Retry[Any] | Fallback[Any] | Raise = await _run(
        impls, spec, error, ctx, continue_on_error, False, deciders
    )  # errors: not a hot path, no fast loop
    return recovered


_BEFORE, _AFTER, _ON_ERROR = BY_CHAIN[BEFORE], BY_CHAIN[AFTER], BY_CHAIN[ON_ERROR]


class _Known:
    """A hook already called by a door's own loop: the core loop calls this in its place and gets
    the same answer, or the same error raised."""

    __slots__ = ("error", "out")

    def __init__(self, out: object, error: Exception | None) -> None:
        self.out = out
        self.error = error

    def __call__(self, *args: object) -> object:
        if self.error is not None:
            raise self.error
        return self.out


def _impls(callbacks: Callbacks | Iterable[object], hook: str) -> tuple[HookImpl, ...]:
    """The implementations of a declared `hook` when the quick lookup missed: a list seen for the
    first time, or (none) a `Callbacks` made before the hook was declared."""
    return () if isinstance(callbacks, Callbacks) else hook_impls(callbacks, hook)


def _not_of(name: str, helper: str, chain: str) -> ValueError:
    """The error for a hook name that `helper` cannot run: unknown, or of another chain."""
    hook = DECLARED.get(name)
    if hook is None:
        return unknown_hook(name)
    return ValueError(f"{helper} runs {chain} hooks; {name} is not one ({hook!r})")
