"""The chain helpers: thread a context (or a result, or an error) through a list of callbacks.

Rules (DESIGN §3), in list order, callbacks without the hook skipped:

- `run_before`: `Cont(ctx)` passes `ctx` on; the first `Halt` stops the chain and is returned;
  an empty chain returns `Cont(ctx)`.
- `run_after`: a left fold; each callback gets the previous one's output.
- `run_on_error`: `Raise(e)` passes `e` on; the first `Retry` or `Fallback` wins; if none
  recovers, `Raise(last_error)` is returned.

A hook that raises, or returns what its hook may not return, fails: that is a `CallbackError`
naming the callback, the hook and the cause (what it raised is `__cause__`). Precedence:

1. By default the first failure stops the chain and is raised, even when a `Halt` was already
   kept under `continue_on_response`: an error beats a response.
2. With `continue_on_error`, a failing callback is passed over: its context, output or error is
   not threaded on, and the chain goes on.
3. With `continue_on_error`, a response (`Halt`, `Retry`, `Fallback`) wins over the failures,
   which are logged as warnings.
4. With `continue_on_error` and no response, the first failure is raised when the chain ends
   (for `run_after`, although the fold went on to the end).
5. With `continue_on_response` (`run_before`), a `Halt` does not stop the chain: the `Cont`s
   after it go on threading the context, and the last `Halt` wins.

Who decided is data for events: given a list as `deciders`, a helper appends the callback whose
`Halt`, `Retry` or `Fallback` won, or (`run_after`) each one whose output replaced the value.
Nothing is allocated, and no more than an identity check per `after_*` hook is done, for it.

`asyncio.CancelledError` is never caught. A hook name that is not one of `HOOKS` is a
`ValueError`: no callback could implement it, so the chain would silently do nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from adk.callbacks.registry import Callbacks, HookName, bad_result, hook_raised, unknown_hook
from adk.callbacks.results import Cont, Fallback, Halt, Raise, Retry
from adk.errors import CallbackError

if TYPE_CHECKING:
    from adk.callbacks.protocols import AnyCallback, Content
    from adk.context import AgentContext, ModelContext, ToolContext
    from adk.events import LlmResponse, Message

__all__ = ["run_after", "run_before", "run_on_error"]

log = logging.getLogger(__name__)

C = TypeVar("C")
V = TypeVar("V")


def _log_dropped(error: CallbackError) -> None:
    log.warning("%s (ignored: continue_on_error and another callback answered)", error)


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
) -> Cont[ToolContext] | Halt[Any]: ...
@overload
async def run_before(
    callbacks: Callbacks | Iterable[object],
    hook: HookName,
    ctx: C,
    *,
    continue_on_error: bool = False,
    continue_on_response: bool = False,
    deciders: list[object] | None = None,
) -> Cont[C] | Halt[Any]: ...
async def run_before(
    callbacks: Callbacks | Iterable[object],
    hook: str,
    ctx: Any,
    *,
    continue_on_error: bool = False,
    continue_on_response: bool = False,
    deciders: list[object] | None = None,
) -> Cont[Any] | Halt[Any]:
    """Thread `ctx` through each callback's `hook`; return `Cont(ctx')` or the winning `Halt`.

    The callback whose `Halt` won is appended to `deciders`, if given.
    """
    halt: Halt[Any] | None = None
    halted_by: object = None
    first_error: CallbackError | None = None
    resolved = callbacks if type(callbacks) is Callbacks else Callbacks.of(callbacks)
    try:
        impls = resolved._hooks[hook]
    except KeyError:
        raise unknown_hook(hook) from None
    for fn, is_async, owner in impls:
        try:
            result = (await fn(ctx)) if is_async else fn(ctx)
        except Exception as e:
            error = hook_raised(owner, hook, e)
        else:
            cls = type(result)
            if cls is Cont:
                ctx = result.ctx
                continue
            if cls is Halt:
                if not continue_on_response:
                    if first_error is not None:
                        _log_dropped(first_error)
                    if deciders is not None:
                        deciders.append(owner)
                    return result  # type: ignore[no-any-return]  # checked: it is a Halt
                halt, halted_by = result, owner
                continue
            error = bad_result(owner, hook, result, "Cont or Halt")
        if not continue_on_error:
            raise error
        first_error = first_error or error
    if halt is not None:
        if first_error is not None:
            _log_dropped(first_error)
        if deciders is not None:
            deciders.append(halted_by)
        return halt
    if first_error is not None:
        raise first_error
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
    first_error: CallbackError | None = None
    resolved = callbacks if type(callbacks) is Callbacks else Callbacks.of(callbacks)
    try:
        impls = resolved._hooks[hook]
    except KeyError:
        raise unknown_hook(hook) from None
    for fn, is_async, owner in impls:
        try:
            output = (await fn(result, ctx)) if is_async else fn(result, ctx)
        except Exception as e:
            # `result` is still the previous output: it is not threaded on.
            error = hook_raised(owner, hook, e)
            if not continue_on_error:
                raise error from e
            first_error = first_error or error
        else:
            if output is not result:
                if deciders is not None:
                    deciders.append(owner)
                result = output
    if first_error is not None:
        raise first_error
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
    first_error: CallbackError | None = None
    resolved = callbacks if type(callbacks) is Callbacks else Callbacks.of(callbacks)
    try:
        impls = resolved._hooks[hook]
    except KeyError:
        raise unknown_hook(hook) from None
    for fn, is_async, owner in impls:
        try:
            result = (await fn(error, ctx)) if is_async else fn(error, ctx)
        except Exception as e:
            failure = hook_raised(owner, hook, e)
        else:
            cls = type(result)
            if cls is Raise:
                if not isinstance(result.error, Exception):
                    failure = bad_result(owner, hook, result, "Raise of an Exception")
                else:
                    error = result.error
                    continue
            elif cls is Retry or cls is Fallback:
                if first_error is not None:
                    _log_dropped(first_error)
                if deciders is not None:
                    deciders.append(owner)
                return result  # type: ignore[no-any-return]  # checked: a Retry or a Fallback
            else:
                failure = bad_result(owner, hook, result, "Retry, Fallback or Raise")
        failure.__context__ = error
        if not continue_on_error:
            raise failure
        first_error = first_error or failure
    if first_error is not None:
        raise first_error
    return Raise(error)
